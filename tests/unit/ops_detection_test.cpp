// Unit tests for NonMaxSuppression: boxes worked out by hand in the comments. Course
// module 2.
#include "ops_test_util.h"

using namespace minic;
using namespace minic::test;

namespace {

// Two unit boxes [y1, x1, y2, x2] that overlap by half their width: the intersection is
// 0.5, the union 1.5, so IoU = 1/3. The first scores higher.
const Tensor kBoxes = floats({1, 2, 4}, {0, 0, 1, 1, 0, 0.5f, 1, 1.5f});
const Tensor kScores = floats({1, 1, 2}, {0.9f, 0.8f});

Tensor keep(float iou_threshold, int64_t max_boxes) {
  OneNode g(11, "NonMaxSuppression", {}, {},
            {kBoxes, kScores, int64s({1}, {max_boxes}), floats({1}, {iou_threshold})});
  return g.run({});
}

}  // namespace

TEST_CASE("NonMaxSuppression drops a box whose IoU with a kept one passes the threshold",
          "[ops][nms]") {
  // IoU 1/3 > 0.3: the second box goes; 1/3 <= 0.5: both stay, best score first.
  require_values(keep(0.3f, 10), {1, 3}, {0, 0, 0});
  require_values(keep(0.5f, 10), {2, 3}, {0, 0, 0, 0, 0, 1});
  // At most one box per class, whatever the threshold.
  require_values(keep(0.5f, 1), {1, 3}, {0, 0, 0});
}

TEST_CASE("NonMaxSuppression reads centre-point boxes", "[ops][nms]") {
  // The same two boxes as [x_centre, y_centre, width, height].
  const Tensor centred = floats({1, 2, 4}, {0.5f, 0.5f, 1, 1, 1, 0.5f, 1, 1});
  OneNode g(11, "NonMaxSuppression", {}, {{"center_point_box", int64_t{1}}},
            {centred, kScores, int64s({1}, {10}), floats({1}, {0.3f})});
  require_values(g.run({}), {1, 3}, {0, 0, 0});
}

TEST_CASE("NonMaxSuppression refuses malformed inputs and unknown values", "[ops][nms]") {
  OneNode bad_boxes(11, "NonMaxSuppression", {}, {},
                    {floats({1, 2, 3}, std::vector<float>(6)), kScores});
  REQUIRE_THROWS_WITH(bad_boxes.infer(), Catch::Contains("boxes must be [batches, boxes, 4]"));
  OneNode bad_mode(11, "NonMaxSuppression", {}, {{"center_point_box", int64_t{2}}},
                   {kBoxes, kScores});
  REQUIRE_THROWS_WITH(bad_mode.infer(), Catch::Contains("center_point_box must be 0 or 1"));
  // The number of boxes kept depends on the boxes' values.
  OneNode unknown(11, "NonMaxSuppression", {{DType::f32, {1, 2, 4}}}, {}, {kScores});
  REQUIRE_THROWS_WITH(unknown.infer(), Catch::Contains("value"));
}
