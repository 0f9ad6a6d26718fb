// The GPU GEMM rule: shared-memory tiles and register tiles for C = A x B (SIMT, fp32).
//
// Course module 6. One output per thread reads a row of A and a column of B for every
// element of C: K loads per multiply-add, all from global memory. The classic CUDA GEMM
// cuts that in two steps, both written here with schedule primitives:
//
//   register tile   each thread computes TM x TN outputs (4 x 4, or 2 or 1 on a side
//                   where the extent is not a multiple of 64 or 32), accumulated in a local
//                   buffer (registers: cache_write "local"), so each value it loads is
//                   used TM or TN times;
//   shared tiles    the 16 x 16 threads of a block compute a (16 TM) x (16 TN) tile of C;
//                   for each step of BK = 16 along k they first copy the A tile
//                   [16 TM, BK] and the B tile [BK, 16 TN] into shared memory together
//                   (cache_read "shared", compute_at under the k-tile loop, the copy's
//                   loops split by 16 and bound to the same threadIdx axes: each thread
//                   copies its share), then read them from there.
//
// The loops of C[i, j] += A[i, k] * B[k, j] become
//   blockIdx.y i.0   blockIdx.x j.0   threadIdx.y i.1   threadIdx.x j.1
//     zero the accumulator (decompose_reduction)
//     for k.0: copy the A tile, copy the B tile (all threads); for k.1, i.2, j.2 (unrolled):
//       acc[i.2, j.2] += A_shared[...] * B_shared[...]
//     copy the accumulator to C (reverse_compute_at)
// with i = (i.0 * 16 + i.1) * TM + i.2: a thread's rows (and columns) are neighbours, so
// that compact-buffers shrinks its accumulator to TM x TN registers. The loop passes then
// shrink the shared buffers to the tiles (compact-buffers: one copy per thread block,
// reused in each k step) and add the barriers between the copies and their use
// (insert-barriers). Leading spatial loops (a batch) are fused onto blockIdx.z.
//
// The rule takes a multiply-accumulate block with one reduction loop whose multiplicands
// are both matrices (or batches of them) and whose row, column and reduction extents are
// multiples of 16; anything else is refused, and the next rule of gpu_default.cpp tries.
//
// Chapter: docs/module6-cuda.md#the-gemm-rule
#include "gpu_rules.h"

#include "minic/schedule/block_roles.h"
#include "minic/schedule/primitives.h"
#include "minic/support/error.h"

namespace minic::schedule {
namespace {

constexpr int64_t kThreadRows = 16;  // threadIdx.y
constexpr int64_t kThreadCols = 16;  // threadIdx.x
constexpr int64_t kRegisterTile = 4;  // the largest TM, TN
constexpr int64_t kTileK = 16;       // BK: the A tile's columns, the B tile's rows

// The largest of register_tile, register_tile / 2, ..., 1 that makes `threads` x it
// divide `extent` (0 if even 1 does not).
int64_t thread_tile(int64_t extent, int64_t threads) {
  for (int64_t tile = kRegisterTile; tile >= 1; tile /= 2) {
    if (extent % (threads * tile) == 0) return tile;
  }
  return 0;
}

// The copy block `fetch` (a cache_read moved under loop `k_outer`) spread over the
// block's threads: its two loops (the tile's rows and columns, multiples of 16) split by
// 16 and bound to threadIdx.y and threadIdx.x, so each thread copies every 16th row and
// column of the tile, and the 16 threads of a half-warp read 16 neighbours in memory.
void copy_together(Schedule& sch, const BlockRef& fetch, const LoopRef& k_outer) {
  std::vector<LoopRef> own = loops_below(sch, fetch, k_outer);
  if (own.size() != 2) fail("the tile copy does not have two loops");
  std::vector<LoopRef> rows = sch.split(own[0], {-1, kThreadRows});
  std::vector<LoopRef> cols = sch.split(own[1], {-1, kThreadCols});
  sch.reorder({rows[0], cols[0], rows[1], cols[1]});
  sch.bind(rows[1], "threadIdx.y");
  sch.bind(cols[1], "threadIdx.x");
}

}  // namespace

void schedule_gpu_gemm(Schedule& sch, const BlockRef& block_ref, const LoopRoles& roles) {
  const loop::Block& block = get_block(sch.func(), sch.block_name(block_ref.var));
  Operands operands = multiplicands(block);
  if (!operands.rows || roles.spatial.size() < 2 || roles.reduce.size() != 1) {
    fail("not a multiply-accumulate with one reduction loop");
  }
  if (operands.rows->buffer->rank() < 2 || operands.columns->buffer->rank() < 2) {
    fail("a multiplicand is not a matrix");
  }
  LoopRef i = roles.spatial[roles.spatial.size() - 2];
  LoopRef j = roles.spatial.back();
  std::optional<LoopRef> rows = row_loop(sch, block, roles, operands);
  if (!rows || !sch.loop_var(rows->var).same_as(sch.loop_var(i.var))) {
    fail("the rows operand is not indexed by the row loop");
  }
  int64_t tm = thread_tile(extent_of(sch, i), kThreadRows);
  int64_t tn = thread_tile(extent_of(sch, j), kThreadCols);
  if (tm == 0 || tn == 0) fail("the rows and columns of C are not multiples of 16");
  LoopRef k = roles.reduce[0];
  if (extent_of(sch, k) % kTileK != 0) fail("the reduction is not a multiple of 16");
  int rows_read = read_index(block, operands.rows);
  int columns_read = read_index(block, operands.columns);

  // The thread's tile of C accumulates in registers, copied out once at the end.
  BlockRef copy = sch.cache_write(block_ref, 0, "local");
  std::vector<LoopRef> i_parts = sch.split(i, {-1, kThreadRows, tm});
  std::vector<LoopRef> j_parts = sch.split(j, {-1, kThreadCols, tn});
  std::vector<LoopRef> k_parts = sch.split(k, {-1, kTileK});
  std::vector<LoopRef> batch(roles.spatial.begin(), roles.spatial.end() - 2);
  std::vector<LoopRef> order = batch;
  for (const LoopRef& loop : {i_parts[0], j_parts[0], i_parts[1], j_parts[1], k_parts[0],
                              k_parts[1], i_parts[2], j_parts[2]}) {
    order.push_back(loop);
  }
  sch.reorder(order);
  if (!batch.empty()) sch.bind(batch.size() == 1 ? batch[0] : sch.fuse(batch), "blockIdx.z");
  sch.bind(i_parts[0], "blockIdx.y");
  sch.bind(j_parts[0], "blockIdx.x");
  sch.bind(i_parts[1], "threadIdx.y");
  sch.bind(j_parts[1], "threadIdx.x");
  sch.reverse_compute_at(copy, j_parts[1]);

  // The tiles of A and B, copied into shared memory by all the threads at each k step.
  BlockRef a_tile = sch.cache_read(block_ref, rows_read, "shared");
  BlockRef b_tile = sch.cache_read(block_ref, columns_read, "shared");
  for (const BlockRef& tile : {a_tile, b_tile}) {
    sch.compute_at(tile, k_parts[0]);
    copy_together(sch, tile, k_parts[0]);
  }

  BlockRef init = sch.decompose_reduction(block_ref, k_parts[0]);
  sch.unroll(k_parts[1]);
  sch.unroll(i_parts[2]);
  sch.unroll(j_parts[2]);
  for (const BlockRef& tile_block : {init, copy}) {
    for (const LoopRef& loop : loops_below(sch, tile_block, j_parts[1])) sch.unroll(loop);
  }
}

}  // namespace minic::schedule
