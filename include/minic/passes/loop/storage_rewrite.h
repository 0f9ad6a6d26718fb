// storage-rewrite: allocations whose lifetimes do not overlap share one allocation.
//
// Course module 4 (memory planning, inside a kernel). A kernel that allocates a scratch
// buffer per stage needs only as much memory as the stages alive at the same time. The rule
// this pass applies, kept simple so that it is plainly correct:
//
//   Within one sequence of statements s0; s1; ...; sn, a buffer allocated by an Allocate
//   at the top of statement sk lives during sk only; a buffer allocated by an Allocate
//   directly around the whole sequence lives from the first statement that uses it to the
//   last. Two buffers whose lifetimes are disjoint (one's last statement comes before the
//   other's first) never hold data at the same time, so they may share memory: the second
//   is never read before it is written, and the first is never read again.
//
// Two buffers share only if both are one-dimensional with stride 1 (run flatten-buffers
// first), of the same element type and the same scope, and that scope is local (private to
// a GPU thread) or global outside every threadIdx loop. Memory the threads of a block see
// together (shared, or global allocated inside the threads) is never shared: a slower
// thread could still read it after a faster one reused it. The common buffer is allocated
// around the sequence, takes the name of the first buffer and the largest size, and every
// access of the others goes to it. Buffers are assigned to common allocations greedily, in
// order of their first statement.
//
// Invariant: every buffer read finds the value the original program wrote there, so the
// results are the same; the function still verifies.
//
//   before:  alloc T: f32[4] local { T[0] = A[0]  B[0] = T[0] }
//            alloc U: f32[8] local { U[1] = A[1]  B[1] = U[1] }
//   after:   alloc T: f32[8] local {
//              T[0] = A[0]  B[0] = T[0]
//              T[1] = A[1]  B[1] = T[1] }
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#pragma once

#include "minic/ir/loop/stmt.h"

namespace minic::loop {

PrimFunc storage_rewrite(PrimFunc func);

}  // namespace minic::loop
