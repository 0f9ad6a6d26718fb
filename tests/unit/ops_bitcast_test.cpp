// Unit tests for BitCast (src/ops/bitcast.cpp): the bits stay, the type changes.
// Course module 2.
#include "ops_test_util.h"

using namespace minic;
using namespace minic::test;

TEST_CASE("BitCast reads float bits as integers", "[ops][bitcast]") {
  // 1.0f is 0x3F800000 = 1065353216; -2.0f is 0xC0000000 = -1073741824 as int32.
  OneNode g(26, "BitCast", {{DType::f32, {2}}}, {{"to", int64_t{6}}});
  Tensor y = g.run({floats({2}, {1.0f, -2.0f})});
  REQUIRE(y.dtype() == DType::i32);
  require_values(y, {2}, {1065353216, -1073741824});
}

TEST_CASE("BitCast from int8 to uint8 wraps negative numbers", "[ops][bitcast]") {
  // -1 is the byte 0xFF = 255, -128 is 0x80 = 128.
  OneNode g(26, "BitCast", {{DType::i8, {3}}}, {{"to", int64_t{2}}});
  Tensor x = Tensor::from_vector<int8_t>({3}, {-1, -128, 5});
  require_values(g.run({x}), {3}, {255, 128, 5});
}

TEST_CASE("BitCast rejects types of other widths and bytes that are no bool",
          "[ops][bitcast]") {
  SECTION("32 bits to 64") {
    OneNode g(26, "BitCast", {{DType::f32, {2}}}, {{"to", int64_t{7}}});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("same bit width"));
  }
  SECTION("to a string") {
    OneNode g(26, "BitCast", {{DType::u8, {2}}}, {{"to", int64_t{8}}});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("a data type minic does not have"));
  }
  SECTION("the byte 2 as a bool") {
    OneNode g(26, "BitCast", {{DType::u8, {3}}}, {{"to", int64_t{9}}});
    Tensor x = Tensor::from_vector<uint8_t>({3}, {0, 1, 2});
    REQUIRE_THROWS_WITH(g.run({x}), Catch::Contains("element 2 is the byte 2"));
  }
}
