// lower-blocks: replaces every block by the plain statements it stands for, the form code
// generation takes.
//
// Course module 4. Blocks are what schedules work on: named, with iteration variables
// bound to the loops around them, a predicate, an init for reductions and buffers of their
// own. Once the schedule is done they have served their purpose, and each becomes:
//   - its body, with every iteration variable replaced by its binding;
//   - preceded, for a reduction, by its init under `if (all reduction bindings == 0)`
//     (the interpreter's rule: init runs at the first step of the reduction);
//   - inside an Allocate for each of its alloc_buffers (outermost first);
//   - under `if (predicate)` when it has one.
// The buffer regions (reads, writes) are dropped: nothing after the schedule needs them.
// Blocks inside blocks are lowered too, the outer first.
//
// Invariant: the function computes the same results (given that, as the verifier and the
// interpreter require, every binding lies within its iteration variable's extent); it has
// no Block afterwards, and still verifies.
//
//   before:  for i in 0..4 { for k in 0..8 {
//              block S(vi = spatial(4) i, vk = reduce(8) k) {
//                init { S[vi] = 0.0 }
//                S[vi] = S[vi] + A[vi, vk] } } }
//   after:   for i in 0..4 { for k in 0..8 {
//              if (k == 0) { S[i] = 0.0 }
//              S[i] = S[i] + A[i, k] } }
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#pragma once

#include "minic/ir/loop/stmt.h"

namespace minic::loop {

PrimFunc lower_blocks(PrimFunc func);

}  // namespace minic::loop
