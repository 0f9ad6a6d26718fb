// Unit tests for RoiAlign (src/ops/roi_align.cpp), worked out by hand in the comments.
// Course module 2.
#include "ops_test_util.h"

#include <cmath>

using namespace minic;
using namespace minic::test;

namespace {

// [[1, 2],
//  [3, 4]]
const Tensor kImage = floats({1, 1, 2, 2}, {1, 2, 3, 4});

const std::vector<TensorType> kInputs = {
    {DType::f32, {1, 1, 2, 2}}, {DType::f32, {1, 4}}, {DType::i64, {1}}};

}  // namespace

TEST_CASE("RoiAlign averages bilinear samples of each bin", "[ops][roialign]") {
  // Box (0, 0, 2, 2), 2 x 2 bins of one sample each, output_half_pixel (no shift): the
  // samples are at (y, x) = (0.5, 0.5), (0.5, 1.5), (1.5, 0.5), (1.5, 1.5). Coordinates past
  // the last pixel clamp to it: 2.5, (2 + 4) / 2 = 3, (3 + 4) / 2 = 3.5, 4.
  OneNode g(16, "RoiAlign", kInputs,
            {{"output_height", int64_t{2}}, {"output_width", int64_t{2}},
             {"sampling_ratio", int64_t{1}},
             {"coordinate_transformation_mode", std::string("output_half_pixel")}});
  Tensor y = g.run({kImage, floats({1, 4}, {0, 0, 2, 2}), int64s({1}, {0})});
  require_values(y, {1, 1, 2, 2}, {2.5, 3, 3.5, 4});
}

TEST_CASE("RoiAlign half_pixel shifts the box by half a pixel", "[ops][roialign]") {
  // Box (0, 0, 1, 1) shifted to (-0.5, -0.5, 0.5, 0.5): one bin, one sample at (0, 0): 1.
  OneNode g(16, "RoiAlign", kInputs, {{"sampling_ratio", int64_t{1}}});
  Tensor y = g.run({kImage, floats({1, 4}, {0, 0, 1, 1}), int64s({1}, {0})});
  require_values(y, {1, 1, 1, 1}, {1});
}

TEST_CASE("RoiAlign max takes the largest weighted corner of a sample", "[ops][roialign]") {
  // Box (0, 0, 1, 1) unshifted: one sample at (0.5, 0.5), whose corners weigh 0.25 each.
  // avg gives 2.5; max, as ONNX's reference defines it, gives 0.25 * 4 = 1.
  Attributes attributes = {{"sampling_ratio", int64_t{1}}, {"mode", std::string("max")},
                           {"coordinate_transformation_mode", std::string("output_half_pixel")}};
  OneNode g(16, "RoiAlign", kInputs, attributes);
  Tensor y = g.run({kImage, floats({1, 4}, {0, 0, 1, 1}), int64s({1}, {0})});
  require_values(y, {1, 1, 1, 1}, {1});
}

TEST_CASE("RoiAlign rejects bad modes, bad rois and a batch index out of range",
          "[ops][roialign]") {
  OneNode mode(16, "RoiAlign", kInputs, {{"mode", std::string("min")}});
  REQUIRE_THROWS_WITH(mode.infer(), Catch::Contains("mode is 'min'"));
  OneNode coordinates(16, "RoiAlign", kInputs,
                      {{"coordinate_transformation_mode", std::string("asymmetric")}});
  REQUIRE_THROWS_WITH(coordinates.infer(), Catch::Contains("'asymmetric'"));
  OneNode rois(16, "RoiAlign",
               {{DType::f32, {1, 1, 2, 2}}, {DType::f32, {1, 5}}, {DType::i64, {1}}});
  REQUIRE_THROWS_WITH(rois.infer(), Catch::Contains("rois must be (num_rois, 4)"));
  OneNode batch(16, "RoiAlign", kInputs);
  REQUIRE_THROWS_WITH(batch.run({kImage, floats({1, 4}, {0, 0, 1, 1}), int64s({1}, {1})}),
                      Catch::Contains("batch_indices[0] = 1 is not an image of X"));
  OneNode nan(16, "RoiAlign", kInputs);
  REQUIRE_THROWS_WITH(nan.run({kImage, floats({1, 4}, {0, 0, NAN, 1}), int64s({1}, {0})}),
                      Catch::Contains("is not four finite numbers"));
  OneNode huge(16, "RoiAlign", kInputs);
  REQUIRE_THROWS_WITH(huge.run({kImage, floats({1, 4}, {0, 0, 1e9f, 1e9f}), int64s({1}, {0})}),
                      Catch::Contains("set sampling_ratio"));
}
