// The loop IR interpreter: runs a PrimFunc on host tensors.
//
// Course module 3. The interpreter is the oracle for every schedule primitive and loop
// pass: run a function before and after a transformation on the same random inputs, and
// the outputs must agree. So it is written to be obviously correct rather than fast, and
// it never reads or writes out of bounds: it checks every access.
//
// What it does, statement by statement:
//   - loops run in order, whatever their kind: parallel, vectorized and unrolled loops
//     give the same results as serial ones; blockIdx loops run the GPU thread blocks one
//     after another;
//   - a block binds its iteration variables from their bindings (each must lie in
//     [0, extent)), is skipped where its predicate is false, runs `init` when every
//     reduction variable is 0 (TensorIR's rule), then its body;
//   - Allocate and a block's alloc_buffers make storage filled with a pattern that shows
//     reads of memory never written: NaN for floats, the byte 0xA5 for integers;
//   - loads and stores check every index against the buffer's shape: an access outside
//     is an Error naming the buffer and the index.
// Expressions are evaluated lane by lane in the precision of their type (f32 in float,
// not double, so results match compiled code; the rules are at the top of
// src/ir/loop/interp_eval.cpp).
//
// GPU code. When the host code reaches a threadIdx loop, the interpreter starts one GPU
// thread block: one thread for each combination of threadIdx.x/y/z (the extent of an
// axis is the largest extent of the loops bound to it inside; such a loop runs its body
// once in each thread, with the thread's index, or not at all in threads beyond its
// extent). Each thread is an interpreter state of its own, with an explicit stack in
// place of C++ recursion, so it can stop at a barrier and resume there. The block runs
// in phases: every thread runs until it reaches a barrier or ends, then the next phase
// starts. So barriers work wherever they are, in loops and branches too; a phase in
// which threads wait at different barriers is an Error. A thread that has ended takes
// no part in later barriers.
//   - Memory: local buffers are per thread; shared (and global) buffers allocated
//     inside the threadIdx loops exist once per block; buffers allocated outside are
//     seen by every thread.
//   - Data races: between two barriers, a thread reading an element of a non-local
//     buffer that another thread changed, or changing one another thread read or
//     changed, is an Error ("a barrier is missing"). Races between thread blocks are
//     not checked.
//   - Two threadIdx loops one after the other in the host code are two launches: the
//     first ends in every thread before the second starts.
//
// Chapter: docs/module3-loop-ir.md#4-the-verifier-and-the-interpreter-the-oracle
#pragma once

#include "minic/ir/loop/stmt.h"
#include "minic/tensor/tensor.h"

#include <vector>

namespace minic::loop {

// Runs `func` on `args`, one tensor per parameter, in place: outputs are written into
// their tensors. Verifies the function first (verify_func). Throws Error if an argument
// does not match its parameter (naming it), and on any error while running (naming the
// function, the block, the GPU thread and the reason).
void run_func(const PrimFunc& func, std::vector<Tensor*> args);

}  // namespace minic::loop
