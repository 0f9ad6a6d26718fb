// Comparing a computed tensor with an expected one. Course module 1.
//
// Every element is read as a double (exact for every element type but 64-bit integers
// beyond 2^53, which are compared as integers instead; as_double also decodes the
// storage-only float8 and float4 types). The tolerance test follows numpy's
// assert_allclose so that minic judges ONNX's backend tests as ONNX's own runner does.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#include "minic/runtime/compare.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace minic {
namespace {

// How far an element pair lies outside the tolerance: <= 0 when it matches.
double excess(double actual, double expected, const Tolerance& tolerance) {
  if (std::isnan(actual) && std::isnan(expected)) return 0;
  if (std::isnan(actual) || std::isnan(expected)) return std::numeric_limits<double>::infinity();
  if (actual == expected) return 0;  // also equal infinities
  double error = std::fabs(actual - expected);  // infinite if either side is infinite
  return error - (tolerance.atol + tolerance.rtol * std::fabs(expected));
}

// Integer and boolean elements, compared exactly: integers beyond 2^53 can round to the
// same double, so they are compared as integers.
bool equal_integers(const Tensor& actual, const Tensor& expected, int64_t index) {
  if (expected.dtype() == DType::u64) {
    return actual.values<uint64_t>()[index] == expected.values<uint64_t>()[index];
  }
  return actual.as_int64(index) == expected.as_int64(index);
}

// "[1,2,3]": the row-major position of a flat index.
std::string position_string(int64_t index, const Shape& shape) {
  Shape position(shape.size(), 0);
  for (int64_t axis = static_cast<int64_t>(shape.size()) - 1; axis >= 0; --axis) {
    if (shape[axis] == 0) break;
    position[axis] = index % shape[axis];
    index /= shape[axis];
  }
  return shape_string(position);
}

}  // namespace

TensorComparison compare_tensors(const Tensor& actual, const Tensor& expected,
                                 const Tolerance& tolerance) {
  TensorComparison result;
  result.shape = expected.shape();
  if (actual.dtype() != expected.dtype()) {
    result.type_mismatch = fmt::format("element type {} where {} was expected",
                                       dtype_name(actual.dtype()), dtype_name(expected.dtype()));
    return result;
  }
  if (actual.shape() != expected.shape()) {
    result.type_mismatch = fmt::format("shape {} where {} was expected",
                                       shape_string(actual.shape()),
                                       shape_string(expected.shape()));
    return result;
  }
  // Integers and booleans are exact; every float type, the storage-only ones included
  // (float8, float4: as_double decodes them), goes by the tolerance.
  const DType dtype = expected.dtype();
  const bool exact = is_int(dtype) || is_low_precision_int(dtype) || dtype == DType::boolean;
  result.num_elements = expected.num_elements();
  double worst_excess = 0;
  for (int64_t i = 0; i < result.num_elements; ++i) {
    double a = actual.as_double(i);
    double b = expected.as_double(i);
    bool both_nan = std::isnan(a) && std::isnan(b);
    if (!both_nan) {
      double error = a == b ? 0.0 : std::fabs(a - b);
      if (std::isnan(error)) error = std::numeric_limits<double>::infinity();
      double relative = b != 0 ? error / std::fabs(b)
                        : error == 0 ? 0.0
                                     : std::numeric_limits<double>::infinity();
      result.max_abs_error = std::max(result.max_abs_error, error);
      result.max_rel_error = std::max(result.max_rel_error, relative);
    }
    double over = exact ? (equal_integers(actual, expected, i) ? 0.0 : std::fabs(a - b) + 1)
                        : excess(a, b, tolerance);
    if (over <= 0) continue;
    ++result.mismatches;
    if (result.worst_index < 0 || over > worst_excess) {
      worst_excess = over;
      result.worst_index = i;
      result.worst_actual = a;
      result.worst_expected = b;
    }
  }
  return result;
}

std::string describe(const TensorComparison& comparison) {
  if (!comparison.type_mismatch.empty()) return comparison.type_mismatch;
  std::string text = fmt::format("max abs err {:.6g}, max rel err {:.6g}, {} of {} elements differ",
                                 comparison.max_abs_error, comparison.max_rel_error,
                                 comparison.mismatches, comparison.num_elements);
  if (comparison.worst_index >= 0) {
    text += fmt::format(" (worst at {}: got {:.8g}, expected {:.8g})",
                        position_string(comparison.worst_index, comparison.shape),
                        comparison.worst_actual, comparison.worst_expected);
  }
  return text;
}

}  // namespace minic
