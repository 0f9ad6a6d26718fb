// insert-barriers: a barrier wherever a shared buffer written by some threads of a block
// is read, or written again, by others.
//
// Course module 6. A thread block's threads share their shared memory and run in any
// order between barriers, so a kernel that stages a tile in shared memory needs a barrier
// after the threads store it and before they read it (read after write), and another
// before they overwrite it while a slower thread may still read the old tile (write after
// read: the next iteration of a k-tile loop). The schedule primitives (cache_read +
// compute_at into shared memory) write no barriers; this pass adds them, after
// lower-blocks, so that the loop interpreter's race check and the GPU both see them.
//
// Inside each thread nest of a launch (the outermost threadIdx loop and all below it)
// the pass walks the statements in order, remembering which shared buffers have been
// read and written since the last barrier. Before a statement that reads a buffer written
// since, or writes one read or written since, it puts a barrier, as far out as it can:
// before the whole statement at the level being walked, not before the access deep in
// its loops. A loop's body is walked until what its end leaves pending, joined with what
// was pending at its start, stops changing: so the barrier an access needs against the
// previous iteration is found too. Barriers go only where every thread of the block
// arrives: never inside a branch or a loop whose bounds depend on the thread, nor inside
// a threadIdx loop of fewer iterations than the block has threads on its axis (a guard);
// such a statement is walked as a whole.
//
// The test is conservative: two accesses of one shared buffer count as two threads',
// one of them a store, except where that cannot be:
//   - both use the same indices, which give every thread its own elements: a sum of the
//     thread indices times constants, one per axis of more than one thread, as far apart
//     as the digits of a mixed radix (S[i * 256 + tx] with 256 threads), plus terms free
//     of thread indices (a thread accumulating its partial sum in S needs no barrier);
//   - one store repeated in the next iteration of a loop (a copy loop's iterations write
//     different elements; a store whose iterations in two threads wrote one element
//     would race in one iteration already, which no barrier mends).
// So a kernel may get a barrier it does not need, never lack one it needs where a
// barrier can go.
//
// Invariant: same results; the function verifies. Sibling thread nests of a launch are
// already ordered (the CUDA back end writes a barrier between them), so each starts with
// nothing pending.
//
//   before:  for tx in 0..16 bind(threadIdx.x) {     after:  for tx in 0..16 bind(threadIdx.x) {
//              for ko in 0..4 {                                for ko in 0..4 {
//                S[tx] = A[ko * 16 + tx]                         barrier()
//                B[ko * 16 + tx] = S[15 - tx]                    S[tx] = A[ko * 16 + tx]
//              }                                                 barrier()
//            }                                                   B[ko * 16 + tx] = S[15 - tx]
//
// Chapter: docs/module6-cuda.md#barriers
#pragma once

#include "minic/ir/loop/stmt.h"

namespace minic::loop {

PrimFunc insert_barriers(PrimFunc func);

}  // namespace minic::loop
