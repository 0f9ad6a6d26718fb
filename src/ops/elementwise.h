// Helpers shared by the elementwise reference kernels of src/ops/ (unary.cpp, activation.cpp,
// binary.cpp, variadic.cpp, where.cpp).
//
// Course module 2. Two conventions keep the kernels short and their formulas plain:
//   - Floating-point formulas are written once, on double. A kernel reads each element as
//     double (float16 and bfloat16 through float), applies the formula and rounds the result
//     once to the element type. For a reference kernel this is the simple, accurate choice:
//     Gelu reads as 0.5 * x * (1 + erf(x / sqrt(2))) with no float-literal noise.
//   - Integer arithmetic wraps around modulo 2^bits, as the hardware, numpy and ONNX Runtime
//     do. C++ leaves signed overflow undefined, so the helpers below compute in uint64_t and
//     truncate, which gives the two's-complement result without undefined behaviour.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#pragma once

#include "float_compute.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace minic {

// A double rounded to a float type (to_double, the other way, is in float_compute.h).
template <typename T>
T from_double(double value) {
  return T(static_cast<compute_t<T>>(value));
}

// A double converted to element type T: floats round, integers truncate toward zero and
// saturate at their range (NaN gives 0), bool is value != 0.
template <typename T>
T saturate_cast(double value) {
  if constexpr (is_float_v<T>) {
    return from_double<T>(value);
  } else if constexpr (std::is_same_v<T, bool>) {
    return value != 0;
  } else {
    if (std::isnan(value)) return T{0};
    if (value <= static_cast<double>(std::numeric_limits<T>::lowest())) {
      return std::numeric_limits<T>::lowest();
    }
    if (value >= static_cast<double>(std::numeric_limits<T>::max())) {
      return std::numeric_limits<T>::max();
    }
    return static_cast<T>(value);
  }
}

// -x, wrapping for the most negative integer (whose negation C++ leaves undefined).
template <typename C>
C negate(C x) {
  if constexpr (std::is_integral_v<C>) {
    return static_cast<C>(uint64_t{0} - static_cast<uint64_t>(x));
  } else {
    return -x;
  }
}

// x * y, wrapping for integers.
template <typename C>
C wrapping_mul(C x, C y) {
  if constexpr (std::is_integral_v<C>) {
    return static_cast<C>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
  } else {
    return x * y;
  }
}

// x < 0, false for unsigned types without comparing an unsigned value against 0.
template <typename C>
bool is_negative(C x) {
  if constexpr (std::is_signed_v<C>) {
    return x < 0;
  } else {
    return false;
  }
}

// Calls fn.template operator()<T>() with T the element type of `dtype`, for every type but
// bool; the shape rule has already rejected bool.
template <typename Fn>
void visit_numeric(DType dtype, Fn&& fn) {
  MINIC_CHECK(dtype != DType::boolean);
  visit_dtype(dtype, [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) fn.template operator()<T>();
  });
}

// out[i] = fn(x[i]) for a floating-point tensor `x`; fn maps double to double.
template <typename Fn>
Tensor map_float(const Tensor& x, Fn&& fn) {
  MINIC_CHECK(is_float(x.dtype()));
  Tensor out(x.type());
  visit_dtype(x.dtype(), [&]<typename T>() {
    if constexpr (is_float_v<T>) {
      auto in = x.values<T>();
      auto result = out.values<T>();
      for (size_t i = 0; i < in.size(); ++i) result[i] = from_double<T>(fn(to_double(in[i])));
    }
  });
  return out;
}

// Fails unless input `index` has a floating-point element type.
inline void require_float_input(const ShapeContext& ctx, size_t index) {
  DType dtype = ctx.input_type(index).dtype;
  if (!is_float(dtype)) {
    ctx.fail("input {} is {}; {} takes a floating-point tensor (f16, bf16, f32 or f64)", index,
             dtype_name(dtype), ctx.node().op);
  }
}

// Fails unless input `index` has a numeric (not bool) element type.
inline void require_numeric_input(const ShapeContext& ctx, size_t index) {
  DType dtype = ctx.input_type(index).dtype;
  if (dtype == DType::boolean) {
    ctx.fail("input {} is bool; {} takes a numeric tensor", index, ctx.node().op);
  }
}

// Fails unless inputs `first` and `second` have the same element type.
inline void require_same_dtype(const ShapeContext& ctx, size_t first, size_t second) {
  DType a = ctx.input_type(first).dtype;
  DType b = ctx.input_type(second).dtype;
  if (a != b) {
    ctx.fail("inputs {} and {} have different element types ({} and {}); {} needs them equal",
             first, second, dtype_name(a), dtype_name(b), ctx.node().op);
  }
}

}  // namespace minic
