// The CPU rules beside the default one (cpu_default.cpp), each for one kind of block.
// Private to src/schedule/rules. Course module 4.
//
// Chapter: docs/module4-schedules.md#4-the-default-cpu-schedule
#pragma once

#include "minic/schedule/block_roles.h"
#include "minic/schedule/schedule.h"
#include "minic/target/target.h"

namespace minic::schedule {

// The blocked convolution rule (cpu_conv.cpp), for a multiply-accumulate whose innermost
// output axis is one vector of channels that the weights hold too (a convolution in the
// blocked layout NCHWc, src/ops/conv_nchwc.cpp): a register tile of T positions by U
// channel vectors. Fails (an Error, the schedule half changed: apply it to a copy) where
// the block has no such shape.
void schedule_cpu_blocked_conv(Schedule& sch, const BlockRef& block, const LoopRoles& roles,
                               const Target& target);

}  // namespace minic::schedule
