// What the tests of the exact int8 rewrites share (lookup-tables, cancel-qdq): inputs that
// hold every value of an 8-bit type, and a comparison that requires the same bytes.
// Course module 7.
#pragma once

#include "minic/runtime/compare.h"
#include "minic/tensor/tensor.h"

#include <catch2/catch.hpp>

#include <vector>

namespace minic::testing {

// A tensor of `shape` (a multiple of 256 elements) of uint8 or int8: int8 in order from
// -128, uint8 stepping by `step` (odd, so that every value comes round) from 0.
inline Tensor every_8bit_value(DType dtype, const Shape& shape, int64_t step = 7) {
  Tensor values(dtype, shape);
  for (int64_t i = 0; i < values.num_elements(); ++i) {
    if (dtype == DType::i8) values.values<int8_t>()[i] = static_cast<int8_t>(i % 256 - 128);
    else values.values<uint8_t>()[i] = static_cast<uint8_t>((i * step) % 256);
  }
  return values;
}

// Every output the same as expected, to the bit.
inline void check_same_bits(const std::vector<Tensor>& actual,
                            const std::vector<Tensor>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (size_t k = 0; k < actual.size(); ++k) {
    TensorComparison comparison = compare_tensors(actual[k], expected[k], {0, 0});
    INFO("output " << k << ": " << describe(comparison));
    CHECK(comparison.ok());
  }
}

}  // namespace minic::testing
