// GridSample and AffineGrid: sampling an image at positions given by a grid, and the grid
// of an affine transform. Course module 2.
//
// GridSample: X has shape (N, C, d1, ..., dr) and the grid (N, o1, ..., or, r); the output
// has shape (N, C, o1, ..., or). Output element (n, c, p) is X[n, c] sampled at the position
// grid[n, p, :], which holds r normalised coordinates in [-1, 1], the LAST spatial axis
// first (x is the width, then y the height, then z the depth). Along an axis of length d a
// normalised coordinate u becomes the pixel coordinate
//   align_corners = 1:  x = (u + 1) / 2 * (d - 1)      (-1 and 1 are the corner pixels' centres)
//   align_corners = 0:  x = ((u + 1) * d - 1) / 2      (-1 and 1 are the corner pixels' edges)
// and the value there is interpolated (mode):
//   nearest  X at x rounded to the nearest integer, halves to the even one
//   linear   sum over the 2^r corners of the cell holding x of X[corner] * prod(1 - |x - corner|)
//   cubic    the same over a 4^r neighbourhood with Keys' cubic weights (a = -0.75)
// A position outside the image [low, high] (low = -0.5, high = d - 0.5, or 0 and d - 1 with
// align_corners) is first moved back in by padding_mode: `border` clamps it to [0, d - 1],
// `reflection` mirrors it at low and high until it is inside, `zeros` leaves it. Pixels an
// interpolation reads outside the image are then 0 (zeros), the nearest edge pixel (border)
// or the mirrored pixel (reflection). A NaN or infinite position gives NaN. The kernel
// computes in double.
// Opset 16 has only 4-D X and names the modes bilinear / nearest / bicubic; opset 20 names
// them linear / nearest / cubic and takes any number of spatial axes.
//
// AffineGrid: theta (N, 2, 3) or (N, 3, 4) and size = (N, C, H, W) or (N, C, D, H, W) give
// the grid (N, H, W, 2) or (N, D, H, W, 3) that GridSample reads. Each grid point is
//   grid[n, h, w, :] = theta[n] * (x_w, y_h, 1)        (and (x_w, y_h, z_d, 1) in 3-D)
// with the normalised coordinates of the pixel centres along an axis of length L
//   align_corners = 1:  -1 + 2 * i / (L - 1)   (-1 when L = 1)
//   align_corners = 0:  -1 + (2 * i + 1) / L
//
// Fusion kind: opaque. An output element reads input elements at positions that are data.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "broadcast.h"
#include "float_compute.h"
#include "movement.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace minic {

namespace {

enum class SampleMode { nearest, linear, cubic };
enum class PaddingMode { zeros, border, reflection };

struct GridSampleAttributes {
  SampleMode mode = SampleMode::linear;
  PaddingMode padding = PaddingMode::zeros;
  bool align_corners = false;

  static GridSampleAttributes read(const NodeContext& ctx) {
    GridSampleAttributes a;
    if (ctx.opset() < 20) {
      a.mode = read_choice<SampleMode>(ctx, "mode", "bilinear",
                                       {{"bilinear", SampleMode::linear},
                                        {"nearest", SampleMode::nearest},
                                        {"bicubic", SampleMode::cubic}});
    } else {
      a.mode = read_choice<SampleMode>(ctx, "mode", "linear",
                                       {{"linear", SampleMode::linear},
                                        {"nearest", SampleMode::nearest},
                                        {"cubic", SampleMode::cubic}});
    }
    a.padding = read_choice<PaddingMode>(ctx, "padding_mode", "zeros",
                                         {{"zeros", PaddingMode::zeros},
                                          {"border", PaddingMode::border},
                                          {"reflection", PaddingMode::reflection}});
    a.align_corners = ctx.get_int("align_corners", 0) != 0;
    return a;
  }
};

std::vector<TensorType> grid_sample_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  const TensorType& grid = ctx.input_type(1);
  visit_float_dtype(ctx, x.dtype, "input X", []<typename T>() {});
  visit_float_dtype(ctx, grid.dtype, "input grid", []<typename T>() {});
  GridSampleAttributes::read(ctx);
  if (ctx.opset() < 20 && x.rank() != 4) {
    ctx.fail("input X must be 4-D (N, C, H, W) at opset {}, not {}", ctx.opset(),
             type_string(x));
  }
  if (x.rank() < 3) ctx.fail("input X must be (N, C, d1, ...), not {}", type_string(x));
  const int64_t spatial = x.rank() - 2;
  for (int64_t d = 2; d < x.rank(); ++d) {
    if (x.shape[d] < 1) ctx.fail("input X {} has an empty spatial axis", type_string(x));
  }
  if (grid.rank() != x.rank() || grid.shape[0] != x.shape[0] ||
      grid.shape.back() != spatial) {
    ctx.fail("grid {} must have shape (N, o1, ..., o{}, {}) with N = {} for X {}",
             type_string(grid), spatial, spatial, x.shape[0], type_string(x));
  }
  Shape shape = {x.shape[0], x.shape[1]};
  shape.insert(shape.end(), grid.shape.begin() + 1, grid.shape.end() - 1);
  return {{x.dtype, shape}};
}

// One spatial axis of X: its length and the range [low, high] of pixel coordinates inside.
struct Axis {
  int64_t size = 0;
  double low = 0;
  double high = 0;
};

// x mirrored at low and high until it lies in [low, high].
double reflect(double x, double low, double high) {
  const double range = high - low;
  if (range <= 0) return low;
  if (x >= low && x <= high) return x;
  const bool below = x < low;
  const double distance = below ? low - x : x - high;
  const double flips = std::floor(distance / range);
  const double rest = distance - flips * range;
  // An even number of whole flips leaves x just inside the border it crossed.
  const bool near_side = std::fmod(flips, 2.0) == 0;
  if (below) return near_side ? low + rest : high - rest;
  return near_side ? high - rest : low + rest;
}

// The pixel coordinate of normalised coordinate u, moved inside by padding_mode.
double pixel_coordinate(double u, const Axis& axis, const GridSampleAttributes& a) {
  const double size = static_cast<double>(axis.size);
  double x = a.align_corners ? (u + 1) / 2 * (size - 1) : ((u + 1) * size - 1) / 2;
  if (a.mode == SampleMode::nearest) x = std::nearbyint(x);  // halves to even
  if (x >= axis.low && x <= axis.high) return x;
  if (a.padding == PaddingMode::border) return std::clamp(x, 0.0, size - 1);
  if (a.padding == PaddingMode::reflection) return reflect(x, axis.low, axis.high);
  return x;
}

// Where pixel index i of an axis reads from, or nothing (a zero) outside with zeros padding.
std::optional<int64_t> pixel_index(int64_t i, const Axis& axis, PaddingMode padding) {
  if (i >= 0 && i < axis.size) return i;
  if (padding == PaddingMode::zeros) return std::nullopt;
  if (padding == PaddingMode::border) return std::clamp<int64_t>(i, 0, axis.size - 1);
  const double mirrored = reflect(static_cast<double>(i), axis.low, axis.high);
  return std::clamp<int64_t>(static_cast<int64_t>(mirrored), 0, axis.size - 1);
}

// Keys' cubic convolution weights of the four pixels around a point at fraction t of its cell.
std::vector<double> cubic_weights(double t) {
  constexpr double a = -0.75;
  auto near = [](double s) { return ((a + 2) * s - (a + 3)) * s * s + 1; };       // |s| <= 1
  auto far = [](double s) { return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a; };  // 1 < |s| < 2
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

// The pixels along one axis an interpolation reads, with their weights.
struct Taps {
  std::vector<int64_t> index;
  std::vector<double> weight;
};

Taps taps_of(double x, SampleMode mode) {
  const double base = std::floor(x);
  const double t = x - base;
  const int64_t i = static_cast<int64_t>(base);
  if (mode == SampleMode::nearest) return {{static_cast<int64_t>(x)}, {1.0}};
  if (mode == SampleMode::linear) return {{i, i + 1}, {1 - t, t}};
  return {{i - 1, i, i + 1, i + 2}, cubic_weights(t)};
}

std::vector<Tensor> grid_sample_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& grid = ctx.input(1);
  const GridSampleAttributes a = GridSampleAttributes::read(ctx);
  const int64_t rank = x.rank() - 2;
  const int64_t batch = x.shape()[0];
  const int64_t channels = x.shape()[1];
  std::vector<Axis> axes;
  for (int64_t d = 0; d < rank; ++d) {
    const double size = static_cast<double>(x.shape()[2 + d]);
    axes.push_back(a.align_corners ? Axis{x.shape()[2 + d], 0.0, size - 1}
                                   : Axis{x.shape()[2 + d], -0.5, size - 0.5});
  }
  const Shape image(x.shape().begin() + 2, x.shape().end());
  const Shape image_strides = row_major_strides(image);
  const int64_t image_size = num_elements(image);
  const TensorType& out_type = ctx.output_type(0);
  const int64_t points = num_elements(Shape(out_type.shape.begin() + 2, out_type.shape.end()));
  const std::vector<double> in = x.to_double_vector();
  const std::vector<double> positions = grid.to_double_vector();
  std::vector<double> out(static_cast<size_t>(out_type.num_elements()), 0.0);

  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t p = 0; p < points; ++p) {
      // The taps of each axis; grid's last dimension lists the axes last one first.
      std::vector<Taps> taps;
      bool finite = true;
      for (int64_t d = 0; d < rank; ++d) {
        const double u = positions[(n * points + p) * rank + (rank - 1 - d)];
        const double coordinate = pixel_coordinate(u, axes[d], a);
        finite = finite && std::isfinite(coordinate);
        taps.push_back(taps_of(finite ? coordinate : 0.0, a.mode));
      }
      if (!finite) {  // a NaN or infinite position samples nothing: NaN
        for (int64_t c = 0; c < channels; ++c) {
          out[(n * channels + c) * points + p] = std::numeric_limits<double>::quiet_NaN();
        }
        continue;
      }
      // Every combination of one tap per axis: an image offset (or none) and a weight.
      std::vector<std::pair<std::optional<int64_t>, double>> reads = {{0, 1.0}};
      for (int64_t d = 0; d < rank; ++d) {
        std::vector<std::pair<std::optional<int64_t>, double>> next;
        for (const auto& [offset, weight] : reads) {
          for (size_t k = 0; k < taps[d].index.size(); ++k) {
            std::optional<int64_t> i = pixel_index(taps[d].index[k], axes[d], a.padding);
            std::optional<int64_t> at;
            if (offset && i) at = *offset + *i * image_strides[d];
            next.push_back({at, weight * taps[d].weight[k]});
          }
        }
        reads = std::move(next);
      }
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t plane = (n * channels + c) * image_size;
        double value = 0;
        for (const auto& [offset, weight] : reads) {
          if (offset) value += weight * in[plane + *offset];
        }
        out[(n * channels + c) * points + p] = value;
      }
    }
  }
  return single_output(Tensor::from_vector<double>(out_type.shape, out).cast(out_type.dtype));
}

std::vector<TensorType> affine_grid_shape(const ShapeContext& ctx) {
  const TensorType& theta = ctx.input_type(0);
  visit_float_dtype(ctx, theta.dtype, "input theta", []<typename T>() {});
  if (theta.rank() != 3 || !((theta.shape[1] == 2 && theta.shape[2] == 3) ||
                             (theta.shape[1] == 3 && theta.shape[2] == 4))) {
    ctx.fail("theta must be (N, 2, 3) or (N, 3, 4), not {}", type_string(theta));
  }
  const int64_t spatial = theta.shape[1];
  std::vector<int64_t> size = int_list(ctx, ctx.input_value(1), "size");
  if (static_cast<int64_t>(size.size()) != spatial + 2) {
    ctx.fail("size has {} elements; theta {} needs {} (N, C and {} spatial sizes)", size.size(),
             type_string(theta), spatial + 2, spatial);
  }
  if (size[0] != theta.shape[0]) {
    ctx.fail("size gives N = {} but theta has {} matrices", size[0], theta.shape[0]);
  }
  for (int64_t d : size) {
    if (d < 0) ctx.fail("size {} has a negative dimension", fmt::join(size, ","));
  }
  Shape shape = {size[0]};
  shape.insert(shape.end(), size.begin() + 2, size.end());
  shape.push_back(spatial);
  return {{theta.dtype, shape}};
}

// The normalised coordinate of pixel i's centre along an axis of `length` pixels.
double normalized_centre(int64_t i, int64_t length, bool align_corners) {
  if (align_corners) return length == 1 ? -1.0 : -1.0 + 2.0 * i / (length - 1);
  return -1.0 + (2.0 * i + 1) / length;
}

std::vector<Tensor> affine_grid_kernel(const KernelContext& ctx) {
  const bool align_corners = ctx.get_int("align_corners", 0) != 0;
  const std::vector<double> theta = ctx.input(0).to_double_vector();
  const TensorType& out_type = ctx.output_type(0);
  const int64_t spatial = out_type.shape.back();
  // The grid's spatial shape, outermost first: (H, W) or (D, H, W).
  const Shape sizes(out_type.shape.begin() + 1, out_type.shape.end() - 1);
  std::vector<double> out;
  out.reserve(static_cast<size_t>(out_type.num_elements()));
  for (int64_t n = 0; n < out_type.shape[0]; ++n) {
    const double* matrix = theta.data() + n * spatial * (spatial + 1);
    for_each_index(sizes, [&](const Shape& index) {
      // The homogeneous point (x, y[, z], 1): x runs along the last axis.
      std::vector<double> point;
      for (int64_t d = spatial - 1; d >= 0; --d) {
        point.push_back(normalized_centre(index[d], sizes[d], align_corners));
      }
      point.push_back(1.0);
      for (int64_t row = 0; row < spatial; ++row) {
        double sum = 0;
        for (int64_t k = 0; k <= spatial; ++k) sum += matrix[row * (spatial + 1) + k] * point[k];
        out.push_back(sum);
      }
    });
  }
  return single_output(Tensor::from_vector<double>(out_type.shape, out).cast(out_type.dtype));
}

}  // namespace

void register_grid_sample_ops(OpRegistry& registry) {
  registry.add({.name = "GridSample",
                .min_opset = 16,
                .min_inputs = 2,
                .max_inputs = 2,
                .fusion = FusionKind::opaque,
                .shape_rule = grid_sample_shape,
                .kernel = grid_sample_kernel});
  registry.add({.name = "AffineGrid",
                .min_opset = 20,
                .min_inputs = 2,
                .max_inputs = 2,
                .fusion = FusionKind::opaque,
                .shape_rule = affine_grid_shape,
                .kernel = affine_grid_kernel});
}

}  // namespace minic
