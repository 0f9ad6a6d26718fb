// remove-no-ops: removes statements that do nothing.
//
// Course module 4. Other passes leave such statements behind (a loop whose every
// iteration was partitioned away, an `evaluate 0` where an `if (false)` was), and a
// student's hand-written kernel may hold some. Removed:
//   - loops of a constant extent <= 0, and loops whose body does nothing;
//   - a store of a buffer's own element back to it: `A[i] = A[i]`;
//   - an `if` whose branches both do nothing (`if (c) { } else { B }` becomes `if (!c) B`);
//   - an Evaluate of a pure expression (anything but a barrier);
//   - an Allocate whose body does nothing, and one whose buffer its body never uses
//     (it becomes its body);
//   - a block whose body and init do nothing;
//   - statements that do nothing, from sequences.
// A function whose whole body does nothing keeps one `evaluate 0` (a function has a body).
//
// Invariant: same results; the function still verifies.
//
//   before:  for i in 0..0 { A[i] = 1.0 }
//            for i in 0..4 { A[i] = A[i]  evaluate i * 2 }
//            B[0] = 1.0
//   after:   B[0] = 1.0
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#pragma once

#include "minic/ir/loop/stmt.h"

namespace minic::loop {

PrimFunc remove_no_ops(PrimFunc func);

}  // namespace minic::loop
