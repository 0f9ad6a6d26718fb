// partition-loops: a loop whose body is guarded by a condition on the loop variable is cut
// in two: a main part where the guard always holds, without it, and the rest, with it.
//
// Course module 4. Splitting a loop of 100 iterations by 32 gives 4 x 32 iterations and a
// guard `io * 32 + ii < 100` on the block; the guard costs a compare and a branch in every
// iteration, and stops vectorisation, although only the last outer iteration needs it.
// This pass finds, for each loop with constant bounds (not bound to a GPU axis), the
// guards inside its body that use its variable (if conditions, block predicates and select
// conditions, conjunct by conjunct), and the longest first part of its range on which the
// bounds of the variables prove every such guard true (failing that, the longest last
// part; failing that, a point near the start from which they hold, for borders on both
// sides). The loop becomes two loops over the two ranges, each simplified under its own
// range (simplify.h): the guards vanish from the guard-free part, and a guard proven false
// in the rest removes what it guards. A cut is kept where the guard-free part is at least
// as long as the rest, where the rest does nothing, or where the loop is short (at most 4
// iterations: then a loop guarded in every iteration is peeled), so that a reduction's
// `if (k == 0)` is left alone. The parts are partitioned again, inside a rest only short
// loops and cuts that leave a part doing nothing, so a two-level tail splits at both
// levels while a border row is not copied again for its own borders. A loop bound directly
// to a block's iteration variable (`v = spatial(10) i`) is not cut, since the verifier
// requires it to cover the block's domain; run lower-blocks first to cut it.
//
// Invariant: the same iterations run in the same order; the function still verifies.
//
//   before:  for io in 0..4 { for ii in 0..32 {
//              if (io * 32 + ii < 100) { B[io * 32 + ii] = A[io * 32 + ii] } } }
//   after:   for io in 0..3 { for ii in 0..32 { B[io * 32 + ii] = A[io * 32 + ii] } }
//            for ii in 0..4 { B[ii + 96] = A[ii + 96] }
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#pragma once

#include "minic/ir/loop/stmt.h"

namespace minic::loop {

PrimFunc partition_loops(PrimFunc func);

}  // namespace minic::loop
