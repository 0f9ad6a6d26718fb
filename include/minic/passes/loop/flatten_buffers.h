// flatten-buffers: every buffer becomes one-dimensional, every access one index computed
// through the strides.
//
// Course module 4. Memory is a line of addresses: a buffer of shape [64, 32] with strides
// [32, 1] keeps element (i, j) at i * 32 + j. Code generation wants exactly that, so this
// pass rewrites each buffer (parameters, Allocates) as a buffer of the same name, element
// type and scope with shape [size] (size: one past the last element the strides reach,
// which is the product of the shape for row-major strides) and each Load and Store through
// it with the one index sum(index[d] * stride[d]), simplified. A vector index (a Ramp in
// one dimension) gives a Ramp over the flat buffer. One-dimensional buffers of stride 1
// stay as they are.
//
// Precondition: no blocks (run lower-blocks first); a block is an Error, since its regions
// and alloc_buffers speak of the buffers' dimensions.
// Invariant: the function touches the same memory in the same order (a caller passes the
// same elements, viewed as one dimension); it still verifies.
//
//   before:  func @f(A: f32[4,8], B: f32[8,4]) {
//              for i in 0..4 { for j in 0..8 { B[j, i] = A[i, j] } } }
//   after:   func @f(A: f32[32], B: f32[32]) {
//              for i in 0..4 { for j in 0..8 { B[j * 4 + i] = A[i * 8 + j] } } }
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#pragma once

#include "minic/ir/loop/stmt.h"

namespace minic::loop {

PrimFunc flatten_buffers(PrimFunc func);

}  // namespace minic::loop
