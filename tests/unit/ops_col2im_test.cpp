// Unit tests for Col2Im (src/ops/col2im.cpp), worked out by hand in the comments.
// Course module 2.
#include "ops_test_util.h"

using namespace minic;
using namespace minic::test;

TEST_CASE("Col2Im adds overlapping blocks back into the image", "[ops][col2im]") {
  // A 1 x 4 image in blocks of 1 x 2 at stride 1: 3 block positions. Column row k = 0 holds
  // each block's left element (pixels 0, 1, 2), row k = 1 its right element (pixels 1, 2, 3):
  //   image = [1, 2 + 10, 3 + 20, 30]
  OneNode g(18, "Col2Im", {{DType::f32, {1, 2, 3}}}, {},
            {int64s({2}, {1, 4}), int64s({2}, {1, 2})});
  Tensor columns = floats({1, 2, 3}, {1, 2, 3, 10, 20, 30});
  require_values(g.run({columns}), {1, 1, 1, 4}, {1, 12, 23, 30});
}

TEST_CASE("Col2Im with strides and pads drops what lands in the padding", "[ops][col2im]") {
  // Image 1 x 3, blocks 1 x 2, stride 2, one pad on each side of the width: the padded
  // width 5 holds blocks at padded positions 0 and 2, i.e. pixels (-1, 0) and (1, 2).
  // Pixel -1 is padding, so the image is [2, 3, 4] from the columns [[1, 3], [2, 4]].
  OneNode g(18, "Col2Im", {{DType::f32, {1, 2, 2}}},
            {{"strides", Shape{1, 2}}, {"pads", Shape{0, 1, 0, 1}}},
            {int64s({2}, {1, 3}), int64s({2}, {1, 2})});
  require_values(g.run({floats({1, 2, 2}, {1, 3, 2, 4})}), {1, 1, 1, 3}, {2, 3, 4});
}

TEST_CASE("Col2Im rejects a block count or channel count that does not fit",
          "[ops][col2im]") {
  OneNode positions(18, "Col2Im", {{DType::f32, {1, 2, 4}}}, {},
                    {int64s({2}, {1, 4}), int64s({2}, {1, 2})});
  REQUIRE_THROWS_WITH(positions.infer(), Catch::Contains("number of block positions"));
  OneNode channels(18, "Col2Im", {{DType::f32, {1, 3, 3}}}, {},
                   {int64s({2}, {1, 4}), int64s({2}, {1, 2})});
  REQUIRE_THROWS_WITH(channels.infer(), Catch::Contains("not a multiple of the block size"));
  OneNode ranks(18, "Col2Im", {{DType::f32, {1, 2, 3}}}, {},
                {int64s({2}, {1, 4}), int64s({1}, {2})});
  REQUIRE_THROWS_WITH(ranks.infer(), Catch::Contains("the same number"));
  OneNode too_big(18, "Col2Im", {{DType::f32, {1, 2, 3}}}, {},
                  {int64s({2}, {1, 1}), int64s({2}, {1, 2})});
  REQUIRE_THROWS_WITH(too_big.infer(), Catch::Contains("does not fit"));
}
