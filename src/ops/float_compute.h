// Helpers for reference kernels that compute in floating point: dispatch on the float
// element types, and conversion to and from the type a kernel computes in.
//
// Course module 2. The float kernels of src/ops/ (Conv, the pools, the normalisations,
// Resize) read their inputs into plain arrays of compute_t<T> -- float for float16 and
// bfloat16, T itself otherwise -- compute there, and store the result back as T.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#pragma once

#include "minic/ops/op.h"

#include <type_traits>
#include <vector>

namespace minic {

// True for the element types computed as floating point: f16, bf16, f32, f64.
template <typename T>
inline constexpr bool is_float_v = std::is_floating_point_v<compute_t<T>>;

// Calls fn.template operator()<T>() with T the element type of `type`, which must be a
// floating-point type; any other type is an error naming the node and `what` it is.
template <typename Fn>
void visit_float_dtype(const NodeContext& ctx, DType type, std::string_view what, Fn&& fn) {
  visit_dtype(type, [&]<typename T>() {
    if constexpr (is_float_v<T>) {
      fn.template operator()<T>();
    } else {
      ctx.fail("{} has element type {}; {} takes floating-point tensors", what,
               dtype_name(type), ctx.node().op);
    }
  });
}

// One element as a double (16-bit floats convert through float).
template <typename T>
double to_double(T value) {
  return static_cast<double>(static_cast<compute_t<T>>(value));
}

// The elements of `tensor` (of element type T) converted to C.
template <typename T, typename C = compute_t<T>>
std::vector<C> to_compute(const Tensor& tensor) {
  std::vector<C> result;
  result.reserve(tensor.num_elements());
  for (const T& value : tensor.values<T>()) result.push_back(static_cast<C>(value));
  return result;
}

// Stores `values` into `out` (of element type T), converting each from the compute type.
template <typename T, typename C>
void store_computed(const std::vector<C>& values, Tensor& out) {
  auto dst = out.values<T>();
  MINIC_CHECK(dst.size() == values.size());
  for (size_t i = 0; i < values.size(); ++i) dst[i] = static_cast<T>(values[i]);
}

}  // namespace minic
