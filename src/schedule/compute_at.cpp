// compute_at: move a producer block under a loop of its consumer, computing in each
// iteration of that loop only the part of its output the consumer needs there.
//
// Course module 4. The step that makes a staged tile (cache_read) a tile: the copy of A
// moves under the tile loop of the GEMM and copies 32 rows instead of all of A.
//
//   Before                                    After compute_at(f, "A_shared", i.0)
//   for ax0 in 0..64 {                        for i.0 in 0..2 {
//     for ax1 in 0..32 {                        for ax0 in 0..32 {
//       block A_shared(v0 = spatial(64) ax0,      for ax1 in 0..32 {
//                      v1 = spatial(32) ax1) {      block A_shared(v0 = spatial(64)
//         A_shared[v0, v1] = A[v0, v1]                  i.0 * 32 + ax0, v1 = spatial(32) ax1)
//   for i.0 in 0..2 {                           for i.1 in 0..32 {
//     for i.1 in 0..32 {                          for j in 0..48 {
//       for j in 0..48 {                            for k in 0..32 {
//         for k in 0..32 {                            block C(vi = spatial(64) i.0 * 32 + i.1,
//           block C(vi = spatial(64)                  ...) { ... A_shared[vi, vk] ... }
//                   i.0 * 32 + i.1, ...) {
//             ... A_shared[vi, vk] ...
//
// Preconditions (each failure names the block, the loop and the reason):
//   - the producer's loops hold it alone and sit in one sequence with the statement that
//     holds `loop`, before it (they are siblings);
//   - its body is one store B[v...] = expr (no loops or branches of its own), each index a
//     distinct spatial iteration variable and every spatial variable used: each iteration
//     writes one element, and the region the consumers need maps straight back to
//     iteration ranges; its reduction variables (if any) are computed whole;
//   - B is not a parameter, the producer is its only writer, and every block that reads B
//     is under `loop` (an element not needed there is no longer computed);
//   - the producer does not read B, unless it is a reduction reading B at the element it
//     writes (its init restarts it, so computing an element again gives the same value);
//   - its predicate (if any) only guards its domain;
//   - no block between the producer and `loop`, or in the statement that holds `loop`,
//     writes a buffer the producer reads (it would read something else after the move).
//
// Algorithm:
//   1. check the preconditions;
//   2. the region of B the blocks under `loop` read per iteration of `loop` (region.h),
//      in terms of `loop` and the loops above it;
//   3. regenerate the producer's loops: each spatial variable runs over its dimension of
//      that region, each reduction variable over its whole extent, with a predicate where
//      the region could leave the domain (regenerate_nest);
//   4. remove the old nest; put the new one first in `loop`'s body.
#include "minic/schedule/primitives.h"

#include "block_edit.h"
#include "loop_tree.h"
#include "region.h"

#include "minic/ir/loop/printer.h"
#include "minic/support/error.h"

namespace minic::schedule {

void compute_at(PrimFunc& func, const std::string& block_name, const Expr& loop_var) {
  constexpr const char* kPrimitive = "compute_at";
  NestMove move = locate_nest_move(func, block_name, loop_var, kPrimitive);
  const std::vector<Stmt>& path = move.path;
  const std::vector<Stmt>& loop_stmts = move.loop_path;
  const std::vector<Stmt>& nest_path = move.nest_path;
  const SeqSiblings* siblings = &move.siblings;
  const size_t root = move.root;
  const loop::Block& block = *path.back().as<loop::Block>();
  const loop::For& loop = *loop_stmts.back().as<loop::For>();
  std::string loop_text = loop_name(loop_var);
  if (siblings->b_position < siblings->a_position) {
    fail("{}: loop {} comes before block {}; use reverse_compute_at to move a consumer",
         kPrimitive, loop_text, block_name);
  }

  // The producer: one store of one element per iteration.
  const auto* store = block.body.as<loop::Store>();
  if (!store) fail("{}: block {} is not one store (B[v...] = expr)", kPrimitive, block_name);
  const loop::Buffer& buffer = store->buffer;
  std::optional<std::vector<size_t>> positions = iter_var_positions(block, store->indices);
  size_t spatial_count = 0;
  for (const loop::IterVar& iter : block.iter_vars) {
    spatial_count += iter.kind == loop::IterKind::spatial ? 1 : 0;
  }
  bool one_element = positions && positions->size() == spatial_count;
  for (size_t position : positions.value_or(std::vector<size_t>{})) {
    one_element = one_element && block.iter_vars[position].kind == loop::IterKind::spatial;
  }
  if (!one_element) {
    fail("{}: block {} stores to {} at indices that are not its spatial iteration variables, "
         "each once", kPrimitive, block_name, buffer->name);
  }
  if (is_param(func, buffer.get())) {
    fail("{}: block {} writes {}, a parameter of @{}; all of an output must be computed",
         kPrimitive, block_name, buffer->name, func.name);
  }
  BufferUse own = block_buffer_use(block);
  if (own.writes.size() != 1) {
    fail("{}: block {} writes more than one buffer", kPrimitive, block_name);
  }
  if (own.reads_buffer(buffer.get()) && !block.init) {
    fail("{}: block {} reads {}, the buffer it writes, without an init; computing an "
         "element twice would change it", kPrimitive, block_name, buffer->name);
  }
  for (const Expr& condition : conjuncts(block.predicate)) {
    if (!is_domain_guard(block, condition)) {
      fail("{}: block {} has the predicate {}, which is more than a guard of its domain",
           kPrimitive, block_name, loop::print_expr(condition));
    }
  }

  // Who else uses B, and who writes what the producer reads.
  auto between = [&](const std::vector<Stmt>& other) {
    std::optional<SeqSiblings> place = seq_siblings(nest_path, other);
    return place && place->index == siblings->index &&
           place->b_position > siblings->a_position && place->b_position <= siblings->b_position;
  };
  for (const std::vector<Stmt>& other_path : all_block_paths(func.body)) {
    const loop::Block& other = *other_path.back().as<loop::Block>();
    if (&other == &block) continue;
    BufferUse use = block_buffer_use(other);
    if (use.writes_buffer(buffer.get())) {
      fail("{}: block {} also writes {}", kPrimitive, other.name, buffer->name);
    }
    if (use.reads_buffer(buffer.get()) && !passes_through(other_path, loop_stmts.back())) {
      fail("{}: block {} reads {} outside loop {}", kPrimitive, other.name, buffer->name,
           loop_text);
    }
    for (const BufferNode* input : own.reads) {
      if (input != buffer.get() && use.writes_buffer(input) && between(other_path)) {
        fail("{}: block {} writes {}, which block {} reads; moving {} under loop {} would "
             "change what it reads", kPrimitive, other.name, input->name, block_name,
             block_name, loop_text);
      }
    }
  }

  LoopScope fixed = scope_of_path(loop_stmts, kPrimitive);
  std::optional<Region> region = accessed_region(loop.body, buffer.get(), AccessKind::load, fixed,
                                                 kPrimitive);
  if (!region) {
    fail("{}: no block under loop {} reads {}, the output of block {}", kPrimitive, loop_text,
         buffer->name, block_name);
  }
  std::vector<std::optional<DimRange>> ranges(block.iter_vars.size());
  for (size_t d = 0; d < positions->size(); ++d) ranges[(*positions)[d]] = (*region)[d];
  Stmt nest = regenerate_nest(block, ranges, fixed);

  Stmt new_loop = loop::For::make(loop.var, loop.min, loop.extent, loop.for_kind,
                                  prepend_stmt(loop.body, nest), loop.thread_axis,
                                  loop.annotations);
  Stmt body = replace_stmt(func.body, path[root], Stmt());
  body = replace_stmt(body, loop_stmts.back(), new_loop);
  commit_body(func, body, kPrimitive);
}

}  // namespace minic::schedule
