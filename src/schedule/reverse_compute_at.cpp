// reverse_compute_at: move a consumer block under a loop of its producer, consuming in
// each iteration of that loop the part of the producer's output written there.
//
// Course module 4. After cache_write, the copy-out of the accumulator runs once over the
// whole output; moved under the producer's tile loop it copies each tile as soon as it is
// done, so the accumulator tile stays in registers or cache.
//
//   Before                                   After reverse_compute_at(f, "C_local", i.0)
//   for i.0 in 0..2 {                        for i.0 in 0..2 {
//     for i.1 in 0..32 {                       for i.1 in 0..32 {
//       ... block C(vi = spatial(64)             ... block C(...) { C_local[vi, vj] = ... }
//           i.0 * 32 + i.1, ...) {             }
//             C_local[vi, vj] = ...            for ax0 in 0..32 {
//   for ax0 in 0..64 {                           for ax1 in 0..48 {
//     for ax1 in 0..48 {                           block C_local(v0 = spatial(64)
//       block C_local(v0 = spatial(64) ax0,            i.0 * 32 + ax0, v1 = spatial(48) ax1) {
//                     v1 = spatial(48) ax1) {        C[v0, v1] = C_local[v0, v1]
//         C[v0, v1] = C_local[v0, v1]
//
// Preconditions (each failure names the block, the loop and the reason):
//   - the consumer's loops hold it alone and sit in one sequence with the statement that
//     holds `loop`, after it (they are siblings);
//   - the consumer is not a reduction and does not read what it writes (computing an
//     element again, as overlapping regions may, gives the same value);
//   - of what it reads, exactly one buffer B is written in the statement that holds
//     `loop`, only under `loop`; it reads B only at indices that are its iteration
//     variables (B[v0, v1], B[v1, v0]); its predicate (if any) only guards its domain;
//   - nothing in the statement that holds `loop`, or between it and the consumer, writes
//     another buffer the consumer reads or touches what the consumer writes;
//   - the regions written in all the iterations of `loop` together cover the consumer's
//     whole domain (proven by enumeration, loop::covers), so every element is still
//     computed.
// Why that is enough: each element the consumer computes is computed again in the
// iteration that last writes its inputs (the written region of an iteration always
// contains what it writes), after that write, so its final value is the one computed from
// the final inputs.
//
// Algorithm:
//   1. check the preconditions;
//   2. the region of B the blocks under `loop` write per iteration of `loop` (region.h);
//   3. regenerate the consumer's loops: each iteration variable that indexes B runs over
//      the region of its dimension(s), the others over their whole extent (regenerate_nest);
//   4. remove the old nest; put the new one last in `loop`'s body.
#include "minic/schedule/primitives.h"

#include "block_edit.h"
#include "loop_tree.h"
#include "region.h"

#include "minic/ir/loop/printer.h"
#include "minic/support/error.h"

namespace minic::schedule {
namespace {

constexpr const char* kPrimitive = "reverse_compute_at";

// The iteration variable positions of every load of `buffer` in the block; fails if an
// index is not one iteration variable.
std::vector<std::vector<size_t>> load_positions(const loop::Block& block,
                                                const BufferNode* buffer) {
  std::vector<std::vector<size_t>> result;
  for (const loop::Access& load :
       loop::accesses_of(loop::collect_accesses(block.body), buffer, AccessKind::load)) {
    std::optional<std::vector<size_t>> positions = iter_var_positions(block, load.indices);
    if (!positions) {
      fail("{}: block {} reads {} at indices that are not its iteration variables",
           kPrimitive, block.name, buffer->name);
    }
    result.push_back(*positions);
  }
  return result;
}

}  // namespace

void reverse_compute_at(PrimFunc& func, const std::string& block_name, const Expr& loop_var) {
  NestMove move = locate_nest_move(func, block_name, loop_var, kPrimitive);
  const std::vector<Stmt>& path = move.path;
  const std::vector<Stmt>& loop_stmts = move.loop_path;
  const std::vector<Stmt>& nest_path = move.nest_path;
  const SeqSiblings* siblings = &move.siblings;
  const size_t root = move.root;
  const loop::Block& block = *path.back().as<loop::Block>();
  const loop::For& loop = *loop_stmts.back().as<loop::For>();
  std::string loop_text = loop_name(loop_var);
  if (siblings->b_position > siblings->a_position) {
    fail("{}: loop {} comes after block {}; use compute_at to move a producer", kPrimitive,
         loop_text, block_name);
  }
  for (const loop::IterVar& iter : block.iter_vars) {
    if (iter.kind == loop::IterKind::reduce) {
      fail("{}: block {} is a reduction (variable {})", kPrimitive, block_name,
           iter.var.as<loop::Var>()->name);
    }
  }
  BufferUse own = block_buffer_use(block);
  for (const BufferNode* written : own.writes) {
    if (own.reads_buffer(written)) {
      fail("{}: block {} reads {}, which it writes; computing an element twice would change "
           "it", kPrimitive, block_name, written->name);
    }
  }
  for (const Expr& condition : conjuncts(block.predicate)) {
    if (!is_domain_guard(block, condition)) {
      fail("{}: block {} has the predicate {}, which is more than a guard of its domain",
           kPrimitive, block_name, loop::print_expr(condition));
    }
  }

  // The producer buffer, and what else runs between the producer and the consumer.
  const BufferNode* produced = nullptr;
  for (const std::vector<Stmt>& other_path : all_block_paths(func.body)) {
    const loop::Block& other = *other_path.back().as<loop::Block>();
    std::optional<SeqSiblings> place = seq_siblings(nest_path, other_path);
    bool in_loop_stmt = place && place->index == siblings->index &&
                        place->b_position == siblings->b_position;
    bool between = place && place->index == siblings->index &&
                   place->b_position > siblings->b_position &&
                   place->b_position < siblings->a_position;
    if (&other == &block || (!in_loop_stmt && !between)) continue;
    BufferUse use = block_buffer_use(other);
    for (const BufferNode* written : own.writes) {
      if (use.touches(written)) {
        fail("{}: block {} uses {}, which block {} writes", kPrimitive, other.name,
             written->name, block_name);
      }
    }
    for (const BufferNode* read : own.reads) {
      if (!use.writes_buffer(read)) continue;
      if (!in_loop_stmt || !passes_through(other_path, loop_stmts.back())) {
        fail("{}: block {} writes {}, which block {} reads, outside loop {}", kPrimitive,
             other.name, read->name, block_name, loop_text);
      }
      if (produced && produced != read) {
        fail("{}: block {} reads two buffers written under loop {}: {} and {}", kPrimitive,
             block_name, loop_text, produced->name, read->name);
      }
      produced = read;
    }
  }
  if (!produced) {
    fail("{}: no block under loop {} writes a buffer that block {} reads", kPrimitive,
         loop_text, block_name);
  }
  const BufferNode* buffer = produced;

  LoopScope fixed = scope_of_path(loop_stmts, kPrimitive);
  std::optional<Region> region = accessed_region(loop.body, buffer, AccessKind::store, fixed,
                                                 kPrimitive);
  if (!region) {
    fail("{}: nothing under loop {} stores to {}", kPrimitive, loop_text, buffer->name);
  }
  std::vector<std::optional<DimRange>> ranges(block.iter_vars.size());
  for (const std::vector<size_t>& positions : load_positions(block, buffer)) {
    for (size_t d = 0; d < positions.size(); ++d) {
      std::optional<DimRange>& range = ranges[positions[d]];
      range = range ? unite(*range, (*region)[d], fixed) : (*region)[d];
    }
  }
  Region used;
  std::vector<int64_t> extents;
  for (size_t k = 0; k < ranges.size(); ++k) {
    if (!ranges[k]) continue;
    used.push_back(*ranges[k]);
    extents.push_back(block.iter_vars[k].extent);
  }
  if (!covers(used, extents, fixed)) {
    fail("{}: cannot prove that the regions of {} written in the iterations of loop {} "
         "cover every iteration of block {}", kPrimitive, buffer->name, loop_text, block_name);
  }
  Stmt nest = regenerate_nest(block, ranges, fixed);

  Stmt new_loop = loop::For::make(loop.var, loop.min, loop.extent, loop.for_kind,
                                  append_stmt(loop.body, nest), loop.thread_axis,
                                  loop.annotations);
  Stmt body = replace_stmt(func.body, path[root], Stmt());
  body = replace_stmt(body, loop_stmts.back(), new_loop);
  commit_body(func, body, kPrimitive);
}

}  // namespace minic::schedule
