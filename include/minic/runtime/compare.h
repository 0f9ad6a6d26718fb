// Comparing a computed tensor with an expected one, within a tolerance.
//
// Course module 1. `minic run --compare` and the conformance runner (tests/onnx) judge
// outputs with this one rule, the one numpy's assert_allclose uses:
//
//   an element of a floating-point tensor (float8 and float4 included) matches when
//   |actual - expected| <= atol + rtol * |expected|; NaN matches NaN and an infinity
//   matches the same infinity. Integer (int4 and int2 included) and boolean elements
//   match only when equal.
//   Tensors of different element types or shapes do not match at all.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#pragma once

#include "minic/tensor/tensor.h"

#include <string>

namespace minic {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-5;
};

struct TensorComparison {
  // Empty when element types and shapes agree; otherwise what differs, e.g.
  // "shape [3,4] where [4,3] was expected". Nothing else is compared then.
  std::string type_mismatch;
  int64_t num_elements = 0;
  int64_t mismatches = 0;
  // Over elements that are not both NaN: max |a - b|, and max |a - b| / |b| (infinite
  // where b is 0 and a is not).
  double max_abs_error = 0;
  double max_rel_error = 0;
  // The mismatching element furthest outside the tolerance (-1 if none), with its values.
  int64_t worst_index = -1;
  double worst_actual = 0;
  double worst_expected = 0;
  Shape shape;  // the shape both tensors have, to print worst_index as a position

  bool ok() const { return type_mismatch.empty() && mismatches == 0; }
};

TensorComparison compare_tensors(const Tensor& actual, const Tensor& expected,
                                 const Tolerance& tolerance);

// One line: "max abs err 0.5, max rel err 0.25, 3 of 60 elements differ (worst at [1,2,3]:
// got 1.5, expected 1)", or the type mismatch.
std::string describe(const TensorComparison& comparison);

}  // namespace minic
