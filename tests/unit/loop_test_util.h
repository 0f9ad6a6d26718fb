// Helpers for loop IR tests: short names for building loops and constants, and random
// host tensors. Course module 3.
#pragma once

#include "minic/ir/loop/stmt.h"
#include "minic/tensor/tensor.h"

#include <random>
#include <string>

namespace minic::loop::test {

inline Expr i64(int64_t value) { return IntImm::make(value); }
inline Expr f32(double value) { return FloatImm::make(value); }

// for var in 0..extent { body }, of the given kind.
inline Stmt for_loop(const Expr& var, int64_t extent, Stmt body, ForKind kind = ForKind::serial) {
  return For::make(var, i64(0), i64(extent), kind, std::move(body));
}

// for var in 0..extent bound to a GPU axis ("blockIdx.x", "threadIdx.y", ...).
inline Stmt bind(const Expr& var, int64_t extent, const std::string& axis, Stmt body) {
  return For::make(var, i64(0), i64(extent), ForKind::thread_binding, std::move(body), axis);
}

inline Stmt barrier() { return Evaluate::make(Call::make(DataType::int64(), "barrier", {})); }

// An f32 tensor of small integers in [-4, 4]: sums and products of such values are exact
// in float, so results compare exactly whatever the order of operations.
inline Tensor small_int_tensor(Shape shape, std::mt19937& rng) {
  Tensor tensor(DType::f32, std::move(shape));
  std::uniform_int_distribution<int> value(-4, 4);
  for (float& x : tensor.values<float>()) x = static_cast<float>(value(rng));
  return tensor;
}

// An f32 tensor of values uniform in [lo, hi).
inline Tensor uniform_tensor(Shape shape, std::mt19937& rng, float lo = -2.0f, float hi = 2.0f) {
  Tensor tensor(DType::f32, std::move(shape));
  std::uniform_real_distribution<float> value(lo, hi);
  for (float& x : tensor.values<float>()) x = value(rng);
  return tensor;
}

// A tensor of `dtype` with every element `value`.
inline Tensor filled(DType dtype, Shape shape, double value) {
  Tensor tensor(DType::f64, std::move(shape));
  for (double& x : tensor.values<double>()) x = value;
  return tensor.cast(dtype);
}

}  // namespace minic::loop::test
