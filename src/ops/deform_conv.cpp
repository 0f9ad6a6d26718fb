// DeformConv: a 2-D convolution whose sampling points move by learned offsets
// (deformable convolution, as in detection models). Course module 2.
//
// Inputs: X [N, C, H, W], W [M, C/group, kH, kW], offset [N, G*kH*kW*2, oH, oW], optional
// bias B [M] and mask [N, G*kH*kW, oH, oW] (ones when omitted); G is offset_group. Each
// kernel tap (a, b) of output (i, j) reads X at the fractional position
//   h = i*stride_h - pad_top  + a*dilation_h + offset[n, ((g*kH + a)*kW + b)*2,     i, j]
//   w = j*stride_w - pad_left + b*dilation_w + offset[n, ((g*kH + a)*kW + b)*2 + 1, i, j]
// by bilinear interpolation (pixels outside the image count as 0), for input channels of
// offset group g. Then, as in Conv,
//   Y[n, m, i, j] = B[m] + sum over c of its group, a, b of
//                   W[m, c, a, b] * mask[n, (g*kH + a)*kW + b, i, j] * X(c, h, w)
// The output size (oH, oW) is the offset's; it must agree with Conv's formula. The
// kernel computes in double.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include <cmath>

#include "minic/ops/op.h"

namespace minic {

namespace {

struct DeformConvForm {
  int64_t n = 0, channels = 0, height = 0, width = 0;
  int64_t out_channels = 0, kh = 0, kw = 0, out_h = 0, out_w = 0;
  int64_t group = 1, offset_group = 1;
  int64_t stride[2] = {1, 1}, dilation[2] = {1, 1}, pad[2] = {0, 0};  // top, left

  static DeformConvForm read(const NodeContext& ctx,
                             const std::function<const TensorType&(size_t)>& type) {
    DeformConvForm f;
    const TensorType& x = type(0);
    const TensorType& w = type(1);
    const TensorType& offset = type(2);
    if (x.rank() != 4)
      ctx.fail("minic supports 2-D DeformConv only: X must be [N, C, H, W], not {}",
               type_string(x));
    if (!is_float(x.dtype)) ctx.fail("X must be floating point, not {}", dtype_name(x.dtype));
    f.n = x.shape[0];
    f.channels = x.shape[1];
    f.height = x.shape[2];
    f.width = x.shape[3];
    f.group = ctx.get_int("group", 1);
    f.offset_group = ctx.get_int("offset_group", 1);
    if (f.group < 1 || f.offset_group < 1) {
      ctx.fail("group ({}) and offset_group ({}) must be positive", f.group, f.offset_group);
    }
    if (w.rank() != 4 || w.shape[1] * f.group != f.channels || w.shape[0] % f.group != 0) {
      ctx.fail("W must be [M, C/group, kH, kW] with M a multiple of group {} for X {}, not {}",
               f.group, type_string(x), type_string(w));
    }
    if (f.channels % f.offset_group != 0) {
      ctx.fail("offset_group {} does not divide the {} input channels", f.offset_group, f.channels);
    }
    f.out_channels = w.shape[0];
    f.kh = w.shape[2];
    f.kw = w.shape[3];
    const std::vector<int64_t> kernel = ctx.get_ints("kernel_shape", {f.kh, f.kw});
    if (kernel != std::vector<int64_t>{f.kh, f.kw}) {
      ctx.fail("kernel_shape {} disagrees with W {}", shape_string(kernel), type_string(w));
    }
    const std::vector<int64_t> strides = ctx.get_ints("strides", {1, 1});
    const std::vector<int64_t> dilations = ctx.get_ints("dilations", {1, 1});
    const std::vector<int64_t> pads = ctx.get_ints("pads", {0, 0, 0, 0});
    if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4) {
      ctx.fail("strides and dilations need 2 values and pads 4");
    }
    for (int d = 0; d < 2; ++d) {
      f.stride[d] = strides[d];
      f.dilation[d] = dilations[d];
      f.pad[d] = pads[d];
      if (strides[d] < 1 || dilations[d] < 1 || pads[d] < 0 || pads[d + 2] < 0) {
        ctx.fail("strides and dilations must be positive and pads not negative");
      }
    }
    if (offset.rank() != 4 || offset.shape[0] != f.n ||
        offset.shape[1] != f.offset_group * f.kh * f.kw * 2) {
      ctx.fail("offset must be [{}, offset_group*kH*kW*2 = {}, oH, oW], not {}", f.n,
               f.offset_group * f.kh * f.kw * 2, type_string(offset));
    }
    f.out_h = offset.shape[2];
    f.out_w = offset.shape[3];
    const int64_t expected_h =
        (f.height + pads[0] + pads[2] - (f.kh - 1) * f.dilation[0] - 1) / f.stride[0] + 1;
    const int64_t expected_w =
        (f.width + pads[1] + pads[3] - (f.kw - 1) * f.dilation[1] - 1) / f.stride[1] + 1;
    if (f.out_h != expected_h || f.out_w != expected_w) {
      ctx.fail("offset's output size {}x{} disagrees with the convolution's {}x{}", f.out_h,
               f.out_w, expected_h, expected_w);
    }
    if (ctx.has_input(3) && type(3).shape != Shape{f.out_channels}) {
      ctx.fail("B must be [{}], not {}", f.out_channels, type_string(type(3)));
    }
    const Shape mask{f.n, f.offset_group * f.kh * f.kw, f.out_h, f.out_w};
    if (ctx.has_input(4) && type(4).shape != mask) {
      ctx.fail("mask must be {}, not {}", shape_string(mask), type_string(type(4)));
    }
    return f;
  }
};

std::vector<TensorType> deform_conv_shape(const ShapeContext& ctx) {
  auto f =
      DeformConvForm::read(ctx, [&](size_t i) -> const TensorType& { return ctx.input_type(i); });
  return {{ctx.input_type(0).dtype, {f.n, f.out_channels, f.out_h, f.out_w}}};
}

// X at the fractional position (h, w) of one channel plane, bilinearly interpolated, with
// zero outside the image.
double sample(const double* plane, int64_t height, int64_t width, double h, double w) {
  const double h0 = std::floor(h), w0 = std::floor(w);
  double sum = 0;
  for (int dy = 0; dy < 2; ++dy) {
    for (int dx = 0; dx < 2; ++dx) {
      const int64_t y = static_cast<int64_t>(h0) + dy, x = static_cast<int64_t>(w0) + dx;
      if (y < 0 || y >= height || x < 0 || x >= width) continue;
      const double weight = (dy ? h - h0 : 1 - (h - h0)) * (dx ? w - w0 : 1 - (w - w0));
      sum += weight * plane[y * width + x];
    }
  }
  return sum;
}

std::vector<Tensor> deform_conv_kernel(const KernelContext& ctx) {
  auto f =
      DeformConvForm::read(ctx, [&](size_t i) -> const TensorType& { return ctx.input(i).type(); });
  const std::vector<double> x = ctx.input(0).to_double_vector();
  const std::vector<double> w = ctx.input(1).to_double_vector();
  const std::vector<double> offset = ctx.input(2).to_double_vector();
  const int64_t taps = f.kh * f.kw, plane = f.out_h * f.out_w;
  const std::vector<double> bias =
      ctx.has_input(3) ? ctx.input(3).to_double_vector() : std::vector<double>(f.out_channels);
  const std::vector<double> mask =
      ctx.has_input(4) ? ctx.input(4).to_double_vector()
                       : std::vector<double>(f.n * f.offset_group * taps * plane, 1);
  const int64_t group_in = f.channels / f.group, group_out = f.out_channels / f.group;
  const int64_t offset_group_in = f.channels / f.offset_group;
  std::vector<double> y(f.n * f.out_channels * plane);
  for (int64_t n = 0; n < f.n; ++n) {
    for (int64_t m = 0; m < f.out_channels; ++m) {
      const int64_t first_c = (m / group_out) * group_in;
      for (int64_t i = 0; i < f.out_h; ++i) {
        for (int64_t j = 0; j < f.out_w; ++j) {
          double sum = bias[m];
          for (int64_t c = first_c; c < first_c + group_in; ++c) {
            const int64_t g = c / offset_group_in;
            const double* image = &x[(n * f.channels + c) * f.height * f.width];
            for (int64_t a = 0; a < f.kh; ++a) {
              for (int64_t b = 0; b < f.kw; ++b) {
                const int64_t tap = g * taps + a * f.kw + b;
                const int64_t at = i * f.out_w + j;
                const double dh = offset[((n * f.offset_group * taps + tap) * 2) * plane + at];
                const double dw = offset[((n * f.offset_group * taps + tap) * 2 + 1) * plane + at];
                const double h =
                    static_cast<double>(i * f.stride[0] - f.pad[0] + a * f.dilation[0]) + dh;
                const double x_pos =
                    static_cast<double>(j * f.stride[1] - f.pad[1] + b * f.dilation[1]) + dw;
                const double weight = w[((m * group_in + c - first_c) * f.kh + a) * f.kw + b];
                sum += weight * mask[(n * f.offset_group * taps + tap) * plane + at] *
                       sample(image, f.height, f.width, h, x_pos);
              }
            }
          }
          y[(n * f.out_channels + m) * plane + i * f.out_w + j] = sum;
        }
      }
    }
  }
  return single_output(
      Tensor::from_vector<double>(ctx.output_type(0).shape, y).cast(ctx.output_type(0).dtype));
}

}  // namespace

void register_deform_conv_ops(OpRegistry& registry) {
  registry.add({.name = "DeformConv",
                .min_opset = 19,
                .min_inputs = 3,
                .max_inputs = 5,
                .shape_rule = deform_conv_shape,
                .kernel = deform_conv_kernel});
}

}  // namespace minic
