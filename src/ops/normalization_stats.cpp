// Normalisations by statistics over groups of elements: RMSNormalization, LpNormalization,
// GroupNormalization and MeanVarianceNormalization. Course module 2.
//
// Each op splits X's elements into groups that share a statistic, and divides it out. For
// an element x of group g, with mean and variance (the mean of squared deviations) over g:
//
//   RMSNormalization           y = x / sqrt(mean over g of x^2 + epsilon) * Scale
//                              g: the trailing axes [axis, rank); Scale broadcasts to X
//   LpNormalization            y = x / (sum over g of |x|^p)^(1/p)        (p = 1 or 2)
//                              g: the single axis `axis`; a norm of 0 gives y = 0
//   GroupNormalization         y = (x - mean) / sqrt(variance + epsilon) * scale + bias
//                              g: the C / num_groups channels of one group of one sample,
//                              all their positions; scale and bias hold one value per
//                              group (opset 18) or per channel (opset 21)
//   MeanVarianceNormalization  y = (x - mean) / (sqrt(variance) + 1e-9)
//                              g: the axes `axes` (default [0, 2, 3])
//
// A group is described the same way for all four (group_elements below): the axes it
// spans. The kernels read X as doubles, compute there and round each result once to the
// output's element type. stash_type (the precision ONNX asks the statistics to be kept in)
// must name a floating-point type; double is at least as precise as each of them.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "broadcast.h"
#include "elementwise.h"
#include "movement.h"

#include <cmath>

namespace minic {

namespace {

// Which group each element of a tensor belongs to, when the statistics are taken over the
// axes marked in `reduced`.
struct Groups {
  std::vector<int64_t> of;  // of[e]: the group of element e (row-major)
  int64_t count = 0;        // how many groups
  int64_t size = 0;         // how many elements each group has
};

// An element's group is the flat index of its position with the reduced axes left out.
Groups group_elements(const Shape& shape, const std::vector<bool>& reduced) {
  Shape kept = shape;
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    if (reduced[axis]) kept[axis] = 1;
  }
  Shape strides = row_major_strides(kept);
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    if (reduced[axis]) strides[axis] = 0;
  }
  Groups groups;
  groups.count = num_elements(kept);
  groups.size = groups.count == 0 ? 0 : num_elements(shape) / groups.count;
  groups.of.reserve(num_elements(shape));
  for_each_index(shape, [&](const Shape& index) {
    groups.of.push_back(offset_of(index, strides));
  });
  return groups;
}

// For each group, the mean of term(x, group) over its elements x.
template <typename Term>
std::vector<double> group_means(const std::vector<double>& x, const Groups& groups, Term term) {
  std::vector<double> sums(groups.count, 0.0);
  for (size_t e = 0; e < x.size(); ++e) sums[groups.of[e]] += term(x[e], groups.of[e]);
  for (double& sum : sums) sum /= static_cast<double>(groups.size);
  return sums;
}

// The mean and variance of each group.
struct Moments {
  std::vector<double> mean;
  std::vector<double> variance;
};

Moments group_moments(const std::vector<double>& x, const Groups& groups) {
  Moments m;
  m.mean = group_means(x, groups, [](double value, int64_t) { return value; });
  m.variance = group_means(x, groups, [&](double value, int64_t g) {
    double deviation = value - m.mean[g];
    return deviation * deviation;
  });
  return m;
}

// `values` (row-major, of `type`'s shape) rounded to `type`'s element type.
Tensor to_output(const TensorType& type, const std::vector<double>& values) {
  return Tensor::from_vector<double>(type.shape, values).cast(type.dtype);
}

// stash_type is an ONNX TensorProto element type code: float, float16, double, bfloat16.
void check_stash_type(const NodeContext& ctx) {
  int64_t stash = ctx.get_int("stash_type", 1);
  if (stash != 1 && stash != 10 && stash != 11 && stash != 16) {
    ctx.fail("stash_type {} is not a floating-point element type (1, 10, 11 or 16)", stash);
  }
}

// --- RMSNormalization ------------------------------------------------------------------------

std::vector<TensorType> rms_norm_shape(const ShapeContext& ctx) {
  require_float_input(ctx, 0);
  require_float_input(ctx, 1);
  const TensorType& x = ctx.input_type(0);
  const TensorType& scale = ctx.input_type(1);
  if (x.rank() < 1) ctx.fail("input X is a scalar; it needs at least one axis");
  ctx.normalize_axis(ctx.get_int("axis", -1), x.rank());
  check_stash_type(ctx);
  if (broadcast_shapes(ctx, {x.shape, scale.shape}) != x.shape) {
    ctx.fail("Scale of shape {} does not broadcast to the shape {} of X",
             shape_string(scale.shape), shape_string(x.shape));
  }
  // Y has Scale's element type (V in the ONNX schema), which may differ from X's.
  return {{scale.dtype, x.shape}};
}

std::vector<Tensor> rms_norm_kernel(const KernelContext& ctx) {
  const Tensor& x_tensor = ctx.input(0);
  const Tensor& scale_tensor = ctx.input(1);
  const int64_t axis = ctx.normalize_axis(ctx.get_int("axis", -1), x_tensor.rank());
  const double epsilon = ctx.get_float("epsilon", 1e-5f);
  std::vector<bool> reduced(x_tensor.rank(), false);
  for (int64_t a = axis; a < x_tensor.rank(); ++a) reduced[a] = true;

  std::vector<double> x = x_tensor.to_double_vector();
  Groups groups = group_elements(x_tensor.shape(), reduced);
  std::vector<double> mean_square =
      group_means(x, groups, [](double value, int64_t) { return value * value; });
  std::vector<double> scale = scale_tensor.to_double_vector();
  Shape scale_strides = broadcast_strides(scale_tensor.shape(), x_tensor.shape());
  std::vector<double> y(x.size());
  int64_t e = 0;
  for_each_index(x_tensor.shape(), [&](const Shape& index) {
    double rms = std::sqrt(mean_square[groups.of[e]] + epsilon);
    y[e] = x[e] / rms * scale[offset_of(index, scale_strides)];
    ++e;
  });
  return single_output(to_output(ctx.output_type(0), y));
}

// --- LpNormalization ---------------------------------------------------------------------------

std::vector<TensorType> lp_norm_shape(const ShapeContext& ctx) {
  require_float_input(ctx, 0);
  const TensorType& x = ctx.input_type(0);
  if (x.rank() < 1) ctx.fail("input is a scalar; it needs an axis to normalise along");
  ctx.normalize_axis(ctx.get_int("axis", -1), x.rank());
  int64_t p = ctx.get_int("p", 2);
  if (p != 1 && p != 2) ctx.fail("p is {}; LpNormalization takes p = 1 or 2", p);
  return {x};
}

std::vector<Tensor> lp_norm_kernel(const KernelContext& ctx) {
  const Tensor& x_tensor = ctx.input(0);
  const int64_t axis = ctx.normalize_axis(ctx.get_int("axis", -1), x_tensor.rank());
  const bool l1 = ctx.get_int("p", 2) == 1;
  std::vector<bool> reduced(x_tensor.rank(), false);
  reduced[axis] = true;

  std::vector<double> x = x_tensor.to_double_vector();
  Groups groups = group_elements(x_tensor.shape(), reduced);
  // The mean of |x|^p times the group's size is the sum of |x|^p.
  std::vector<double> norms = group_means(x, groups, [&](double value, int64_t) {
    return l1 ? std::fabs(value) : value * value;
  });
  for (double& norm : norms) {
    norm *= static_cast<double>(groups.size);
    if (!l1) norm = std::sqrt(norm);
  }
  std::vector<double> y(x.size());
  for (size_t e = 0; e < x.size(); ++e) {
    double norm = norms[groups.of[e]];
    y[e] = norm == 0 ? 0 : x[e] / norm;
  }
  return single_output(to_output(ctx.output_type(0), y));
}

// --- GroupNormalization ------------------------------------------------------------------------

// The number of groups, checked against X's channels.
int64_t num_groups(const NodeContext& ctx, const TensorType& x) {
  const int64_t groups = ctx.get_int("num_groups");
  const int64_t channels = x.shape[1];
  if (groups <= 0 || channels % groups != 0) {
    ctx.fail("num_groups is {}; it must be a positive divisor of the {} channels", groups,
             channels);
  }
  return groups;
}

// Opset 18 gives scale and bias one value per group; opset 21 one per channel.
bool per_channel_parameters(const NodeContext& ctx) { return ctx.opset() >= 21; }

std::vector<TensorType> group_norm_shape(const ShapeContext& ctx) {
  require_float_input(ctx, 0);
  const TensorType& x = ctx.input_type(0);
  if (x.rank() < 2) {
    ctx.fail("input X is {}; GroupNormalization needs N x C x ... (at least 2 dimensions)",
             type_string(x));
  }
  const int64_t groups = num_groups(ctx, x);
  if (ctx.has_attr("stash_type")) check_stash_type(ctx);
  const int64_t entries = per_channel_parameters(ctx) ? x.shape[1] : groups;
  const char* names[] = {"X", "scale", "bias"};
  for (size_t i : {1, 2}) {
    require_same_dtype(ctx, 0, i);
    if (ctx.input_type(i).shape != Shape{entries}) {
      ctx.fail("input {} is {}; at opset {} it holds one value per {} ([{}])", names[i],
               type_string(ctx.input_type(i)), ctx.opset(),
               per_channel_parameters(ctx) ? "channel" : "group", entries);
    }
  }
  return {x};
}

std::vector<Tensor> group_norm_kernel(const KernelContext& ctx) {
  const Tensor& x_tensor = ctx.input(0);
  const int64_t groups = num_groups(ctx, x_tensor.type());
  const double epsilon = ctx.get_float("epsilon", 1e-5f);
  const int64_t samples = x_tensor.shape()[0];
  const int64_t channels = x_tensor.shape()[1];
  const Shape& shape = x_tensor.shape();
  const int64_t positions = num_elements(Shape(shape.begin() + 2, shape.end()));
  // X viewed as [N, num_groups, (C / num_groups) * positions]: a group is one row.
  Groups by_group = group_elements({samples, groups, (channels / groups) * positions},
                                   {false, false, true});

  std::vector<double> x = x_tensor.to_double_vector();
  Moments m = group_moments(x, by_group);
  std::vector<double> scale = ctx.input(1).to_double_vector();
  std::vector<double> bias = ctx.input(2).to_double_vector();
  const bool per_channel = per_channel_parameters(ctx);
  std::vector<double> y(x.size());
  for (size_t e = 0; e < x.size(); ++e) {
    const int64_t g = by_group.of[e];
    const int64_t channel = (static_cast<int64_t>(e) / positions) % channels;
    const int64_t p = per_channel ? channel : channel / (channels / groups);
    double normal = (x[e] - m.mean[g]) / std::sqrt(m.variance[g] + epsilon);
    y[e] = normal * scale[p] + bias[p];
  }
  return single_output(to_output(ctx.output_type(0), y));
}

// --- MeanVarianceNormalization -----------------------------------------------------------------

// The axes the statistics are taken over, marked.
std::vector<bool> mvn_axes(const NodeContext& ctx, int64_t rank) {
  std::vector<int64_t> axes = normalize_axes(ctx, ctx.get_ints("axes", {0, 2, 3}), rank);
  std::vector<bool> reduced(rank, false);
  for (int64_t axis : axes) reduced[axis] = true;
  return reduced;
}

std::vector<TensorType> mvn_shape(const ShapeContext& ctx) {
  require_float_input(ctx, 0);
  const TensorType& x = ctx.input_type(0);
  mvn_axes(ctx, x.rank());
  return {x};
}

std::vector<Tensor> mvn_kernel(const KernelContext& ctx) {
  const Tensor& x_tensor = ctx.input(0);
  Groups groups = group_elements(x_tensor.shape(), mvn_axes(ctx, x_tensor.rank()));
  std::vector<double> x = x_tensor.to_double_vector();
  Moments m = group_moments(x, groups);
  // ONNX's definition adds 1e-9 to the standard deviation, not to the variance.
  std::vector<double> y(x.size());
  for (size_t e = 0; e < x.size(); ++e) {
    const int64_t g = groups.of[e];
    y[e] = (x[e] - m.mean[g]) / (std::sqrt(m.variance[g]) + 1e-9);
  }
  return single_output(to_output(ctx.output_type(0), y));
}

}  // namespace

void register_normalization_stats_ops(OpRegistry& registry) {
  // Opaque: they have no compute rule, so they run on their reference kernels.
  registry.add({.name = "RMSNormalization",
                .min_opset = 23,
                .min_inputs = 2,
                .max_inputs = 2,
                .shape_rule = rms_norm_shape,
                .kernel = rms_norm_kernel});
  // Opset 22 only widened the element types (bfloat16).
  registry.add({.name = "LpNormalization",
                .min_opset = 1,
                .shape_rule = lp_norm_shape,
                .kernel = lp_norm_kernel});
  registry.add({.name = "GroupNormalization",
                .min_opset = 18,
                .min_inputs = 3,
                .max_inputs = 3,
                .shape_rule = group_norm_shape,
                .kernel = group_norm_kernel});
  // Opset 1's form (across_channels, normalize_variance) is not handled; 13 added bfloat16.
  registry.add({.name = "MeanVarianceNormalization",
                .min_opset = 9,
                .shape_rule = mvn_shape,
                .kernel = mvn_kernel});
}

}  // namespace minic
