// The GPU convolution rule: a register tile of output channels per thread (SIMT, fp32).
//
// Course module 6. A convolution lowered for the GPU is a multiply-accumulate over output
// channels, positions (a convolution's output rows and columns, one axis: src/lower) and
// its reduction (input channels and the kernel window): an implicit GEMM whose rows are
// the output channels (the weights' rows) and whose columns are the positions (the
// input's windows). One output per thread loads a weight and an input value for every
// multiply-add. Here each thread computes TM output channels at one position, with TM
// accumulators in registers (cache_write "local"), so each input value it loads is used
// TM times; the 32 threads of a warp take 32 neighbouring positions, so their input loads
// are coalesced and their weight loads one broadcast.
//
//   blockIdx.y oc.0   blockIdx.x p.0   threadIdx.y oc.1 (8)   threadIdx.x p.1 (32)
//     zero the accumulator (decompose_reduction)
//     for the reduction loops: for oc.2 (unrolled, TM): acc[oc.2] += W[...] * X[...]
//     copy the accumulator to the output (reverse_compute_at)
//
// with oc = (oc.0 * 8 + oc.1) * TM + oc.2, TM the largest of 4, 2, 1 that makes 8 TM
// divide the output channels; the positions take a guard where 32 does not divide them.
// The positions must be one loop, as src/lower makes them for a CUDA target (fused rows
// and columns would leave the copy-out's region unproven); the spatial loops outside the
// channels (the batch) go onto blockIdx.z. The input windows are not staged
// in shared memory: neighbouring windows overlap, and the caches serve them.
//
// Chapter: docs/module6-cuda.md#the-convolution-rule
#include "gpu_rules.h"

#include "minic/schedule/block_roles.h"
#include "minic/schedule/primitives.h"
#include "minic/support/error.h"

#include <algorithm>

namespace minic::schedule {
namespace {

constexpr int64_t kChannelThreads = 8;    // threadIdx.y
constexpr int64_t kPositionThreads = 32;  // threadIdx.x: a warp
constexpr int64_t kRegisterTile = 4;      // the largest TM

}  // namespace

void schedule_gpu_conv(Schedule& sch, const BlockRef& block_ref, const LoopRoles& roles) {
  const loop::Block& block = get_block(sch.func(), sch.block_name(block_ref.var));
  Operands operands = multiplicands(block);
  if (!operands.rows || roles.spatial.size() < 2 || roles.reduce.empty()) {
    fail("not a multiply-accumulate over rows and columns");
  }
  // The rows: the output-channel loop, which the weights depend on; the columns: the one
  // spatial loop inside it, the positions; the batch: those outside it.
  std::optional<LoopRef> row = row_loop(sch, block, roles, operands);
  if (!row) fail("the weights depend on no outer spatial loop");
  auto at = std::find_if(roles.spatial.begin(), roles.spatial.end(), [&](const LoopRef& loop) {
    return sch.loop_var(loop.var).same_as(sch.loop_var(row->var));
  });
  LoopRef rows = *at;
  std::vector<LoopRef> batch(roles.spatial.begin(), at);
  if (at + 2 != roles.spatial.end()) {
    fail("the output positions are not one loop (lowering for CUDA makes them one)");
  }
  LoopRef columns = roles.spatial.back();
  int64_t channels = extent_of(sch, rows);
  int64_t tm = kRegisterTile;
  while (tm > 1 && channels % (kChannelThreads * tm) != 0) tm /= 2;
  if (channels % (kChannelThreads * tm) != 0) fail("the output channels are not a multiple of 8");

  BlockRef copy = sch.cache_write(block_ref, 0, "local");
  std::vector<LoopRef> c_parts = sch.split(rows, {-1, kChannelThreads, tm});
  int64_t positions = extent_of(sch, columns);
  std::vector<LoopRef> p_parts =
      sch.split(columns, {-1, std::min(positions, kPositionThreads)});
  std::vector<LoopRef> order = batch;
  for (const LoopRef& loop : {c_parts[0], p_parts[0], c_parts[1], p_parts[1]}) {
    order.push_back(loop);
  }
  order.insert(order.end(), roles.reduce.begin(), roles.reduce.end());
  order.push_back(c_parts[2]);
  sch.reorder(order);
  if (!batch.empty()) sch.bind(batch.size() == 1 ? batch[0] : sch.fuse(batch), "blockIdx.z");
  sch.bind(c_parts[0], "blockIdx.y");
  sch.bind(p_parts[0], "blockIdx.x");
  sch.bind(c_parts[1], "threadIdx.y");
  sch.bind(p_parts[1], "threadIdx.x");
  sch.reverse_compute_at(copy, p_parts[1]);
  BlockRef init = sch.decompose_reduction(block_ref, roles.reduce.front());
  sch.unroll(c_parts[2]);
  for (const BlockRef& tile_block : {init, copy}) {
    for (const LoopRef& loop : loops_below(sch, tile_block, p_parts[1])) sch.unroll(loop);
  }
}

}  // namespace minic::schedule
