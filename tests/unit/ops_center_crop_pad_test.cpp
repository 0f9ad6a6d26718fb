// Unit tests for CenterCropPad (src/ops/center_crop_pad.cpp), worked out by hand in the
// comments. Course module 2.
#include "ops_test_util.h"

using namespace minic;
using namespace minic::test;

namespace {

// [[0, 1,  2,  3],
//  [4, 5,  6,  7],
//  [8, 9, 10, 11]]
const Tensor kMatrix = floats({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});

}  // namespace

TEST_CASE("CenterCropPad crops one axis and pads another around the centre",
          "[ops][centercroppad]") {
  // Rows 3 -> 2: drop (3 - 2) / 2 = 0 at the start, the odd one at the end: rows 0 and 1.
  // Columns 4 -> 6: one zero on each side.
  OneNode g(18, "CenterCropPad", {{DType::f32, {3, 4}}}, {}, {int64s({2}, {2, 6})});
  require_values(g.run({kMatrix}), {2, 6}, {0, 0, 1, 2, 3, 0, 0, 4, 5, 6, 7, 0});
}

TEST_CASE("CenterCropPad with axes changes only those axes", "[ops][centercroppad]") {
  // axes = [-1]: columns 4 -> 2 keep columns 1 and 2 of every row.
  OneNode g(18, "CenterCropPad", {{DType::f32, {3, 4}}}, {{"axes", Shape{-1}}},
            {int64s({1}, {2})});
  require_values(g.run({kMatrix}), {3, 2}, {1, 2, 5, 6, 9, 10});
}

TEST_CASE("CenterCropPad moves bytes, so integer tensors work too", "[ops][centercroppad]") {
  // [1, 2, 3] padded to 4: the odd zero goes at the end.
  OneNode g(18, "CenterCropPad", {{DType::i64, {3}}}, {}, {int64s({1}, {4})});
  require_values(g.run({int64s({3}, {1, 2, 3})}), {4}, {1, 2, 3, 0});
}

TEST_CASE("CenterCropPad rejects a shape that does not match the axes",
          "[ops][centercroppad]") {
  OneNode count(18, "CenterCropPad", {{DType::f32, {3, 4}}}, {}, {int64s({1}, {2})});
  REQUIRE_THROWS_WITH(count.infer(), Catch::Contains("shape has 1 elements but there are 2"));
  OneNode twice(18, "CenterCropPad", {{DType::f32, {3, 4}}}, {{"axes", Shape{1, -1}}},
                {int64s({2}, {2, 2})});
  REQUIRE_THROWS_WITH(twice.infer(), Catch::Contains("appears twice"));
  OneNode negative(18, "CenterCropPad", {{DType::f32, {3, 4}}}, {}, {int64s({2}, {2, -1})});
  REQUIRE_THROWS_WITH(negative.infer(), Catch::Contains("negative size"));
}
