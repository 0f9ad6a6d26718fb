// Tests for compare_tensors (src/runtime/compare.cpp): the tolerance rule that `minic run
// --compare` and the conformance runner share. Every expectation is worked out by hand.
#include "minic/runtime/compare.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace minic;

namespace {

Tensor floats(Shape shape, std::vector<float> values) {
  return Tensor::from_vector<float>(std::move(shape), values);
}

}  // namespace

TEST_CASE("compare: equal tensors match with zero error", "[compare]") {
  Tensor a = floats({2, 2}, {1, -2, 3.5f, 0});
  TensorComparison result = compare_tensors(a, a, Tolerance{0, 0});
  CHECK(result.ok());
  CHECK(result.num_elements == 4);
  CHECK(result.mismatches == 0);
  CHECK(result.max_abs_error == 0);
  CHECK(result.max_rel_error == 0);
  CHECK(result.worst_index == -1);
}

TEST_CASE("compare: |a - b| <= atol + rtol * |b| decides a float element", "[compare]") {
  Tensor expected = floats({3}, {100, 1, 0});
  // Errors 0.05 (allowed: 1e-3 * 100 = 0.1), 0.002 (allowed 1e-3 * 1 = 0.001), 1e-8 (allowed
  // 1e-7 at b = 0): only the middle element is out.
  Tensor actual = floats({3}, {100.05f, 1.002f, 1e-8f});
  TensorComparison result = compare_tensors(actual, expected, Tolerance{1e-3, 1e-7});
  CHECK_FALSE(result.ok());
  CHECK(result.mismatches == 1);
  CHECK(result.worst_index == 1);
  CHECK(result.worst_actual == Approx(1.002));
  CHECK(result.worst_expected == 1);
  CHECK(result.max_abs_error == Approx(0.05).epsilon(1e-4));
  // |1e-8 - 0| / 0 is infinite; numpy reports the same.
  CHECK(std::isinf(result.max_rel_error));
  CHECK(describe(result) ==
        "max abs err 0.0500031, max rel err inf, 1 of 3 elements differ (worst at [1]: got "
        "1.002, expected 1)");
}

TEST_CASE("compare: NaN matches NaN, infinities match themselves", "[compare]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(compare_tensors(floats({2}, {nan, inf}), floats({2}, {nan, inf}), Tolerance{}).ok());
  TensorComparison one_nan = compare_tensors(floats({1}, {nan}), floats({1}, {1}), Tolerance{});
  CHECK(one_nan.mismatches == 1);
  TensorComparison signs = compare_tensors(floats({1}, {inf}), floats({1}, {-inf}), Tolerance{});
  CHECK(signs.mismatches == 1);
  TensorComparison huge = compare_tensors(floats({1}, {inf}), floats({1}, {1e30f}), Tolerance{});
  CHECK(huge.mismatches == 1);
}

TEST_CASE("compare: integers and booleans must be equal, whatever the tolerance", "[compare]") {
  Tensor expected = Tensor::from_vector<int64_t>({2}, {1000, 7});
  Tensor actual = Tensor::from_vector<int64_t>({2}, {1001, 7});
  TensorComparison result = compare_tensors(actual, expected, Tolerance{1e-2, 1});
  CHECK(result.mismatches == 1);
  CHECK(result.worst_index == 0);
  CHECK(result.max_abs_error == 1);

  // 2^60 and 2^60 + 1 are the same double; they still differ.
  const int64_t big = int64_t{1} << 60;
  CHECK(compare_tensors(Tensor::scalar<int64_t>(big + 1), Tensor::scalar<int64_t>(big),
                        Tolerance{})
            .mismatches == 1);
  CHECK(compare_tensors(Tensor::scalar<uint64_t>(~uint64_t{0}),
                        Tensor::scalar<uint64_t>(~uint64_t{0} - 1), Tolerance{})
            .mismatches == 1);

  Tensor yes = Tensor::from_vector<bool>({2}, {true, false});
  Tensor no = Tensor::from_vector<bool>({2}, {true, true});
  CHECK(compare_tensors(yes, no, Tolerance{}).mismatches == 1);
}

TEST_CASE("compare: a different element type or shape is a mismatch", "[compare]") {
  Tensor a = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  TensorComparison shape = compare_tensors(a, a.reshaped({3, 2}), Tolerance{});
  CHECK_FALSE(shape.ok());
  CHECK(shape.type_mismatch == "shape [2,3] where [3,2] was expected");
  TensorComparison dtype = compare_tensors(a, a.cast(DType::f64), Tolerance{});
  CHECK_FALSE(dtype.ok());
  CHECK(dtype.type_mismatch == "element type f32 where f64 was expected");
  CHECK(describe(dtype) == dtype.type_mismatch);
}

TEST_CASE("compare: the worst element is the one furthest outside the tolerance",
          "[compare]") {
  Tensor expected = floats({2, 3}, {0, 0, 0, 0, 0, 10});
  Tensor actual = floats({2, 3}, {0, 0.5f, 0, 0, 0, 11});
  TensorComparison result = compare_tensors(actual, expected, Tolerance{0, 0.1});
  CHECK(result.mismatches == 2);
  CHECK(result.worst_index == 5);
  CHECK(describe(result).ends_with("(worst at [1,2]: got 11, expected 10)"));
}

TEST_CASE("compare: float8 goes by the tolerance, int4 must be equal", "[compare]") {
  // f8e4m3fn: 0x38 is 1.0, 0x39 is 1.125, 0x7f is NaN.
  auto f8 = [](std::vector<uint8_t> bits) {
    Tensor tensor(DType::f8e4m3fn, {static_cast<int64_t>(bits.size())});
    for (size_t i = 0; i < bits.size(); ++i) tensor.bytes()[i] = std::byte{bits[i]};
    return tensor;
  };
  CHECK(compare_tensors(f8({0x38, 0x7f}), f8({0x38, 0x7f}), Tolerance{0, 0}).ok());
  TensorComparison near = compare_tensors(f8({0x39}), f8({0x38}), Tolerance{0.2, 0});
  CHECK(near.ok());
  CHECK(near.max_abs_error == 0.125);
  CHECK(compare_tensors(f8({0x39}), f8({0x38}), Tolerance{0.1, 0}).mismatches == 1);

  // i4 holds -8..7, one element a byte; 0x0f is -1.
  Tensor minus_one(DType::i4, {1});
  minus_one.bytes()[0] = std::byte{0x0f};
  Tensor zero(DType::i4, {1});
  TensorComparison ints = compare_tensors(minus_one, zero, Tolerance{1, 1});
  CHECK(ints.mismatches == 1);
  CHECK(ints.worst_actual == -1);
}
