// Whether a kernel's index arithmetic fits 32-bit integers. Private to src/codegen/cuda.
//
// Course module 6. The loop IR computes indices in i64, so that CPU code never overflows.
// A GPU computes 32-bit integers natively; a 64-bit multiply takes several instructions
// and two registers per value. So a CUDA kernel declares its loop and thread variables
// `int` when every integer expression of the loop variables provably stays in int32: C
// then computes the indices in 32 bits (the immediates are ints too).
//
// The proof walks the kernel with the range of each loop variable (its loop's bounds,
// themselves bounded from the loops above) and of each block iteration variable, and
// takes the range of every integer expression that uses one (loop::bound_of), including
// every partial sum and product inside it: all must lie in [-2^31, 2^31). An index read
// from memory (a Gather's) has no range, and the kernel keeps 64-bit indices; so does
// one with vector code.
//
// Chapter: docs/module6-cuda.md#emitting-cuda-c
#pragma once

#include "minic/ir/loop/stmt.h"

namespace minic::codegen {

// True if the loop and iteration variables of `kernel` (a launch's nest) can be int32.
bool fits_int32(const loop::Stmt& kernel);

}  // namespace minic::codegen
