// What schedule primitives ask about the iterations of a loop before they change how the
// loop runs: which block variables the loop feeds, and whether two of its iterations can
// touch the same memory. Private to src/schedule.
//
// Course module 4. parallel, vectorize and bind run the iterations of a loop at once;
// reorder runs them in another order. Both are correct only if no iteration writes an
// element that another iteration reads or writes (no dependence between iterations). The
// test here is a small dependence analysis:
//
//   1. Collect every load and store under the loop, each iteration variable replaced by
//      its binding, so that every index is an expression of loop variables (the access
//      analysis, include/minic/ir/loop/access.h).
//   2. For two accesses to one buffer, at least one a store, write the element each touches
//      as its row-major offset, a linear form  c * L + (outer part) + (inner part):  L the
//      loop's variable, the outer part made of loops outside L (the same in both accesses
//      of one iteration), the inner part of loops inside L, bounded to [lo, hi].
//   3. The two accesses never meet in different iterations if their outer parts are equal,
//      both have the same c, and |c| is larger than the spread of the inner parts.
//
//   for i.0 in 0..16 {                      C[vi] with vi = i.0 * 8 + i.1:
//     for i.1 in 0..8 {                     offset = 8 * i.0 + i.1, inner part in [0, 7];
//       block C(vi = spatial(128) i.0 * 8 + i.1) { C[vi] = A[vi] * 2.0 }
//                                           8 > 7: iterations of i.0 are independent.
//
// Before step 3 the linear form undoes fuse's digit arithmetic: a * floordiv(x, m) plus
// b * floormod(x, m) with a == b * m is b * x (and likewise for a floormod(floordiv(x, m),
// n) digit). Step 2 looks at an access in more than one way: the offset in the whole
// buffer, and the offset within each run of neighbouring indices (each index alone among
// them), as two accesses that differ there touch different elements. A run is what a tile
// of positions written at their digits, Y[c, floordiv(p, 56), floormod(p, 56)], needs: p
// moves with the loop, c spreads the whole offset, and neither digit alone is linear.
// The test is sound but not complete: anything it cannot put in this form (a
// load in an index, an unbounded inner loop) counts as a dependence, and the primitive
// refuses.
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#pragma once

#include "minic/ir/loop/stmt.h"

#include <string>
#include <vector>

namespace minic::schedule {

struct IndependenceOptions {
  // Trust each block's contract (its spatial iterations are independent, its reduction
  // iterations commute) and compare only accesses of different blocks: enough for a new
  // order, not for running iterations at once.
  bool trust_blocks = false;
  // Buffers of these scopes are private to one iteration (a GPU thread block's shared
  // memory under a blockIdx loop, a thread's local memory under a threadIdx loop).
  std::vector<loop::MemoryScope> private_scopes = {};
};

// Why two iterations of the loop at the end of `path` (the statements from the root down
// to the For) may touch the same memory: "block C writes C and block D reads it";
// empty if they never do. A barrier under the loop is also a reason.
std::string find_dependence(const std::vector<loop::Stmt>& path,
                            const IndependenceOptions& options);

// A block below `loop` with a reduction iteration variable whose binding uses the loop's
// variable: "block C, whose reduction variable vk is bound to k"; empty if there is none.
std::string find_reduction_use(const loop::For& loop);

}  // namespace minic::schedule
