// The GPU rules beside the default one (gpu_default.cpp), each for one kind of block.
// Private to src/schedule/rules. Course module 6.
//
// Chapter: docs/module6-cuda.md#the-default-gpu-schedule
#pragma once

#include "minic/schedule/block_roles.h"
#include "minic/schedule/schedule.h"

namespace minic::schedule {

// The tiled GEMM rule (gpu_gemm.cpp): shared-memory tiles of A and B, a register tile of
// C per thread. Fails (an Error, the schedule half changed: apply it to a copy) where
// the block is not a GEMM it can tile.
void schedule_gpu_gemm(Schedule& sch, const BlockRef& block, const LoopRoles& roles);

// The convolution rule (gpu_conv.cpp), for any multiply-accumulate whose rows operand
// (the weights) is indexed by a spatial loop with spatial loops inside it: a register
// tile of output channels per thread, a warp over neighbouring positions. Fails like
// the GEMM rule.
void schedule_gpu_conv(Schedule& sch, const BlockRef& block, const LoopRoles& roles);

// The reduction rule (gpu_reduce.cpp): a thread block per output, its threads' partial
// results in shared memory (rfactor), summed by one thread. Fails like the GEMM rule.
void schedule_gpu_reduction(Schedule& sch, const BlockRef& block, const LoopRoles& roles);

}  // namespace minic::schedule
