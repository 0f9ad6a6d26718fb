// unroll-loops: every loop marked `unrolled` with constant bounds becomes copies of its
// body, one per iteration.
//
// Course module 4. The schedule primitive unroll only marks a loop; this pass does the
// unrolling, so that the copies can be simplified and scheduled by the compiler one by one
// (registers for small accumulators, no loop counter). Copy k of the body has the loop
// variable replaced by `min + k`. Loops inside the body are unrolled first, so nested
// unrolled loops unroll completely.
//
// A loop of more than kMaxUnrollCopies (64) iterations stays a loop, still marked
// unrolled: copying it would make the code large for little gain, and code generation may
// still ask the compiler to unroll it. A loop whose bounds are not constants stays too.
//
// Invariant: the same statements run in the same order; the function still verifies.
//
//   before:  unrolled for j in 0..3 { B[j] = A[j] * 2.0 }
//   after:   B[0] = A[0] * 2.0
//            B[1] = A[1] * 2.0
//            B[2] = A[2] * 2.0
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#pragma once

#include "minic/ir/loop/stmt.h"

namespace minic::loop {

// The most copies unroll-loops makes of one loop's body.
inline constexpr int64_t kMaxUnrollCopies = 64;

PrimFunc unroll_loops(PrimFunc func);

}  // namespace minic::loop
