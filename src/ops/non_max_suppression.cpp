// NonMaxSuppression: the boxes an object detector keeps, class by class. Course module 2.
//
// Inputs: boxes [batches, boxes, 4], scores [batches, classes, boxes], and optional scalars
// max_output_boxes_per_class (default 0: keep none), iou_threshold (default 0) and
// score_threshold (default: none). For each batch and class, greedily:
//   candidates = boxes whose score > score_threshold, best score first (ties: lower index)
//   while candidates remain and fewer than max_output_boxes_per_class are kept:
//     keep the best candidate b;
//     drop every candidate c with IoU(b, c) > iou_threshold
// where IoU = area(b ∩ c) / area(b ∪ c). The output is one row [batch, class, box] per
// kept box, in that order: int64 [kept, 3].
// center_point_box = 0 (default) gives a box as two opposite corners [y1, x1, y2, x2] in
// either order; 1 as [x_center, y_center, width, height].
//
// How many boxes are kept depends on the input values, not only their shapes. minic
// compiles for static shapes, so the shape rule needs every input's value (given inputs
// are frozen into constants, see shape inference): it runs the selection itself.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include <algorithm>
#include <array>
#include <limits>
#include <numeric>

#include "minic/ops/op.h"

namespace minic {

namespace {

// A box as [y_min, x_min, y_max, x_max], whatever its encoding.
using Box = std::array<double, 4>;

Box read_box(const Tensor& boxes, int64_t first, bool center_point) {
  const double a = boxes.as_double(first), b = boxes.as_double(first + 1);
  const double c = boxes.as_double(first + 2), d = boxes.as_double(first + 3);
  if (center_point) return {b - d / 2, a - c / 2, b + d / 2, a + c / 2};
  return {std::min(a, c), std::min(b, d), std::max(a, c), std::max(b, d)};
}

double area(const Box& box) { return (box[2] - box[0]) * (box[3] - box[1]); }

// Intersection over union; 0 where the boxes do not overlap or either is empty.
double iou(const Box& p, const Box& q) {
  const double height = std::min(p[2], q[2]) - std::max(p[0], q[0]);
  const double width = std::min(p[3], q[3]) - std::max(p[1], q[1]);
  if (height <= 0 || width <= 0 || area(p) <= 0 || area(q) <= 0) return 0;
  const double intersection = height * width;
  return intersection / (area(p) + area(q) - intersection);
}

void check_inputs(const NodeContext& ctx, const TensorType& boxes, const TensorType& scores) {
  if (boxes.rank() != 3 || boxes.shape[2] != 4) {
    ctx.fail("boxes must be [batches, boxes, 4], not {}", type_string(boxes));
  }
  if (scores.rank() != 3 || scores.shape[0] != boxes.shape[0] ||
      scores.shape[2] != boxes.shape[1]) {
    ctx.fail("scores must be [batches, classes, boxes] = [{}, classes, {}], not {}", boxes.shape[0],
             boxes.shape[1], type_string(scores));
  }
  if (!is_float(boxes.dtype) || !is_float(scores.dtype)) {
    ctx.fail("boxes and scores must be floating point, not {} and {}", dtype_name(boxes.dtype),
             dtype_name(scores.dtype));
  }
  const int64_t center_point_box = ctx.get_int("center_point_box", 0);
  if (center_point_box != 0 && center_point_box != 1) {
    ctx.fail("center_point_box must be 0 or 1, not {}", center_point_box);
  }
}

// An optional scalar input as a double, or `fallback` where it is omitted (null) or empty.
double optional_scalar(const NodeContext& ctx, const Tensor* value, const char* what,
                       double fallback) {
  if (!value || value->num_elements() == 0) return fallback;
  if (value->num_elements() != 1) {
    ctx.fail("{} must hold one value, not {}", what, type_string(value->type()));
  }
  return value->as_double(0);
}

// The kept boxes as [batch, class, box] rows, flattened. `limits` holds inputs 2..4 (each
// null where omitted).
std::vector<int64_t> select_boxes(const NodeContext& ctx, const Tensor& boxes, const Tensor& scores,
                                  std::array<const Tensor*, 3> limits) {
  check_inputs(ctx, boxes.type(), scores.type());
  const double max_kept =
      std::max(0.0, optional_scalar(ctx, limits[0], "max_output_boxes_per_class", 0));
  const double iou_threshold = optional_scalar(ctx, limits[1], "iou_threshold", 0);
  const double score_threshold =
      optional_scalar(ctx, limits[2], "score_threshold", -std::numeric_limits<double>::infinity());
  if (iou_threshold < 0 || iou_threshold > 1) {
    ctx.fail("iou_threshold must lie in [0, 1], not {}", iou_threshold);
  }
  const bool center_point = ctx.get_int("center_point_box", 0) == 1;
  const int64_t batches = boxes.shape()[0], count = boxes.shape()[1];
  const int64_t classes = scores.shape()[1];

  std::vector<int64_t> rows;
  for (int64_t batch = 0; batch < batches; ++batch) {
    std::vector<Box> batch_boxes;
    for (int64_t b = 0; b < count; ++b) {
      batch_boxes.push_back(read_box(boxes, (batch * count + b) * 4, center_point));
    }
    for (int64_t cls = 0; cls < classes; ++cls) {
      const int64_t score_base = (batch * classes + cls) * count;
      std::vector<int64_t> candidates;
      for (int64_t b = 0; b < count; ++b) {
        if (scores.as_double(score_base + b) > score_threshold) candidates.push_back(b);
      }
      // Best score first; stable, so equal scores keep the lower index first.
      std::stable_sort(candidates.begin(), candidates.end(), [&](int64_t p, int64_t q) {
        return scores.as_double(score_base + p) > scores.as_double(score_base + q);
      });
      std::vector<int64_t> kept;
      for (int64_t candidate : candidates) {
        if (static_cast<double>(kept.size()) >= max_kept) break;
        const bool suppressed = std::any_of(kept.begin(), kept.end(), [&](int64_t k) {
          return iou(batch_boxes[k], batch_boxes[candidate]) > iou_threshold;
        });
        if (suppressed) continue;
        kept.push_back(candidate);
        rows.insert(rows.end(), {batch, cls, candidate});
      }
    }
  }
  return rows;
}

std::vector<TensorType> nms_shape(const ShapeContext& ctx) {
  check_inputs(ctx, ctx.input_type(0), ctx.input_type(1));
  for (size_t i = 2; i < 5; ++i) {
    if (ctx.has_input(i) && ctx.input_type(i).num_elements() > 1) {
      ctx.fail("input {} must be a scalar, not {}", i, type_string(ctx.input_type(i)));
    }
  }
  std::array<const Tensor*, 3> limits{};
  for (size_t i = 2; i < 5; ++i) {
    if (ctx.has_input(i)) limits[i - 2] = &ctx.input_value(i);
  }
  const auto rows = select_boxes(ctx, ctx.input_value(0), ctx.input_value(1), limits);
  return {{DType::i64, {static_cast<int64_t>(rows.size()) / 3, 3}}};
}

std::vector<Tensor> nms_kernel(const KernelContext& ctx) {
  std::array<const Tensor*, 3> limits{};
  for (size_t i = 2; i < 5; ++i) {
    if (ctx.has_input(i)) limits[i - 2] = &ctx.input(i);
  }
  const auto rows = select_boxes(ctx, ctx.input(0), ctx.input(1), limits);
  const Shape shape = ctx.output_type(0).shape;
  if (static_cast<int64_t>(rows.size()) != num_elements(shape)) {
    ctx.fail(
        "keeps {} boxes, but its shape was inferred for {}: the inputs changed after "
        "shape inference",
        rows.size() / 3, shape[0]);
  }
  return single_output(Tensor::from_vector<int64_t>(shape, rows));
}

}  // namespace

void register_non_max_suppression_ops(OpRegistry& registry) {
  registry.add({.name = "NonMaxSuppression",
                .min_opset = 10,
                .min_inputs = 2,
                .max_inputs = 5,
                .shape_rule = nms_shape,
                .kernel = nms_kernel});
}

}  // namespace minic
