// Unit tests for CumSum and CumProd: the four combinations of exclusive and reverse worked
// out by hand, an inner axis, integer wrapping, and the errors. Course module 2.
#include "ops_test_util.h"

using namespace minic;
using namespace minic::test;

namespace {

Tensor axis_scalar(int64_t axis) { return Tensor::scalar<int64_t>(axis); }

Tensor run_cumulative(const std::string& op, int opset, const Tensor& x, int64_t axis,
                      int64_t exclusive, int64_t reverse) {
  OneNode g(opset, op, {x.type()}, {{"exclusive", exclusive}, {"reverse", reverse}},
            {axis_scalar(axis)});
  return g.run({x});
}

}  // namespace

TEST_CASE("CumSum of [1, 2, 3] in the four modes", "[ops][cumsum]") {
  // inclusive: [1, 1+2, 1+2+3]; exclusive: [0, 1, 1+2];
  // reverse: [1+2+3, 2+3, 3]; reverse exclusive: [2+3, 3, 0].
  const Tensor x = floats({3}, {1, 2, 3});
  require_values(run_cumulative("CumSum", 14, x, 0, 0, 0), {3}, {1, 3, 6});
  require_values(run_cumulative("CumSum", 14, x, 0, 1, 0), {3}, {0, 1, 3});
  require_values(run_cumulative("CumSum", 14, x, 0, 0, 1), {3}, {6, 5, 3});
  require_values(run_cumulative("CumSum", 14, x, 0, 1, 1), {3}, {5, 3, 0});
}

TEST_CASE("CumProd of [1, 2, 3] in the four modes", "[ops][cumprod]") {
  // inclusive: [1, 1*2, 1*2*3]; exclusive: [1, 1, 1*2];
  // reverse: [1*2*3, 2*3, 3]; reverse exclusive: [2*3, 3, 1].
  const Tensor x = floats({3}, {1, 2, 3});
  require_values(run_cumulative("CumProd", 26, x, 0, 0, 0), {3}, {1, 2, 6});
  require_values(run_cumulative("CumProd", 26, x, 0, 1, 0), {3}, {1, 1, 2});
  require_values(run_cumulative("CumProd", 26, x, 0, 0, 1), {3}, {6, 6, 3});
  require_values(run_cumulative("CumProd", 26, x, 0, 1, 1), {3}, {6, 3, 1});
}

TEST_CASE("CumSum along the last axis of a matrix, given as -1", "[ops][cumsum]") {
  // Each row on its own: [1, 2, 3] -> [1, 3, 6]; [4, 5, 6] -> [4, 9, 15].
  Tensor y = run_cumulative("CumSum", 11, floats({2, 3}, {1, 2, 3, 4, 5, 6}), -1, 0, 0);
  require_values(y, {2, 3}, {1, 3, 6, 4, 9, 15});
}

TEST_CASE("CumProd of int32 wraps on overflow and keeps the type", "[ops][cumprod]") {
  // 65536 * 65536 = 2^32, which is 0 modulo 2^32.
  Tensor x = Tensor::from_vector<int32_t>({3}, {65536, 65536, 3});
  Tensor y = run_cumulative("CumProd", 26, x, 0, 0, 0);
  REQUIRE(y.dtype() == DType::i32);
  require_values(y, {3}, {65536, 0, 0});
}

TEST_CASE("CumSum errors: bad axis, bad axis type, unsupported element type",
          "[ops][cumsum]") {
  OneNode out_of_range(14, "CumSum", {{DType::f32, {2, 3}}}, {}, {axis_scalar(2)});
  REQUIRE_THROWS_WITH(out_of_range.infer(),
                      Catch::Contains("node 'n'") && Catch::Contains("axis"));
  OneNode float_axis(14, "CumSum", {{DType::f32, {3}}}, {}, {floats({}, {0})});
  REQUIRE_THROWS_WITH(float_axis.infer(), Catch::Contains("axis must be a scalar i32 or i64"));
  OneNode booleans(14, "CumSum", {{DType::boolean, {3}}}, {}, {axis_scalar(0)});
  REQUIRE_THROWS_WITH(booleans.infer(), Catch::Contains("element type bool"));
  OneNode scalar(26, "CumProd", {{DType::f32, {}}}, {}, {axis_scalar(0)});
  REQUIRE_THROWS_WITH(scalar.infer(), Catch::Contains("scalar"));
}
