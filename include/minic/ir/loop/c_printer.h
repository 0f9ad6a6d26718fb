// The loop IR as "equivalent C": what a kernel computes, in the language a student knows.
//
// Course module 3. The tutorials print it after each schedule step, beside the loop IR
// (printer.h), so that a split, a reorder or a vectorize shows as the C loop nest it
// makes. The matmul of the course prints as
//
//   void matmul(const float* restrict A, const float* restrict B, float* restrict C) {
//     for (int64_t i = 0; i < 128; ++i) {
//       for (int64_t j = 0; j < 256; ++j) {
//         for (int64_t k = 0; k < 64; ++k) {
//           // block C: spatial vi, vj; reduce vk
//           {
//             const int64_t vi = i;
//             const int64_t vj = j;
//             const int64_t vk = k;
//             if (vk == 0) {  // init: the first step of the reduction
//               C[vi * 256 + vj] = 0.0f;
//             }
//             C[vi * 256 + vj] = C[vi * 256 + vj] + A[vi * 64 + vk] * B[vk * 256 + vj];
//           }
//         }
//       }
//     }
//   }
//
// Buffers are flat pointers (`const` when the function never stores to them), indexed
// with their strides. A parallel loop gets `#pragma omp parallel for`; vectorized,
// unrolled and thread-bound loops a comment (`// bound to threadIdx.x`). A vector store
// becomes a loop over its lanes. Allocations are arrays in a scope of their own,
// `__shared__` for shared memory, and a barrier is `__syncthreads()`. Names that are no C
// identifiers are made into ones (`i.0` → `i_0`), and made unique where they would clash.
//
// Code without shared memory or barriers is valid C99 after the prelude of
// print_c(LoopModule); GPU code is for reading only.
//
// Chapter: docs/module3-loop-ir.md#3-the-text-form-and-the-equivalent-c
#pragma once

#include "minic/ir/loop/stmt.h"

#include <string>

namespace minic::loop {

// One function, without the prelude it uses (min, max, floordiv, ... and the includes).
std::string print_c(const PrimFunc& func);

// The prelude, then every function, one blank line between two.
std::string print_c(const LoopModule& module);

}  // namespace minic::loop
