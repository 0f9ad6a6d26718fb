// Unit tests for OneHot and EyeLike. Small graphs whose results are worked out by hand in
// the comments. Course module 2.
#include "ops_test_util.h"

using namespace minic;
using namespace minic::test;

// --- OneHot -------------------------------------------------------------------------------------

TEST_CASE("OneHot on the last axis, with a negative and an out-of-range index",
          "[ops][onehot]") {
  // depth 3, values [off, on] = [0, 5]: index 1 -> [0, 5, 0]; -1 counts back to class 2
  // -> [0, 0, 5]; 3 is no class -> [0, 0, 0].
  OneNode g(11, "OneHot", {{DType::i64, {3}}}, {},
            {int64s({}, {3}), floats({2}, {0, 5})});
  require_values(g.run({int64s({3}, {1, -1, 3})}), {3, 3}, {0, 5, 0, 0, 0, 5, 0, 0, 0});
}

TEST_CASE("OneHot at axis 0 puts the classes first", "[ops][onehot]") {
  // indices [0, 2], depth 3 as a float, axis 0: out[c][i] = (indices[i] == c), so the
  // columns are the one-hot rows: [[1, 0], [0, 0], [0, 1]] with off -1 and on 1.
  OneNode g(11, "OneHot", {{DType::i64, {2}}}, {{"axis", int64_t{0}}},
            {floats({1}, {3}), floats({2}, {-1, 1})});
  require_values(g.run({int64s({2}, {0, 2})}), {3, 2}, {1, -1, -1, -1, -1, 1});
}

TEST_CASE("OneHot at opset 9 treats negative indices as no class", "[ops][onehot]") {
  // -1 is outside [0, depth) before opset 11: a row of off values.
  OneNode g(9, "OneHot", {{DType::i64, {2}}}, {},
            {int64s({}, {2}), floats({2}, {0, 1})});
  require_values(g.run({int64s({2}, {-1, 1})}), {2, 2}, {0, 0, 0, 1});
}

TEST_CASE("OneHot rejects bad depth, values and axis", "[ops][onehot]") {
  const std::vector<TensorType> indices = {{DType::i64, {2}}};
  OneNode zero_depth(11, "OneHot", indices, {}, {int64s({}, {0}), floats({2}, {0, 1})});
  REQUIRE_THROWS_WITH(zero_depth.infer(), Catch::Contains("depth is 0; it must be 1 or more"));
  OneNode long_depth(11, "OneHot", indices, {}, {int64s({2}, {2, 2}), floats({2}, {0, 1})});
  REQUIRE_THROWS_WITH(long_depth.infer(), Catch::Contains("depth must be one value"));
  OneNode three_values(11, "OneHot", indices, {}, {int64s({}, {2}), floats({3}, {0, 1, 2})});
  REQUIRE_THROWS_WITH(three_values.infer(), Catch::Contains("values must be a 1-D tensor"));
  OneNode bad_axis(11, "OneHot", indices, {{"axis", int64_t{2}}},
                   {int64s({}, {2}), floats({2}, {0, 1})});
  REQUIRE_THROWS_WITH(bad_axis.infer(), Catch::Contains("axis 2 is out of range for rank 2"));
  // depth given as a graph input is not known before running.
  OneNode unknown_depth(11, "OneHot", {{DType::i64, {2}}, {DType::i64, {}}}, {},
                        {floats({2}, {0, 1})});
  REQUIRE_THROWS_WITH(unknown_depth.infer(), Catch::Contains("depends on the value of input 1"));
}

// --- EyeLike ------------------------------------------------------------------------------------

TEST_CASE("EyeLike puts ones on the main diagonal in the input's type", "[ops][eyelike]") {
  OneNode g(22, "EyeLike", {{DType::i32, {2, 3}}});
  Tensor y = g.run({Tensor(DType::i32, {2, 3})});
  REQUIRE(y.dtype() == DType::i32);
  require_values(y, {2, 3}, {1, 0, 0, 0, 1, 0});
}

TEST_CASE("EyeLike with k and dtype", "[ops][eyelike]") {
  // k = 1: out[i][i + 1] = 1, so [0][1] and [1][2]; row 2 has no column 3. dtype 11 is double.
  OneNode upper(22, "EyeLike", {{DType::f32, {3, 3}}},
                {{"k", int64_t{1}}, {"dtype", int64_t{11}}});
  Tensor y = upper.run({Tensor(DType::f32, {3, 3})});
  REQUIRE(y.dtype() == DType::f64);
  require_values(y, {3, 3}, {0, 1, 0, 0, 0, 1, 0, 0, 0});
  // k = -2: only out[2][0]. dtype 10 is float16.
  OneNode lower(9, "EyeLike", {{DType::f32, {3, 2}}}, {{"k", int64_t{-2}}, {"dtype", int64_t{10}}});
  Tensor z = lower.run({Tensor(DType::f32, {3, 2})});
  REQUIRE(z.dtype() == DType::f16);
  require_values(z, {3, 2}, {0, 0, 0, 0, 1, 0});
}

TEST_CASE("EyeLike rejects inputs that are not matrices and unknown dtypes", "[ops][eyelike]") {
  OneNode vector(22, "EyeLike", {{DType::f32, {3}}});
  REQUIRE_THROWS_WITH(vector.infer(), Catch::Contains("input must be a matrix (rank 2)"));
  OneNode string_type(22, "EyeLike", {{DType::f32, {2, 2}}}, {{"dtype", int64_t{8}}});
  REQUIRE_THROWS_WITH(string_type.infer(), Catch::Contains("dtype 8 is not a number or bool"));
}
