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
// Preconditions (each a named check of preconditions.h, or of this file, whose refusal
// names the block, the loop and the reason):
//   - the producer's loops hold it alone and sit in one sequence with the statement that
//     holds `loop`, before it (they are siblings);
//   - its body is one store B[v...] = expr (no loops or branches of its own), each index a
//     distinct spatial iteration variable and every spatial variable used: each iteration
//     writes one element, and the region the consumers need maps straight back to
//     iteration ranges; its reduction variables (if any) are computed whole;
//   - B is not a parameter, the producer writes only B and is its only writer, and every
//     block that reads B is under `loop` (an element not needed there is no longer
//     computed);
//   - the producer does not read B, unless it is a reduction reading B at the element it
//     writes (its init restarts it, so computing an element again gives the same value);
//   - its predicate (if any) only guards its domain;
//   - no block between the producer and `loop`, or in the statement that holds `loop`,
//     writes a buffer the producer reads (it would read something else after the move);
//   - some block under `loop` reads B.
//
// Algorithm:
//   1. check the preconditions;
//   2. the region of B the blocks under `loop` read per iteration of `loop` (region.h),
//      in terms of `loop` and the loops above it; for B in shared memory, the threadIdx
//      loops above vary too: the region is what the whole thread block reads, which its
//      threads then copy together (bind the new loops to the same threadIdx axes);
//   3. regenerate the producer's loops: each spatial variable runs over its dimension of
//      that region, each reduction variable over its whole extent, with a predicate where
//      the region could leave the domain (regenerate_nest);
//   4. remove the old nest; put the new one first in `loop`'s body.
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

constexpr const char* kPrimitive = "compute_at";

// The producer's nest comes before the statement that holds the loop.
Refusal nest_is_before_loop(const NestMove& move) {
  if (move.siblings.b_position > move.siblings.a_position) return std::nullopt;
  return fmt::format("loop {} comes before block {}; use reverse_compute_at to move a "
                     "consumer", loop_name(move.loop_path.back().as<loop::For>()->var),
                     move.path.back().as<Block>()->name);
}

// The block's one store writes one element per iteration of its spatial variables.
Refusal stores_one_element(const Block& block) {
  const loop::Store& store = *block.body.as<loop::Store>();
  if (at_spatial_vars(block, store.indices)) return std::nullopt;
  return fmt::format("block {} stores to {} at indices that are not its spatial iteration "
                     "variables, each once", block.name, store.buffer->name);
}

// Computing an element again gives the same value: the block reads its output only as a
// reduction, which its init restarts.
Refusal recomputes_the_same(const Block& block) {
  const BufferNode* buffer = block.body.as<loop::Store>()->buffer.get();
  if (block.init || !block_buffer_use(block).reads_buffer(buffer)) return std::nullopt;
  return fmt::format("block {} reads {}, the buffer it writes, without an init; computing an "
                     "element twice would change it", block.name, buffer->name);
}

// Every other block that reads B is under the loop.
Refusal readers_are_under_loop(const PrimFunc& func, const NestMove& move,
                               const BufferNode* buffer) {
  for (const std::vector<Stmt>& path : all_block_paths(func.body)) {
    const Block& other = *path.back().as<Block>();
    if (path.back().same_as(move.path.back())) continue;
    if (block_buffer_use(other).reads_buffer(buffer) &&
        !passes_through(path, move.loop_path.back())) {
      return fmt::format("block {} reads {} outside loop {}", other.name, buffer->name,
                         loop_name(move.loop_path.back().as<loop::For>()->var));
    }
  }
  return std::nullopt;
}

// What the producer reads does not change between its nest and the end of the statement
// that holds the loop.
Refusal inputs_unchanged_until_loop(const PrimFunc& func, const NestMove& move) {
  std::vector<std::vector<Stmt>> between;
  for (const std::vector<Stmt>& path : all_block_paths(func.body)) {
    std::optional<SeqSiblings> place = seq_siblings(move.nest_path, path);
    if (place && place->index == move.siblings.index &&
        place->b_position > move.siblings.a_position &&
        place->b_position <= move.siblings.b_position) {
      between.push_back(path);
    }
  }
  const Block& block = *move.path.back().as<Block>();
  std::string consequence =
      fmt::format("moving {} under loop {} would change what it reads", block.name,
                  loop_name(move.loop_path.back().as<loop::For>()->var));
  return no_writer_of_inputs(block, between, block.body.as<loop::Store>()->buffer.get(),
                             consequence);
}

// Some block under the loop reads B.
Refusal is_read_under_loop(const std::optional<Region>& region, const NestMove& move,
                           const BufferNode* buffer) {
  if (region) return std::nullopt;
  return fmt::format("no block under loop {} reads {}, the output of block {}",
                     loop_name(move.loop_path.back().as<loop::For>()->var), buffer->name,
                     move.path.back().as<Block>()->name);
}

}  // namespace

void compute_at(PrimFunc& func, const std::string& block_name, const Expr& loop_var) {
  NestMove move = locate_nest_move(func, block_name, loop_var, kPrimitive);
  const Block& block = *move.path.back().as<Block>();

  // 1. The preconditions.
  require(kPrimitive, nest_is_before_loop(move));
  require(kPrimitive, is_one_store(block));
  require(kPrimitive, stores_one_element(block));
  const BufferNode* buffer = block.body.as<loop::Store>()->buffer.get();
  require(kPrimitive, is_not_parameter(func, block, buffer));
  require(kPrimitive, writes_one_buffer(block));
  require(kPrimitive, recomputes_the_same(block));
  require(kPrimitive, guards_only_its_domain(block));
  require(kPrimitive, is_only_writer(func, block, buffer));
  require(kPrimitive, readers_are_under_loop(func, move, buffer));
  require(kPrimitive, inputs_unchanged_until_loop(func, move));

  // 2. The region of B read in one iteration of the loop (by all the threads of a block,
  // for a shared B).
  LoopScope scope = scope_of_path(move.loop_path, kPrimitive);
  LoopScope fixed = scope;
  std::vector<loop::LoopAround> threads;
  if (buffer->scope == loop::MemoryScope::shared) threads = take_thread_loops(move.loop_path, fixed);
  const loop::For& loop = *move.loop_path.back().as<loop::For>();
  std::optional<Region> region =
      accessed_region(loop.body, buffer, AccessKind::load, fixed, kPrimitive, threads);
  require(kPrimitive, is_read_under_loop(region, move, buffer));

  // 3. The producer's loops over that region.
  std::vector<size_t> positions = *iter_var_positions(block, block.body.as<loop::Store>()->indices);
  std::vector<std::optional<DimRange>> ranges(block.iter_vars.size());
  for (size_t d = 0; d < positions.size(); ++d) ranges[positions[d]] = (*region)[d];
  Stmt nest = regenerate_nest(block, ranges, scope);

  // 4. The new nest first in the loop's body.
  commit_body(func, move_nest_into_loop(func, move, nest, /*at_start=*/true), kPrimitive);
}

}  // namespace minic::schedule
