// RoiAlign: pools each region of interest of a feature map into a fixed-size grid of bins,
// sampling the map bilinearly. Course module 2.
//
// X is (N, C, H, W), rois (R, 4) holds boxes (x1, y1, x2, y2) in image coordinates and
// batch_indices (R) says which image of X each box is on. The output is
// (R, C, output_height, output_width). For box r, with s = spatial_scale and the shift
// o = 0.5 (coordinate_transformation_mode half_pixel, the default from opset 16) or 0
// (output_half_pixel, and every RoiAlign before opset 16):
//   start = (x1, y1) * s - o,  size = (x2, y2) * s - o - start  (at least 1 when o = 0)
//   bin   = size / (output_width, output_height)
// Bin (i, j) averages (mode avg) or takes the maximum (mode max) of g_h * g_w sample points
//   y = start_y + i * bin_h + (iy + 0.5) * bin_h / g_h   for iy in [0, g_h), and x alike,
// g = sampling_ratio, or ceil(bin) when sampling_ratio is 0. A sample is X bilinearly
// interpolated at (y, x), after clamping negative coordinates to 0 and coordinates past
// the last pixel to it; a sample with y < -1, y > H, x < -1 or x > W is 0.
// Mode max follows ONNX's reference and ONNX Runtime: a sample's value is the largest of
// its four weighted corners, w * X[corner], not their sum.
// The kernel computes in double. Fusion kind: opaque (positions come from data).
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "float_compute.h"

#include <algorithm>
#include <cmath>

namespace minic {

namespace {

// The most bilinear samples the kernel takes for one roi (all its bins together).
constexpr double kMaxSamplesPerRoi = 1 << 24;

struct RoiAlignAttributes {
  bool max_mode = false;
  bool half_pixel = false;
  int64_t height = 1;
  int64_t width = 1;
  int64_t sampling_ratio = 0;
  double spatial_scale = 1.0;

  static RoiAlignAttributes read(const NodeContext& ctx) {
    RoiAlignAttributes a;
    std::string mode = ctx.get_string("mode", "avg");
    if (mode != "avg" && mode != "max") ctx.fail("mode is '{}'; it must be avg or max", mode);
    a.max_mode = mode == "max";
    // The attribute came in opset 16; before, the shift was always output_half_pixel's.
    std::string coordinates = ctx.get_string("coordinate_transformation_mode",
                                             ctx.opset() < 16 ? "output_half_pixel" : "half_pixel");
    if (coordinates != "half_pixel" && coordinates != "output_half_pixel") {
      ctx.fail("coordinate_transformation_mode is '{}'; it must be half_pixel or "
               "output_half_pixel", coordinates);
    }
    a.half_pixel = coordinates == "half_pixel";
    a.height = ctx.get_int("output_height", 1);
    a.width = ctx.get_int("output_width", 1);
    a.sampling_ratio = ctx.get_int("sampling_ratio", 0);
    a.spatial_scale = ctx.get_float("spatial_scale", 1.0f);
    if (a.height < 1 || a.width < 1) {
      ctx.fail("output_height and output_width must be positive, not {} and {}", a.height,
               a.width);
    }
    if (a.sampling_ratio < 0) ctx.fail("sampling_ratio must be >= 0, not {}", a.sampling_ratio);
    return a;
  }
};

std::vector<TensorType> roi_align_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  const TensorType& rois = ctx.input_type(1);
  const TensorType& indices = ctx.input_type(2);
  visit_float_dtype(ctx, x.dtype, "input X", []<typename T>() {});
  visit_float_dtype(ctx, rois.dtype, "input rois", []<typename T>() {});
  RoiAlignAttributes a = RoiAlignAttributes::read(ctx);
  if (x.rank() != 4 || x.shape[2] < 1 || x.shape[3] < 1) {
    ctx.fail("input X must be 4-D (N, C, H, W) with H, W >= 1, not {}", type_string(x));
  }
  if (rois.rank() != 2 || rois.shape[1] != 4) {
    ctx.fail("rois must be (num_rois, 4), not {}", type_string(rois));
  }
  if (!is_int(indices.dtype) || indices.rank() != 1 || indices.shape[0] != rois.shape[0]) {
    ctx.fail("batch_indices must be {} integers, one per roi, not {}", rois.shape[0],
             type_string(indices));
  }
  return {{x.dtype, {rois.shape[0], x.shape[1], a.height, a.width}}};
}

// One bilinear sample: four pixel offsets in the image and their weights.
struct Sample {
  int64_t offset[4] = {0, 0, 0, 0};
  double weight[4] = {0, 0, 0, 0};
};

// The sample at (y, x) of an image of height x width pixels.
Sample bilinear_sample(double y, double x, int64_t height, int64_t width) {
  Sample s;
  if (y < -1.0 || y > static_cast<double>(height) || x < -1.0 ||
      x > static_cast<double>(width)) {
    return s;  // outside: every weight 0
  }
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y_low = static_cast<int64_t>(y);
  int64_t x_low = static_cast<int64_t>(x);
  int64_t y_high = y_low + 1;
  int64_t x_high = x_low + 1;
  if (y_low >= height - 1) {
    y_low = y_high = height - 1;
    y = static_cast<double>(y_low);
  }
  if (x_low >= width - 1) {
    x_low = x_high = width - 1;
    x = static_cast<double>(x_low);
  }
  const double ly = y - static_cast<double>(y_low);
  const double lx = x - static_cast<double>(x_low);
  s.offset[0] = y_low * width + x_low;
  s.offset[1] = y_low * width + x_high;
  s.offset[2] = y_high * width + x_low;
  s.offset[3] = y_high * width + x_high;
  s.weight[0] = (1 - ly) * (1 - lx);
  s.weight[1] = (1 - ly) * lx;
  s.weight[2] = ly * (1 - lx);
  s.weight[3] = ly * lx;
  return s;
}

// The sampling points of roi `r` (its `box`), bin by bin, shared by all channels.
struct RoiSamples {
  std::vector<Sample> samples;
  int64_t per_bin = 0;  // samples in each bin
  double count = 1;     // what the average divides by
};

RoiSamples roi_samples(const NodeContext& ctx, const RoiAlignAttributes& a, const double* box,
                       size_t r, int64_t height, int64_t width) {
  const double shift = a.half_pixel ? 0.5 : 0.0;
  const double start_x = box[0] * a.spatial_scale - shift;
  const double start_y = box[1] * a.spatial_scale - shift;
  double size_x = box[2] * a.spatial_scale - shift - start_x;
  double size_y = box[3] * a.spatial_scale - shift - start_y;
  if (!a.half_pixel) {
    size_x = std::max(size_x, 1.0);
    size_y = std::max(size_y, 1.0);
  }
  const double bin_h = size_y / static_cast<double>(a.height);
  const double bin_w = size_x / static_cast<double>(a.width);
  // A box given backwards (x2 < x1) has a negative size and, adaptively, no samples.
  const double adaptive_h = std::clamp(std::ceil(bin_h), 0.0, kMaxSamplesPerRoi);
  const double adaptive_w = std::clamp(std::ceil(bin_w), 0.0, kMaxSamplesPerRoi);
  const int64_t grid_h = a.sampling_ratio > 0 ? a.sampling_ratio
                                              : static_cast<int64_t>(adaptive_h);
  const int64_t grid_w = a.sampling_ratio > 0 ? a.sampling_ratio
                                              : static_cast<int64_t>(adaptive_w);
  // (An adaptive grid of a huge box would take forever and all memory; refuse it.)
  if (static_cast<double>(grid_h) * static_cast<double>(grid_w) * a.height * a.width >
      kMaxSamplesPerRoi) {
    ctx.fail("roi {} needs {} x {} samples in each of {} x {} bins, more than the {} the "
             "reference kernel takes; set sampling_ratio", r, grid_h, grid_w, a.height,
             a.width, kMaxSamplesPerRoi);
  }
  const double count = static_cast<double>(std::max<int64_t>(grid_h * grid_w, 1));
  std::vector<Sample> samples;
  for (int64_t i = 0; i < a.height; ++i) {
    for (int64_t j = 0; j < a.width; ++j) {
      for (int64_t iy = 0; iy < grid_h; ++iy) {
        const double y = start_y + i * bin_h + (iy + 0.5) * bin_h / grid_h;
        for (int64_t ix = 0; ix < grid_w; ++ix) {
          const double x = start_x + j * bin_w + (ix + 0.5) * bin_w / grid_w;
          samples.push_back(bilinear_sample(y, x, height, width));
        }
      }
    }
  }
  return {std::move(samples), grid_h * grid_w, count};
}

std::vector<Tensor> roi_align_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const RoiAlignAttributes a = RoiAlignAttributes::read(ctx);
  const std::vector<double> image = x.to_double_vector();
  const std::vector<double> rois = ctx.input(1).to_double_vector();
  const std::vector<int64_t> batch = ctx.input(2).to_int64_vector();
  const int64_t channels = x.shape()[1];
  const int64_t height = x.shape()[2];
  const int64_t width = x.shape()[3];
  const TensorType& out_type = ctx.output_type(0);
  std::vector<double> out;
  out.reserve(static_cast<size_t>(out_type.num_elements()));

  for (size_t r = 0; r < batch.size(); ++r) {
    if (batch[r] < 0 || batch[r] >= x.shape()[0]) {
      ctx.fail("batch_indices[{}] = {} is not an image of X (N = {})", r, batch[r], x.shape()[0]);
    }
    const double* box = rois.data() + 4 * r;
    if (!std::all_of(box, box + 4, [](double v) { return std::isfinite(v); })) {
      ctx.fail("rois[{}] = ({}) is not four finite numbers", r, fmt::join(box, box + 4, ", "));
    }
    const RoiSamples grid = roi_samples(ctx, a, box, r, height, width);
    const std::vector<Sample>& samples = grid.samples;
    const int64_t per_bin = grid.per_bin;
    const double count = grid.count;
    for (int64_t c = 0; c < channels; ++c) {
      const double* plane = image.data() + (batch[r] * channels + c) * height * width;
      for (int64_t bin = 0; bin < a.height * a.width; ++bin) {
        double sum = 0;
        double largest = 0;
        for (int64_t k = 0; k < per_bin; ++k) {
          const Sample& s = samples[static_cast<size_t>(bin * per_bin + k)];
          double value = 0;
          double corner_max = s.weight[0] * plane[s.offset[0]];
          for (int corner = 0; corner < 4; ++corner) {
            const double weighted = s.weight[corner] * plane[s.offset[corner]];
            value += weighted;
            corner_max = std::max(corner_max, weighted);
          }
          sum += value;
          largest = k == 0 ? corner_max : std::max(largest, corner_max);
        }
        out.push_back(a.max_mode ? largest : sum / count);
      }
    }
  }
  return single_output(Tensor::from_vector<double>(out_type.shape, out).cast(out_type.dtype));
}

}  // namespace

void register_roi_align_ops(OpRegistry& registry) {
  registry.add({.name = "RoiAlign",
                .min_opset = 10,
                .min_inputs = 3,
                .max_inputs = 3,
                .fusion = FusionKind::opaque,
                .shape_rule = roi_align_shape,
                .kernel = roi_align_kernel});
}

}  // namespace minic
