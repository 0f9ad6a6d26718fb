// Unit tests for GridSample and AffineGrid (src/ops/grid_sample.cpp). Small images whose
// samples are worked out by hand in the comments. Course module 2.
#include "ops_test_util.h"

#include <cmath>

using namespace minic;
using namespace minic::test;

namespace {

// [[1, 2],
//  [3, 4]]
const Tensor kImage2x2 = floats({1, 1, 2, 2}, {1, 2, 3, 4});

}  // namespace

// --- GridSample ---------------------------------------------------------------------------------

TEST_CASE("GridSample linear with align_corners interpolates between pixel centres",
          "[ops][gridsample]") {
  // align_corners = 1 maps -1 and 1 to the corner pixels' centres: x = (u + 1) / 2 * (2 - 1).
  //   (0, 0)   -> (x, y) = (0.5, 0.5): the mean of all four pixels, 2.5
  //   (-1, -1) -> (0, 0): pixel 1
  //   (1, -1)  -> (1, 0): pixel 2
  OneNode g(20, "GridSample", {{DType::f32, {1, 1, 2, 2}}, {DType::f32, {1, 1, 3, 2}}},
            {{"align_corners", int64_t{1}}});
  Tensor grid = floats({1, 1, 3, 2}, {0, 0, -1, -1, 1, -1});
  require_values(g.run({kImage2x2, grid}), {1, 1, 1, 3}, {2.5, 1, 2});
}

TEST_CASE("GridSample nearest rounds halves to the even pixel", "[ops][gridsample]") {
  // align_corners = 0: x = ((u + 1) * 2 - 1) / 2.
  //   (0.5, -0.5) -> (1, 0): pixel 2
  //   (0, 0)      -> (0.5, 0.5), rounded to (0, 0): pixel 1
  //   (0.6, 0.6)  -> (1.1, 1.1), rounded to (1, 1): pixel 4
  OneNode g(20, "GridSample", {{DType::f32, {1, 1, 2, 2}}, {DType::f32, {1, 3, 1, 2}}},
            {{"mode", std::string("nearest")}});
  Tensor grid = floats({1, 3, 1, 2}, {0.5f, -0.5f, 0, 0, 0.6f, 0.6f});
  require_values(g.run({kImage2x2, grid}), {1, 1, 3, 1}, {2, 1, 4});
}

TEST_CASE("GridSample padding modes treat a position left of the image differently",
          "[ops][gridsample]") {
  // X = [10, 20] (H = 1, W = 2), align_corners = 0: u = -2 is x = (-1 * 2 - 1) / 2 = -1.5,
  // outside [-0.5, 1.5]; y = 0 for H = 1.
  //   zeros:      reads pixels -2 and -1, both outside: 0
  //   border:     x is clamped to 0: pixel 10
  //   reflection: x is mirrored at -0.5 to 0.5, halfway between the pixels: 15
  Tensor x = floats({1, 1, 1, 2}, {10, 20});
  Tensor grid = floats({1, 1, 1, 2}, {-2, 0});
  for (auto [mode, expected] : {std::pair<const char*, double>{"zeros", 0},
                                {"border", 10}, {"reflection", 15}}) {
    INFO(mode);
    OneNode g(20, "GridSample", {{DType::f32, {1, 1, 1, 2}}, {DType::f32, {1, 1, 1, 2}}},
              {{"padding_mode", std::string(mode)}});
    require_values(g.run({x, grid}), {1, 1, 1, 1}, {expected});
  }
}

TEST_CASE("GridSample cubic weighs four pixels with Keys' kernel", "[ops][gridsample]") {
  // X = [0, 1, 0, 0], align_corners = 1: u = 0 is x = 1.5, between pixels 1 and 2. Keys'
  // weights at t = 0.5 (a = -0.75) are -0.09375, 0.59375, 0.59375, -0.09375, so the
  // sample is 0.59375 * 1.
  OneNode g(20, "GridSample", {{DType::f32, {1, 1, 1, 4}}, {DType::f32, {1, 1, 1, 2}}},
            {{"mode", std::string("cubic")}, {"align_corners", int64_t{1}}});
  Tensor x = floats({1, 1, 1, 4}, {0, 1, 0, 0});
  require_values(g.run({x, floats({1, 1, 1, 2}, {0, 0})}), {1, 1, 1, 1}, {0.59375});
}

TEST_CASE("GridSample 5-D samples a volume with (x, y, z) positions", "[ops][gridsample]") {
  // X is 2 x 1 x 2 (D, H, W) = [[[1, 2]], [[3, 4]]]; with align_corners the position
  // (x, y, z) = (1, 0, 1) is W index 1, D index 1: pixel 4; (-1, 0, 0) is the mean of 1 and 3.
  OneNode g(20, "GridSample", {{DType::f32, {1, 1, 2, 1, 2}}, {DType::f32, {1, 2, 1, 1, 3}}},
            {{"align_corners", int64_t{1}}});
  Tensor x = floats({1, 1, 2, 1, 2}, {1, 2, 3, 4});
  Tensor grid = floats({1, 2, 1, 1, 3}, {1, 0, 1, -1, 0, 0});
  require_values(g.run({x, grid}), {1, 1, 2, 1, 1}, {4, 2});
}

TEST_CASE("GridSample gives NaN for a NaN position", "[ops][gridsample]") {
  OneNode g(20, "GridSample", {{DType::f32, {1, 1, 2, 2}}, {DType::f32, {1, 1, 2, 2}}},
            {{"padding_mode", std::string("reflection")}});
  Tensor y = g.run({kImage2x2, floats({1, 1, 2, 2}, {NAN, 0, 0, 0})});
  REQUIRE(y.shape() == Shape{1, 1, 1, 2});
  REQUIRE(std::isnan(y.as_double(0)));
  REQUIRE(y.as_double(1) == Approx(2.5));
}

TEST_CASE("GridSample rejects opset 20 names at opset 16, 5-D at 16 and a bad grid",
          "[ops][gridsample]") {
  OneNode linear16(16, "GridSample", {{DType::f32, {1, 1, 2, 2}}, {DType::f32, {1, 1, 1, 2}}},
                   {{"mode", std::string("linear")}});
  REQUIRE_THROWS_WITH(linear16.infer(), Catch::Contains("attribute mode is 'linear'"));
  OneNode bilinear20(20, "GridSample", {{DType::f32, {1, 1, 2, 2}}, {DType::f32, {1, 1, 1, 2}}},
                     {{"mode", std::string("bilinear")}});
  REQUIRE_THROWS_WITH(bilinear20.infer(), Catch::Contains("attribute mode is 'bilinear'"));
  OneNode volume16(16, "GridSample",
                   {{DType::f32, {1, 1, 2, 2, 2}}, {DType::f32, {1, 1, 1, 1, 3}}});
  REQUIRE_THROWS_WITH(volume16.infer(), Catch::Contains("must be 4-D"));
  OneNode grid(20, "GridSample", {{DType::f32, {1, 1, 2, 2}}, {DType::f32, {1, 1, 1, 3}}});
  REQUIRE_THROWS_WITH(grid.infer(), Catch::Contains("must have shape (N, o1, ..., o2, 2)"));
  OneNode padding(20, "GridSample", {{DType::f32, {1, 1, 2, 2}}, {DType::f32, {1, 1, 1, 2}}},
                  {{"padding_mode", std::string("wrap")}});
  REQUIRE_THROWS_WITH(padding.infer(), Catch::Contains("attribute padding_mode is 'wrap'"));
}

// --- AffineGrid ---------------------------------------------------------------------------------

TEST_CASE("AffineGrid maps the pixel centres through theta", "[ops][affinegrid]") {
  // A 2 x 2 image has centres at -0.5 and 0.5 (align_corners = 0) or -1 and 1 (= 1).
  // theta = [[2, 0, 1], [0, 1, 0]] sends (x, y) to (2x + 1, y).
  Tensor theta = floats({1, 2, 3}, {2, 0, 1, 0, 1, 0});
  OneNode g(20, "AffineGrid", {{DType::f32, {1, 2, 3}}}, {}, {int64s({4}, {1, 1, 2, 2})});
  require_values(g.run({theta}), {1, 2, 2, 2}, {0, -0.5, 2, -0.5, 0, 0.5, 2, 0.5});
  OneNode corners(20, "AffineGrid", {{DType::f32, {1, 2, 3}}}, {{"align_corners", int64_t{1}}},
                  {int64s({4}, {1, 1, 2, 2})});
  require_values(corners.run({theta}), {1, 2, 2, 2}, {-1, -1, 3, -1, -1, 1, 3, 1});
}

TEST_CASE("AffineGrid in 3-D gives (N, D, H, W, 3)", "[ops][affinegrid]") {
  // The identity theta returns the centres themselves: a 1 x 1 x 2 volume has x = -0.5, 0.5
  // and y = z = 0.
  Tensor theta = floats({1, 3, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0});
  OneNode g(20, "AffineGrid", {{DType::f32, {1, 3, 4}}}, {}, {int64s({5}, {1, 1, 1, 1, 2})});
  require_values(g.run({theta}), {1, 1, 1, 2, 3}, {-0.5, 0, 0, 0.5, 0, 0});
}

TEST_CASE("AffineGrid rejects a bad theta and a size of the wrong length", "[ops][affinegrid]") {
  OneNode bad_theta(20, "AffineGrid", {{DType::f32, {1, 2, 4}}}, {}, {int64s({4}, {1, 1, 2, 2})});
  REQUIRE_THROWS_WITH(bad_theta.infer(), Catch::Contains("theta must be (N, 2, 3) or (N, 3, 4)"));
  OneNode bad_size(20, "AffineGrid", {{DType::f32, {1, 2, 3}}}, {}, {int64s({5}, {1, 1, 2, 2, 2})});
  REQUIRE_THROWS_WITH(bad_size.infer(), Catch::Contains("size has 5 elements"));
  OneNode bad_batch(20, "AffineGrid", {{DType::f32, {1, 2, 3}}}, {}, {int64s({4}, {2, 1, 2, 2})});
  REQUIRE_THROWS_WITH(bad_batch.infer(), Catch::Contains("size gives N = 2"));
}
