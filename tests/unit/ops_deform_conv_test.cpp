// Unit tests for DeformConv: a 1x1 kernel whose sampling points move half a pixel to the
// right, worked out by hand. Course module 2.
#include "ops_test_util.h"

using namespace minic;
using namespace minic::test;

TEST_CASE("DeformConv samples between pixels, with zero outside the image", "[ops][deform_conv]") {
  // X = [[1 2] [3 4]], W = 1, every tap offset by (0, 0.5): output (i, j) reads X at
  // (i, j + 0.5). Row 0: (1+2)/2 = 1.5, then half of 2 and half of the zero outside = 1.
  // Row 1: (3+4)/2 = 3.5, then 4/2 = 2.
  Tensor offset = floats({1, 2, 2, 2}, {0, 0, 0, 0, 0.5f, 0.5f, 0.5f, 0.5f});
  OneNode g(19, "DeformConv", {}, {},
            {floats({1, 1, 2, 2}, {1, 2, 3, 4}), floats({1, 1, 1, 1}, {1}), offset});
  require_values(g.run({}), {1, 1, 2, 2}, {1.5, 1, 3.5, 2});
}

TEST_CASE("DeformConv refuses inputs of the wrong form", "[ops][deform_conv]") {
  OneNode rank(19, "DeformConv",
               {{DType::f32, {1, 1, 4}}, {DType::f32, {1, 1, 1}}, {DType::f32, {1, 2, 4}}});
  REQUIRE_THROWS_WITH(rank.infer(), Catch::Contains("2-D DeformConv only"));
  OneNode offset(
      19, "DeformConv",
      {{DType::f32, {1, 1, 2, 2}}, {DType::f32, {1, 1, 1, 1}}, {DType::f32, {1, 4, 2, 2}}});
  REQUIRE_THROWS_WITH(offset.infer(),
                      Catch::Contains("offset must be [1, offset_group*kH*kW*2 = 2"));
}
