// Unit tests for the bitwise ops (src/ops/bitwise.cpp): BitwiseAnd, BitwiseOr, BitwiseXor
// and BitwiseNot on small integers worked out in binary in the comments, and the errors for
// bad element types and shapes. Course module 2.
#include "ops_test_util.h"

using namespace minic;
using namespace minic::test;

namespace {

Tensor int32s(Shape shape, std::vector<int32_t> values) {
  return Tensor::from_vector<int32_t>(std::move(shape), values);
}

}  // namespace

TEST_CASE("BitwiseAnd, BitwiseOr and BitwiseXor combine bits, broadcasting",
          "[ops][bitwise]") {
  // 12 = 0b1100, 10 = 0b1010: and 0b1000 = 8, or 0b1110 = 14, xor 0b0110 = 6.
  // -1 has every bit set: -1 & 10 = 10, -1 | 10 = -1, -1 ^ 10 = ~10 = -11.
  const std::vector<TensorType> types = {{DType::i32, {2}}, {DType::i32, {1}}};
  const std::vector<Tensor> inputs = {int32s({2}, {12, -1}), int32s({1}, {10})};
  OneNode both(18, "BitwiseAnd", types);
  require_values(both.run(inputs), {2}, {8, 10});
  OneNode either(18, "BitwiseOr", types);
  require_values(either.run(inputs), {2}, {14, -1});
  OneNode one(18, "BitwiseXor", types);
  Tensor y = one.run(inputs);
  REQUIRE(y.dtype() == DType::i32);
  require_values(y, {2}, {6, -11});
}

TEST_CASE("BitwiseNot flips every bit of the element type", "[ops][bitwise]") {
  // int64: ~0 = -1, ~5 = -6. uint8: ~5 = 0b11111010 = 250.
  OneNode signed_not(18, "BitwiseNot", {{DType::i64, {2}}});
  require_values(signed_not.run({int64s({2}, {0, 5})}), {2}, {-1, -6});
  OneNode unsigned_not(18, "BitwiseNot", {{DType::u8, {1}}});
  Tensor y = unsigned_not.run({Tensor::from_vector<uint8_t>({1}, {5})});
  REQUIRE(y.dtype() == DType::u8);
  require_values(y, {1}, {250});
}

TEST_CASE("the bitwise ops reject floats, mixed types and shapes that do not broadcast",
          "[ops][bitwise]") {
  OneNode floats_and(18, "BitwiseAnd", {{DType::f32, {2}}, {DType::f32, {2}}});
  REQUIRE_THROWS_WITH(floats_and.infer(), Catch::Contains("takes integer tensors"));
  OneNode floats_not(18, "BitwiseNot", {{DType::f32, {2}}});
  REQUIRE_THROWS_WITH(floats_not.infer(), Catch::Contains("takes integer tensors"));
  OneNode mixed(18, "BitwiseOr", {{DType::i32, {2}}, {DType::i64, {2}}});
  REQUIRE_THROWS_WITH(mixed.infer(), Catch::Contains("different element types"));
  OneNode shapes(18, "BitwiseXor", {{DType::i32, {2}}, {DType::i32, {3}}});
  REQUIRE_THROWS_WITH(shapes.infer(), Catch::Contains("do not broadcast"));
}
