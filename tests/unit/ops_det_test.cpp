// Unit tests for Det (src/ops/det.cpp), worked out by hand in the comments. Course module 2.
#include "ops_test_util.h"

using namespace minic;
using namespace minic::test;

TEST_CASE("Det of a 2 x 2 matrix is ad - bc", "[ops][det]") {
  // [[1, 2], [3, 4]]: 1 * 4 - 2 * 3 = -2.
  OneNode g(11, "Det", {{DType::f32, {2, 2}}});
  require_values(g.run({floats({2, 2}, {1, 2, 3, 4})}), {}, {-2});
}

TEST_CASE("Det over a batch, with a row swap and a singular matrix", "[ops][det]") {
  // [[2, 0], [0, 3]] = 6; [[0, 1], [1, 0]] needs a pivot swap: -1;
  // [[1, 2], [2, 4]] has dependent rows: 0.
  OneNode g(22, "Det", {{DType::f64, {3, 2, 2}}});
  Tensor x = Tensor::from_vector<double>({3, 2, 2}, {2, 0, 0, 3, 0, 1, 1, 0, 1, 2, 2, 4});
  Tensor y = g.run({x});
  REQUIRE(y.dtype() == DType::f64);
  require_values(y, {3}, {6, -1, 0});
}

TEST_CASE("Det of a 3 x 3 matrix by elimination", "[ops][det]") {
  // [[2, 1, 0], [1, 3, 1], [0, 1, 4]]: 2 * (12 - 1) - 1 * (4 - 0) + 0 = 18.
  OneNode g(11, "Det", {{DType::f16, {3, 3}}});
  Tensor x = floats({3, 3}, {2, 1, 0, 1, 3, 1, 0, 1, 4}).cast(DType::f16);
  require_values(g.run({x}), {}, {18});
}

TEST_CASE("Det rejects non-square matrices and integer tensors", "[ops][det]") {
  OneNode square(11, "Det", {{DType::f32, {2, 3}}});
  REQUIRE_THROWS_WITH(square.infer(), Catch::Contains("must be square matrices"));
  OneNode vector(11, "Det", {{DType::f32, {4}}});
  REQUIRE_THROWS_WITH(vector.infer(), Catch::Contains("must be square matrices"));
  OneNode ints(11, "Det", {{DType::i64, {2, 2}}});
  REQUIRE_THROWS_WITH(ints.infer(), Catch::Contains("takes floating-point tensors"));
}
