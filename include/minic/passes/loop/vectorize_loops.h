// vectorize-loops: vectorized loops become vector expressions (Ramp, Broadcast).
//
// Course module 4 (vectorisation). A schedule marks a loop `vectorized`; this pass does the
// vectorising the loop IR can show: the loop of constant extent N is replaced by its body
// run once on N lanes. The loop variable becomes ramp(min, 1, N), each expression that
// depends on it an N-lane vector, and each that does not stays scalar (broadcast where it
// meets a vector). Index arithmetic stays affine: i * 8 + ramp(0, 1, 8) is
// ramp(i * 8, 1, 8), which the LLVM backend turns into one vector load or store.
//
//   vectorized for j in 0..8 {                    Z[ramp(i * 8, 1, 8)] =
//     block Z(v = spatial(64) i * 8 + j) {   →      X[ramp(i * 8, 1, 8)] * broadcast(2.0, 8)
//       Z[v] = X[v] * 2.0
//     }
//   }
//
// The blocks inside the loop are inlined on the way (their iteration variables replaced by
// their bindings; a predicate or init whose condition does not depend on the loop becomes
// an `if`). A loop whose body does not allow it stays a vectorized loop, which the LLVM
// backend hands to LLVM's loop vectoriser (llvm.loop.vectorize metadata). The body must
// then: hold only stores, ifs on conditions that do not depend on the loop, and blocks;
// index every store with a ramp of nonzero constant stride in some dimension, and every
// load and store only with affine indices (ramps) where they depend on the loop; read a
// buffer it writes only at the very indices it writes it (so lanes never depend on each
// other); and not select between loads on a condition that depends on the loop.
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#pragma once

#include "minic/ir/loop/stmt.h"

namespace minic::loop {

PrimFunc vectorize_loops(PrimFunc func);

}  // namespace minic::loop
