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
// Preconditions (each a named check of preconditions.h, or of this file, whose refusal
// names the block, the loop and the reason):
//   - the consumer's loops hold it alone and sit in one sequence with the statement that
//     holds `loop`, after it (they are siblings);
//   - computing an element again, as overlapping regions may, gives the same value: the
//     consumer does not read what it writes, or it is a reduction that reads its output
//     only at the element it stores (its init restarts it), each reduction variable then
//     running over its whole extent in the new nest; its predicate (if any) only guards
//     its domain;
//   - of what it reads, exactly one buffer B is written in the statement that holds
//     `loop`, only under `loop`; nothing in the statement that holds `loop`, or between it
//     and the consumer, writes another buffer the consumer reads or touches what the
//     consumer writes;
//   - something under `loop` stores to B, and the consumer reads B only at indices that
//     are its iteration variables (B[v0, v1], B[v1, v0]);
//   - the regions written in all the iterations of `loop` together cover the consumer's
//     whole domain (proven by enumeration, loop::covers), so every element is still
//     computed.
// Why that is enough: each element the consumer computes is computed again in the
// iteration that last writes its inputs (the written region of an iteration always
// contains what it writes), after that write, so its final value is the one computed from
// the final inputs.
//
// Algorithm:
//   1. check the consumer and what runs between the loop and it; find B;
//   2. the region of B the blocks under `loop` write per iteration of `loop` (region.h);
//   3. the range of each iteration variable that indexes B: the region of its
//      dimension(s); check that the ranges cover the consumer's domain;
//   4. regenerate the consumer's loops over those ranges, the other variables over their
//      whole extent (regenerate_nest); remove the old nest and put the new one last in
//      `loop`'s body.
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#include "minic/schedule/primitives.h"

#include "block_edit.h"
#include "loop_tree.h"
#include "preconditions.h"
#include "region.h"

#include <fmt/format.h>

namespace minic::schedule {
namespace {

using loop::Block;

constexpr const char* kPrimitive = "reverse_compute_at";

std::string loop_text(const NestMove& move) {
  return loop_name(move.loop_path.back().as<loop::For>()->var);
}

// The consumer's nest comes after the statement that holds the loop.
Refusal nest_is_after_loop(const NestMove& move) {
  if (move.siblings.b_position < move.siblings.a_position) return std::nullopt;
  return fmt::format("loop {} comes after block {}; use compute_at to move a producer",
                     loop_text(move), move.path.back().as<Block>()->name);
}

// Sets `produced` to the one buffer the consumer reads that is written in the statement
// that holds the loop; refuses where that buffer is written outside the loop, where a
// second one is, or where a block there or between touches what the consumer writes.
Refusal has_one_input_from_loop(const PrimFunc& func, const NestMove& move,
                                const BufferNode*& produced) {
  const Block& block = *move.path.back().as<Block>();
  BufferUse own = block_buffer_use(block);
  produced = nullptr;
  for (const std::vector<Stmt>& path : all_block_paths(func.body)) {
    const Block& other = *path.back().as<Block>();
    std::optional<SeqSiblings> place = seq_siblings(move.nest_path, path);
    bool in_seq = place && place->index == move.siblings.index;
    bool in_loop_stmt = in_seq && place->b_position == move.siblings.b_position;
    bool between = in_seq && place->b_position > move.siblings.b_position &&
                   place->b_position < move.siblings.a_position;
    if (&other == &block || (!in_loop_stmt && !between)) continue;
    BufferUse use = block_buffer_use(other);
    for (const BufferNode* written : own.writes) {
      if (use.touches(written)) {
        return fmt::format("block {} uses {}, which block {} writes", other.name,
                           written->name, block.name);
      }
    }
    for (const BufferNode* read : own.reads) {
      if (!use.writes_buffer(read)) continue;
      if (!in_loop_stmt || !passes_through(path, move.loop_path.back())) {
        return fmt::format("block {} writes {}, which block {} reads, outside loop {}",
                           other.name, read->name, block.name, loop_text(move));
      }
      if (produced && produced != read) {
        return fmt::format("block {} reads two buffers written under loop {}: {} and {}",
                           block.name, loop_text(move), produced->name, read->name);
      }
      produced = read;
    }
  }
  if (produced) return std::nullopt;
  return fmt::format("no block under loop {} writes a buffer that block {} reads",
                     loop_text(move), block.name);
}

// Something under the loop stores to B.
Refusal is_written_under_loop(const std::optional<Region>& region, const NestMove& move,
                              const BufferNode* buffer) {
  if (region) return std::nullopt;
  return fmt::format("nothing under loop {} stores to {}", loop_text(move), buffer->name);
}

// Sets `ranges[k]` to the union of the regions of the dimensions of B that the consumer's
// k-th iteration variable indexes (nullopt for a variable that indexes none); refuses
// where a load of B is not at iteration variables.
// Computing an element again gives the same value (the second precondition).
Refusal recomputes_the_same(const Block& block) {
  if (!block.init) {
    if (Refusal refusal = is_not_reduction(block)) return refusal;
    return reads_no_output(block);
  }
  const auto* store = block.body.as<loop::Store>();
  const auto* init = block.init.as<loop::Store>();
  bool own_element = store && init && init->buffer == store->buffer &&
                     block_buffer_use(block).writes.size() == 1;
  for (size_t d = 0; own_element && d < init->indices.size(); ++d) {
    own_element = same_expr(init->indices[d], store->indices[d]);
  }
  if (own_element) {
    for (const loop::Access& load : loop::accesses_of(loop::collect_accesses(block.body),
                                                      store->buffer.get(), AccessKind::load)) {
      for (size_t d = 0; d < load.indices.size(); ++d) {
        own_element = own_element && same_expr(load.indices[d], store->indices[d]);
      }
    }
  }
  if (own_element) return std::nullopt;
  return fmt::format("block {} is a reduction that is not one store reading only the element "
                     "it writes", block.name);
}

// Each reduction variable runs over its whole extent (a reduction computed again whole).
Refusal reductions_run_whole(const Block& block,
                             const std::vector<std::optional<DimRange>>& ranges) {
  for (size_t k = 0; k < ranges.size(); ++k) {
    const loop::IterVar& iter = block.iter_vars[k];
    const std::optional<DimRange>& range = ranges[k];
    if (iter.kind != loop::IterKind::reduce || !range) continue;
    if (!range->base && range->lo == 0 && range->hi >= iter.extent - 1) continue;
    return fmt::format("block {}'s reduction variable {} would not run over its whole extent",
                       block.name, iter.var.as<loop::Var>()->name);
  }
  return std::nullopt;
}

Refusal loads_at_iteration_vars(const Block& block, const BufferNode* buffer,
                                const Region& region, const LoopScope& fixed,
                                std::vector<std::optional<DimRange>>& ranges) {
  ranges.assign(block.iter_vars.size(), std::nullopt);
  for (const loop::Access& load :
       loop::accesses_of(loop::collect_accesses(block.body), buffer, AccessKind::load)) {
    std::optional<std::vector<size_t>> positions = iter_var_positions(block, load.indices);
    if (!positions) {
      return fmt::format("block {} reads {} at indices that are not its iteration variables",
                         block.name, buffer->name);
    }
    for (size_t d = 0; d < positions->size(); ++d) {
      std::optional<DimRange>& range = ranges[(*positions)[d]];
      range = range ? unite(*range, region[d], fixed) : region[d];
    }
  }
  return std::nullopt;
}

// The ranges together cover every iteration of the consumer.
Refusal ranges_cover_domain(const Block& block, const std::vector<std::optional<DimRange>>& ranges,
                            const LoopScope& fixed, const NestMove& move,
                            const BufferNode* buffer) {
  Region used;
  std::vector<int64_t> extents;
  for (size_t k = 0; k < ranges.size(); ++k) {
    if (!ranges[k]) continue;
    used.push_back(*ranges[k]);
    extents.push_back(block.iter_vars[k].extent);
  }
  if (covers(used, extents, fixed)) return std::nullopt;
  return fmt::format("cannot prove that the regions of {} written in the iterations of loop {} "
                     "cover every iteration of block {}", buffer->name, loop_text(move),
                     block.name);
}

}  // namespace

void reverse_compute_at(PrimFunc& func, const std::string& block_name, const Expr& loop_var) {
  NestMove move = locate_nest_move(func, block_name, loop_var, kPrimitive);
  const Block& block = *move.path.back().as<Block>();

  // 1. The consumer, and the one buffer B it reads from the loop.
  require(kPrimitive, nest_is_after_loop(move));
  require(kPrimitive, recomputes_the_same(block));
  require(kPrimitive, guards_only_its_domain(block));
  const BufferNode* buffer = nullptr;
  require(kPrimitive, has_one_input_from_loop(func, move, buffer));

  // 2. The region of B written in one iteration of the loop.
  LoopScope fixed = scope_of_path(move.loop_path, kPrimitive);
  const loop::For& loop = *move.loop_path.back().as<loop::For>();
  std::optional<Region> region =
      accessed_region(loop.body, buffer, AccessKind::store, fixed, kPrimitive);
  require(kPrimitive, is_written_under_loop(region, move, buffer));

  // 3. The iteration ranges that read it, covering the consumer's domain.
  std::vector<std::optional<DimRange>> ranges;
  require(kPrimitive, loads_at_iteration_vars(block, buffer, *region, fixed, ranges));
  require(kPrimitive, ranges_cover_domain(block, ranges, fixed, move, buffer));
  require(kPrimitive, reductions_run_whole(block, ranges));

  // 4. The consumer's new loops, last in the loop's body.
  Stmt nest = regenerate_nest(block, ranges, fixed);
  commit_body(func, move_nest_into_loop(func, move, nest, /*at_start=*/false), kPrimitive);
}

}  // namespace minic::schedule
