// The CPU's attention rule, beside the default rules of cpu_default.cpp. Private to
// src/schedule/rules. Course module 4.
//
// Chapter: docs/module4-schedules.md#9-fused-attention
#pragma once

#include "minic/schedule/schedule.h"
#include "minic/target/target.h"

namespace minic::schedule {

// Schedules a kernel of minic.FusedAttention (its six stages, src/ops/fused_attention.cpp)
// as the attention rule of cpu_attention.cpp does, and returns true; returns false, the
// schedule untouched, for any other kernel or where a primitive refuses a step.
bool schedule_attention(Schedule& sch, const Target& target);

}  // namespace minic::schedule
