// Broadcasting and index helpers shared by the reference kernels of src/ops/.
//
// Course module 2. ONNX broadcasting follows numpy: shapes are aligned at their last
// dimension; a dimension of 1 stretches to match the other. These helpers keep the
// kernels plain: a kernel walks the output's elements and asks where each input element
// lives.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#pragma once

#include "minic/ops/op.h"

#include <vector>

namespace minic {

// The numpy broadcast of several shapes; ctx.fail()s if they do not broadcast.
Shape broadcast_shapes(const NodeContext& ctx, const std::vector<Shape>& shapes);

// Strides (in elements) for reading a row-major tensor of shape `input` as if it had the
// broadcast shape `output`: broadcast dimensions get stride 0.
Shape broadcast_strides(const Shape& input, const Shape& output);

// Calls fn(index) for every multi-index of `shape` in row-major order; `index` is a
// vector of rank(shape) coordinates.
template <typename Fn>
void for_each_index(const Shape& shape, Fn&& fn) {
  if (num_elements(shape) == 0) return;
  Shape index(shape.size(), 0);
  while (true) {
    fn(static_cast<const Shape&>(index));
    int64_t axis = static_cast<int64_t>(shape.size()) - 1;
    while (axis >= 0 && ++index[axis] == shape[axis]) index[axis--] = 0;
    if (axis < 0) return;
  }
}

// The flat offset of `index` given per-dimension `strides`.
inline int64_t offset_of(const Shape& index, const Shape& strides) {
  int64_t offset = 0;
  for (size_t i = 0; i < index.size(); ++i) offset += index[i] * strides[i];
  return offset;
}

// Applies `fn` elementwise over inputs broadcast to `out`'s shape:
//   out[i] = fn(a[ia], b[ib]) with the element types given explicitly.
template <typename Out, typename A, typename B, typename Fn>
void broadcast_binary(const Tensor& a, const Tensor& b, Tensor& out, Fn&& fn) {
  const Shape& shape = out.shape();
  Shape stride_a = broadcast_strides(a.shape(), shape);
  Shape stride_b = broadcast_strides(b.shape(), shape);
  auto va = a.values<A>();
  auto vb = b.values<B>();
  auto vo = out.values<Out>();
  int64_t flat = 0;
  for_each_index(shape, [&](const Shape& index) {
    vo[flat++] = fn(va[offset_of(index, stride_a)], vb[offset_of(index, stride_b)]);
  });
}

}  // namespace minic
