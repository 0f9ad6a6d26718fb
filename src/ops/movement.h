// Helpers shared by the data-movement ops of src/ops/ (Reshape, Transpose, Slice, Pad, ...).
//
// Course module 2. A data-movement op never looks at what its elements mean, only where
// they go, so its reference kernel is written once over bytes and serves every element
// type: an element is dtype_size(dtype) bytes copied with memcpy. Many of these ops are
// "strided views" of their input: output element `index` reads input element
//   base + sum over d of index[d] * strides[d]
// Transpose permutes the strides, Slice starts at an offset and multiplies them by its
// steps, Expand sets the stride of a broadcast dimension to 0.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#pragma once

#include "broadcast.h"
#include "minic/ops/op.h"

#include <cstring>
#include <string_view>
#include <vector>

namespace minic {

// Copies element `from` of `source` to element `to` of `dest` (of the same element type).
inline void copy_element(const Tensor& source, int64_t from, Tensor& dest, int64_t to) {
  const size_t size = static_cast<size_t>(dtype_size(source.dtype()));
  std::memcpy(dest.bytes().data() + to * size, source.bytes().data() + from * size, size);
}

// Fills `dest` with the strided view of `source` described above: dest's shape gives the
// index space, `strides` has one entry per dimension of dest.
inline void copy_strided(const Tensor& source, int64_t base, const Shape& strides,
                         Tensor& dest) {
  int64_t flat = 0;
  for_each_index(dest.shape(), [&](const Shape& index) {
    copy_element(source, base + offset_of(index, strides), dest, flat++);
  });
}

// The elements of an integer tensor that carries a list (a shape, axes, pads, repeats):
// rank 0 or 1 and an integer element type, else an error naming the node and `what`.
inline std::vector<int64_t> int_list(const NodeContext& ctx, const Tensor& tensor,
                                     std::string_view what) {
  if (!is_int(tensor.dtype())) {
    ctx.fail("{} must be an integer tensor, not {}", what, type_string(tensor.type()));
  }
  if (tensor.rank() > 1) {
    ctx.fail("{} must be a 1-D tensor, not {}", what, type_string(tensor.type()));
  }
  return tensor.to_int64_vector();
}

// Axes normalised into [0, rank) (negative ones count from the end); an error if one is
// out of range or repeated.
inline std::vector<int64_t> normalize_axes(const NodeContext& ctx, std::vector<int64_t> axes,
                                           int64_t rank) {
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t& axis : axes) {
    axis = ctx.normalize_axis(axis, rank);
    if (seen[axis]) ctx.fail("axis {} appears twice", axis);
    seen[axis] = true;
  }
  return axes;
}

// Indices (Gather's, Scatter's) are i32 or i64; an error naming the node otherwise.
inline void check_indices_type(const NodeContext& ctx, const TensorType& indices) {
  if (indices.dtype != DType::i32 && indices.dtype != DType::i64) {
    ctx.fail("indices must be i32 or i64, not {}", type_string(indices));
  }
}

// GatherElements' and ScatterElements' indices: of data's rank, and no larger than data
// along every axis but `axis`; an error naming the node otherwise.
inline void check_indices_fit(const NodeContext& ctx, const TensorType& data,
                              const TensorType& indices, int64_t axis) {
  bool fits = indices.rank() == data.rank();
  for (int64_t d = 0; fits && d < data.rank(); ++d) {
    fits = d == axis || indices.shape[d] <= data.shape[d];
  }
  if (!fits) {
    ctx.fail("indices {} do not fit data {} along axes other than {}", type_string(indices),
             type_string(data), axis);
  }
}

// Index `position` of `indices`, made non-negative and checked against a dimension `n`
// (of axis `axis`, for the message).
inline int64_t checked_index(const NodeContext& ctx, const Tensor& indices, int64_t position,
                             int64_t axis, int64_t n) {
  const int64_t index = indices.as_int64(position);
  if (index < -n || index >= n) {
    ctx.fail("index {} is out of range for axis {} of size {}", index, axis, n);
  }
  return index < 0 ? index + n : index;
}

}  // namespace minic
