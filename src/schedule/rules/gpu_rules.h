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

}  // namespace minic::schedule
