// Default schedules: what each kernel gets when nothing was tuned for it.
//
// Course module 4. The rules (src/schedule/rules/) look at a lowered kernel's blocks --
// which iteration variables are spatial, which reduce, which buffers they read -- and apply
// schedule primitives (primitives.h) that are sound for any shape: parallel outer loops,
// vectorised inner loops, and, for GEMM-like and convolution kernels, multi-level tiling
// with an accumulator in local memory. Every rule goes through a Schedule, so the result
// is also a trace, printable and replayable like a tuned one. The tile sizes are the
// target's: vector tiles of its vector registers' lanes, register tiles that fit them.
//
// For a CUDA target the rules are those of src/schedule/rules/gpu_default.cpp: every
// kernel's output elements spread over thread blocks.
//
// Chapter: docs/module4-schedules.md#4-the-default-cpu-schedule
#pragma once

#include "minic/ir/loop/stmt.h"
#include "minic/schedule/trace.h"
#include "minic/target/target.h"

namespace minic::schedule {

// The kernel with its default schedule for `target` (a CPU target) applied.
loop::PrimFunc default_cpu_schedule(loop::PrimFunc func, const Target& target);

// The trace default_cpu_schedule applies to `func` (empty when no rule applies).
Trace default_cpu_trace(const loop::PrimFunc& func, const Target& target);

// The kernel with the default GPU schedule (src/schedule/rules/gpu_default.cpp) for
// `target`, a CUDA target: one thread per output element, 256 threads a block.
loop::PrimFunc default_gpu_schedule(loop::PrimFunc func, const Target& target);
Trace default_gpu_trace(const loop::PrimFunc& func, const Target& target);

// The default schedule for `target`, whatever its kind: the GPU rules for a CUDA target,
// the CPU rules otherwise.
loop::PrimFunc default_schedule(loop::PrimFunc func, const Target& target);
Trace default_trace(const loop::PrimFunc& func, const Target& target);

}  // namespace minic::schedule
