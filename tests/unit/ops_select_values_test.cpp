// Unit tests for Compress, NonZero and Unique, the ops whose output shape depends on an
// input's value: small cases worked out by hand, the error for a value not known before
// running, and the errors for bad arguments. Course module 2.
#include "ops_test_util.h"

#include <limits>

using namespace minic;
using namespace minic::test;

namespace {

Tensor bools(Shape shape, std::vector<bool> values) {
  return Tensor::from_vector<bool>(std::move(shape), values);
}

const Tensor kMatrix = floats({3, 2}, {1, 2, 3, 4, 5, 6});

}  // namespace

// --- Compress -----------------------------------------------------------------------------------

TEST_CASE("Compress keeps the rows, columns or elements the condition selects",
          "[ops][compress]") {
  // Rows of [[1 2], [3 4], [5 6]] where [true, false, true]: [[1 2], [5 6]].
  OneNode rows(11, "Compress", {kMatrix.type()}, {{"axis", int64_t{0}}},
               {bools({3}, {true, false, true})});
  require_values(rows.run({kMatrix}), {2, 2}, {1, 2, 5, 6});
  // Column -1 (the last) where [false, true]: [[2], [4], [6]].
  OneNode columns(11, "Compress", {kMatrix.type()}, {{"axis", int64_t{-1}}},
                  {bools({2}, {false, true})});
  require_values(columns.run({kMatrix}), {3, 1}, {2, 4, 6});
  // No axis: the flattened [1 2 3 4 5 6] where [false, true, true] (the rest dropped): [2 3].
  OneNode flat(9, "Compress", {kMatrix.type()}, {}, {bools({3}, {false, true, true})});
  require_values(flat.run({kMatrix}), {2}, {2, 3});
}

TEST_CASE("Compress errors: condition type, true past the end, unknown condition",
          "[ops][compress]") {
  OneNode not_bool(11, "Compress", {kMatrix.type()}, {{"axis", int64_t{0}}},
                   {int64s({3}, {1, 0, 1})});
  REQUIRE_THROWS_WITH(not_bool.infer(), Catch::Contains("1-D bool tensor"));
  OneNode past_end(11, "Compress", {kMatrix.type()}, {{"axis", int64_t{1}}},
                   {bools({3}, {true, false, true})});
  REQUIRE_THROWS_WITH(past_end.infer(),
                      Catch::Contains("node 'n'") && Catch::Contains("condition[2] is true"));
  OneNode unknown(11, "Compress", {kMatrix.type(), {DType::boolean, {3}}},
                  {{"axis", int64_t{0}}});
  REQUIRE_THROWS_WITH(unknown.infer(), Catch::Contains("static shapes"));
  OneNode old_negative(9, "Compress", {kMatrix.type()}, {{"axis", int64_t{-1}}},
                       {bools({2}, {true, true})});
  REQUIRE_THROWS_WITH(old_negative.infer(), Catch::Contains("negative axis needs opset 11"));
}

// --- NonZero ------------------------------------------------------------------------------------

TEST_CASE("NonZero lists the coordinates of the nonzero elements", "[ops][nonzero]") {
  // [[0 7 0], [NaN 0 2]]: nonzero at (0,1), (1,0) (NaN != 0) and (1,2), so the rows are
  // [0 1 1] and [1 0 2].
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OneNode g(13, "NonZero", {}, {}, {floats({2, 3}, {0, 7, 0, nan, 0, 2})});
  Tensor y = g.run({});
  REQUIRE(y.dtype() == DType::i64);
  require_values(y, {2, 3}, {0, 1, 1, 1, 0, 2});
  // Nothing nonzero: a [rank, 0] result.
  OneNode none(9, "NonZero", {}, {}, {int64s({4}, {0, 0, 0, 0})});
  require_values(none.run({}), {1, 0}, {});
}

TEST_CASE("NonZero of an input not known before running is a static-shape error",
          "[ops][nonzero]") {
  OneNode g(13, "NonZero", {{DType::f32, {4}}});
  REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("static shapes"));
}

// --- Unique -------------------------------------------------------------------------------------

TEST_CASE("Unique of [2 1 1 3 4 3], sorted and in order of appearance", "[ops][unique]") {
  // Sorted: Y = [1 2 3 4], first at [1 0 3 4], X maps to [1 0 0 2 3 2], counts [2 1 2 1].
  const Tensor x = floats({6}, {2, 1, 1, 3, 4, 3});
  OneNode sorted(11, "Unique", {}, {}, {x}, 4);
  std::vector<Tensor> s = sorted.run_all({});
  require_values(s[0], {4}, {1, 2, 3, 4});
  require_values(s[1], {4}, {1, 0, 3, 4});
  require_values(s[2], {6}, {1, 0, 0, 2, 3, 2});
  require_values(s[3], {4}, {2, 1, 2, 1});
  // Unsorted: Y = [2 1 3 4], first at [0 1 3 4], X maps to [0 1 1 2 3 2], counts [1 2 2 1].
  OneNode appearance(11, "Unique", {}, {{"sorted", int64_t{0}}}, {x}, 4);
  std::vector<Tensor> a = appearance.run_all({});
  require_values(a[0], {4}, {2, 1, 3, 4});
  require_values(a[1], {4}, {0, 1, 3, 4});
  require_values(a[2], {6}, {0, 1, 1, 2, 3, 2});
  require_values(a[3], {4}, {1, 2, 2, 1});
}

TEST_CASE("Unique along an axis compares whole slices", "[ops][unique]") {
  // Columns of [[1 0 1], [2 3 2]] are [1 2], [0 3], [1 2]: two distinct, sorted
  // lexicographically [0 3] < [1 2]. Y = [[0 1], [3 2]], first at [1 0], inverse [1 0 1].
  OneNode g(11, "Unique", {}, {{"axis", int64_t{1}}}, {floats({2, 3}, {1, 0, 1, 2, 3, 2})}, 4);
  std::vector<Tensor> out = g.run_all({});
  require_values(out[0], {2, 2}, {0, 1, 3, 2});
  require_values(out[1], {2}, {1, 0});
  require_values(out[2], {3}, {1, 0, 1});
  require_values(out[3], {2}, {1, 2});
}

TEST_CASE("Unique errors: bad sorted, bad axis, unknown input", "[ops][unique]") {
  OneNode sorted(11, "Unique", {}, {{"sorted", int64_t{3}}}, {floats({2}, {1, 2})});
  REQUIRE_THROWS_WITH(sorted.infer(), Catch::Contains("sorted must be 0 or 1"));
  OneNode axis(11, "Unique", {}, {{"axis", int64_t{2}}}, {floats({2}, {1, 2})});
  REQUIRE_THROWS_WITH(axis.infer(), Catch::Contains("node 'n'") && Catch::Contains("axis"));
  OneNode unknown(11, "Unique", {{DType::f32, {2}}});
  REQUIRE_THROWS_WITH(unknown.infer(), Catch::Contains("static shapes"));
}
