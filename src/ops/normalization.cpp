// Per-channel normalisations: BatchNormalization, InstanceNormalization, LRN.
//
// Course module 2. All three read X as [N, C, D1..Dk] and treat channel c of sample n as
// one "plane" of S = D1*..*Dk contiguous elements:
//
//   BatchNormalization     y = (x - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + B[c]
//                          with mean and var the running statistics given as inputs;
//                          in training mode (opset 14's training_mode = 1) the batch's
//                          own mean and variance over N and the plane instead, and the
//                          outputs running_mean = mean * momentum + batch_mean * (1 -
//                          momentum), running_var likewise
//   InstanceNormalization  the same with mean and var computed over each plane
//   LRN                    y = x / (bias + alpha/size * sum of x^2 over nearby channels)^beta
//                          where channel c's neighbours are [c - floor((size-1)/2),
//                          c + ceil((size-1)/2)], clipped to the channels that exist
//
// The kernels compute in double and round once to the element type.
// LayerNormalization, which normalises over trailing axes instead, is in layer_norm.cpp.
//
// Compute rules (course module 3), in f32 (f64 for f64 inputs): BatchNormalization is
// one elementwise stage reading the per-channel inputs (in inference mode; training mode
// runs its reference kernel); InstanceNormalization two
// reductions over each plane (sum, then squared deviations) and an elementwise stage;
// LRN one reduction over the `size` neighbouring channels (those outside [0, C) skipped
// by a select) and an elementwise stage.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "float_compute.h"
#include "minic/ops/compute.h"

#include <cmath>

namespace minic {

namespace {

// Checks X is [N, C, ...] of a float type; returns C.
int64_t check_channel_input(const NodeContext& ctx, const TensorType& x) {
  visit_float_dtype(ctx, x.dtype, "input X", []<typename T>() {});
  if (x.rank() < 2) {
    ctx.fail("input X is {}; {} needs N x C x ... (at least 2 dimensions)", type_string(x),
             ctx.node().op);
  }
  return x.shape[1];
}

// Checks input `index` (named `name`) is a vector with one entry per channel.
void check_per_channel(const NodeContext& ctx, const TensorType& type, const char* name,
                       int64_t channels) {
  if (type.shape != Shape{channels}) {
    ctx.fail("input {} is {}; it should have one entry per channel ([{}])", name,
             type_string(type), channels);
  }
  if (!is_float(type.dtype)) {
    ctx.fail("input {} has element type {}; it should be floating-point", name,
             dtype_name(type.dtype));
  }
}

// Applies y = x * multiplier[c] + shift[c] plane by plane.
template <typename T>
void scale_and_shift(const Tensor& x, const std::vector<double>& multiplier,
                     const std::vector<double>& shift, Tensor& y) {
  const int64_t channels = x.shape()[1];
  const int64_t plane = x.num_elements() / std::max<int64_t>(1, x.shape()[0] * channels);
  auto in = x.values<T>();
  auto out = y.values<T>();
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    int64_t c = (i / plane) % channels;
    out[i] = static_cast<T>(to_double(in[i]) * multiplier[c] + shift[c]);
  }
}

// --- BatchNormalization ------------------------------------------------------------------------

struct BatchNormAttributes {
  double epsilon = 1e-5;
  bool training = false;  // statistics from the batch (opset 14's training_mode)
  double momentum = 0.9;

  static BatchNormAttributes read(const NodeContext& ctx) {
    // Training mode before opset 14 (is_test = 0, or the five outputs of opsets 7-13) has
    // saved statistics whose definitions changed from version to version: minic takes
    // training mode in its opset 14 form only.
    const char* inference_only = "; minic supports training mode from opset 14 only";
    if (ctx.opset() < 7 && ctx.get_int("is_test", 0) == 0) {
      ctx.fail("is_test = 0 asks for training mode{} (set is_test = 1)", inference_only);
    }
    BatchNormAttributes a;
    a.epsilon = ctx.get_float("epsilon", 1e-5f);
    a.momentum = ctx.get_float("momentum", 0.9f);
    a.training = ctx.opset() >= 14 && ctx.get_int("training_mode", 0) != 0;
    if (a.training && ctx.num_outputs() > 3) {
      ctx.fail("it has {} outputs; training mode gives Y, running_mean and running_var",
               ctx.num_outputs());
    }
    if (!a.training && ctx.num_outputs() > 1) {
      ctx.fail("it has {} outputs; the running mean and variance outputs exist only in "
               "training mode{}",
               ctx.num_outputs(), inference_only);
    }
    if (ctx.get_int("spatial", 1) != 1) {
      ctx.fail("spatial = 0 (statistics per channel and position) is not supported; minic "
               "supports spatial = 1");
    }
    return a;
  }
};

std::vector<TensorType> batch_norm_shape(const ShapeContext& ctx) {
  BatchNormAttributes::read(ctx);
  const TensorType& x = ctx.input_type(0);
  int64_t channels = check_channel_input(ctx, x);
  const char* names[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i) check_per_channel(ctx, ctx.input_type(i), names[i], channels);
  std::vector<TensorType> types = {x, ctx.input_type(3), ctx.input_type(4)};
  types.resize(ctx.num_outputs());
  return types;
}

// The batch's mean and (biased) variance of each channel, over N and the plane.
void batch_statistics(const Tensor& x, std::vector<double>& mean, std::vector<double>& var) {
  const int64_t channels = x.shape()[1];
  const int64_t plane = x.num_elements() / std::max<int64_t>(1, x.shape()[0] * channels);
  const double count = static_cast<double>(x.shape()[0] * plane);
  const std::vector<double> values = x.to_double_vector();
  mean.assign(channels, 0.0);
  var.assign(channels, 0.0);
  for (size_t i = 0; i < values.size(); ++i) mean[(i / plane) % channels] += values[i];
  for (double& m : mean) m /= count;
  for (size_t i = 0; i < values.size(); ++i) {
    const double d = values[i] - mean[(i / plane) % channels];
    var[(i / plane) % channels] += d * d;
  }
  for (double& v : var) v /= count;
}

std::vector<Tensor> batch_norm_kernel(const KernelContext& ctx) {
  BatchNormAttributes a = BatchNormAttributes::read(ctx);
  const Tensor& x = ctx.input(0);
  std::vector<double> scale = ctx.input(1).to_double_vector();
  std::vector<double> bias = ctx.input(2).to_double_vector();
  std::vector<double> mean = ctx.input(3).to_double_vector();
  std::vector<double> var = ctx.input(4).to_double_vector();
  std::vector<double> running_mean, running_var;
  if (a.training) {
    batch_statistics(x, mean, var);
    const std::vector<double> old_mean = ctx.input(3).to_double_vector();
    const std::vector<double> old_var = ctx.input(4).to_double_vector();
    for (size_t c = 0; c < mean.size(); ++c) {
      running_mean.push_back(old_mean[c] * a.momentum + mean[c] * (1 - a.momentum));
      running_var.push_back(old_var[c] * a.momentum + var[c] * (1 - a.momentum));
    }
  }
  // y = x * multiplier + shift with multiplier = scale / sqrt(var + eps).
  std::vector<double> multiplier(scale.size());
  std::vector<double> shift(scale.size());
  for (size_t c = 0; c < scale.size(); ++c) {
    multiplier[c] = scale[c] / std::sqrt(var[c] + a.epsilon);
    shift[c] = bias[c] - mean[c] * multiplier[c];
  }
  Tensor y = ctx.make_output(0);
  visit_float_dtype(ctx, x.dtype(), "input X",
                    [&]<typename T>() { scale_and_shift<T>(x, multiplier, shift, y); });
  std::vector<Tensor> outputs;
  outputs.push_back(std::move(y));
  const std::vector<double>* running[] = {&running_mean, &running_var};
  for (size_t i = 1; i < ctx.num_outputs(); ++i) {
    const TensorType& type = ctx.output_type(i);
    outputs.push_back(Tensor::from_vector<double>(type.shape, *running[i - 1]).cast(type.dtype));
  }
  return outputs;
}

// --- InstanceNormalization ---------------------------------------------------------------------

std::vector<TensorType> instance_norm_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  int64_t channels = check_channel_input(ctx, x);
  check_per_channel(ctx, ctx.input_type(1), "scale", channels);
  check_per_channel(ctx, ctx.input_type(2), "B", channels);
  return {x};
}

// The mean and the (population) variance of values[0, count).
template <typename T>
std::pair<double, double> mean_and_variance(const T* values, int64_t count) {
  double sum = 0;
  for (int64_t i = 0; i < count; ++i) sum += to_double(values[i]);
  double mean = sum / static_cast<double>(count);
  double squares = 0;
  for (int64_t i = 0; i < count; ++i) {
    double d = to_double(values[i]) - mean;
    squares += d * d;
  }
  return {mean, squares / static_cast<double>(count)};
}

std::vector<Tensor> instance_norm_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const double epsilon = ctx.get_float("epsilon", 1e-5f);
  std::vector<double> scale = ctx.input(1).to_double_vector();
  std::vector<double> bias = ctx.input(2).to_double_vector();
  const int64_t batch = x.shape()[0];
  const int64_t channels = x.shape()[1];
  const int64_t plane = batch * channels == 0 ? 0 : x.num_elements() / (batch * channels);
  Tensor y = ctx.make_output(0);
  visit_float_dtype(ctx, x.dtype(), "input X", [&]<typename T>() {
    auto in = x.values<T>();
    auto out = y.values<T>();
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t base = (n * channels + c) * plane;
        if (plane == 0) continue;
        auto [mean, variance] = mean_and_variance(in.data() + base, plane);
        double multiplier = scale[c] / std::sqrt(variance + epsilon);
        for (int64_t i = base; i < base + plane; ++i) {
          out[i] = static_cast<T>((to_double(in[i]) - mean) * multiplier + bias[c]);
        }
      }
    }
  });
  return {std::move(y)};
}

// --- LRN ---------------------------------------------------------------------------------------

struct LrnAttributes {
  double alpha = 1e-4;
  double beta = 0.75;
  double bias = 1.0;
  int64_t size = 0;

  static LrnAttributes read(const NodeContext& ctx) {
    LrnAttributes a;
    a.alpha = ctx.get_float("alpha", 1e-4f);
    a.beta = ctx.get_float("beta", 0.75f);
    a.bias = ctx.get_float("bias", 1.0f);
    a.size = ctx.get_int("size");
    if (a.size < 1) ctx.fail("size is {}; it must be positive", a.size);
    return a;
  }
};

std::vector<TensorType> lrn_shape(const ShapeContext& ctx) {
  LrnAttributes::read(ctx);
  check_channel_input(ctx, ctx.input_type(0));
  return {ctx.input_type(0)};
}

std::vector<Tensor> lrn_kernel(const KernelContext& ctx) {
  LrnAttributes a = LrnAttributes::read(ctx);
  const Tensor& x = ctx.input(0);
  const int64_t batch = x.shape()[0];
  const int64_t channels = x.shape()[1];
  const int64_t plane = batch * channels == 0 ? 0 : x.num_elements() / (batch * channels);
  const int64_t before = (a.size - 1) / 2;    // floor((size - 1) / 2)
  const int64_t after = a.size - 1 - before;  // ceil((size - 1) / 2)
  Tensor y = ctx.make_output(0);
  visit_float_dtype(ctx, x.dtype(), "input X", [&]<typename T>() {
    auto in = x.values<T>();
    auto out = y.values<T>();
    std::vector<double> square_sum(plane);
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t c = 0; c < channels; ++c) {
        std::fill(square_sum.begin(), square_sum.end(), 0.0);
        int64_t first = std::max<int64_t>(0, c - before);
        int64_t last = std::min<int64_t>(channels - 1, c + after);
        for (int64_t j = first; j <= last; ++j) {
          const T* neighbour = in.data() + (n * channels + j) * plane;
          for (int64_t i = 0; i < plane; ++i) {
            double v = to_double(neighbour[i]);
            square_sum[i] += v * v;
          }
        }
        const int64_t base = (n * channels + c) * plane;
        for (int64_t i = 0; i < plane; ++i) {
          double denominator = std::pow(a.bias + a.alpha / a.size * square_sum[i], a.beta);
          out[base + i] = static_cast<T>(to_double(in[base + i]) / denominator);
        }
      }
    }
  });
  return {std::move(y)};
}

// --- compute rules ------------------------------------------------------------------------------

// Per-channel input `k` at the channel of element i, in the accumulation type.
loop::Expr channel_value(const ComputeContext& ctx, size_t k, const Indices& i, DType acc) {
  return cast(acc, ctx.input(k)({i[1]}));
}

std::vector<ComputeTensor> batch_norm_compute(const ComputeContext& ctx) {
  BatchNormAttributes a = BatchNormAttributes::read(ctx);
  if (a.training) ctx.no_rule("training mode reduces over the batch; its reference kernel runs");
  const ComputeTensor& x = ctx.input(0);
  const TensorType& type = ctx.output_type(0);
  const DType acc = accumulation_dtype(type.dtype);
  return {ctx.compute("batchnorm", type, [&](const Indices& i) {
    // y = x * multiplier + shift, multiplier = scale / sqrt(var + eps), as the kernel.
    loop::Expr deviation = channel_value(ctx, 4, i, acc) + constant(acc, a.epsilon);
    loop::Expr multiplier =
        loop::Div::make(channel_value(ctx, 1, i, acc), call("sqrt", {deviation}));
    loop::Expr shift = channel_value(ctx, 2, i, acc) - channel_value(ctx, 3, i, acc) * multiplier;
    return cast(type.dtype, cast(acc, x(i)) * multiplier + shift);
  })};
}

std::vector<ComputeTensor> instance_norm_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const double epsilon = ctx.get_float("epsilon", 1e-5f);
  const TensorType& type = ctx.output_type(0);
  const DType acc = accumulation_dtype(type.dtype);
  Shape plane(x.shape().begin() + 2, x.shape().end());
  Shape statistics_shape = {x.dim(0), x.dim(1)};
  statistics_shape.resize(x.shape().size(), 1);
  const TensorType statistics{acc, statistics_shape};
  const double n = static_cast<double>(num_elements(plane));
  auto element = [&](const Indices& i, const Indices& r) {
    Indices at = {i[0], i[1]};
    at.insert(at.end(), r.begin(), r.end());
    return cast(acc, x(at));
  };
  auto plane_of = [&](const Indices& i) {
    Indices at = {i[0], i[1]};
    at.resize(i.size(), index(0));
    return at;
  };
  ComputeTensor sum = ctx.reduce("instancenorm_sum", statistics, plane, Reducer::sum, element);
  ComputeTensor squares = ctx.reduce("instancenorm_squares", statistics, plane, Reducer::sum,
                                     [&](const Indices& i, const Indices& r) {
    loop::Expr deviation = element(i, r) - loop::Div::make(sum(i), constant(acc, n));
    return deviation * deviation;
  });
  return {ctx.compute("instancenorm", type, [&](const Indices& i) {
    loop::Expr mean = loop::Div::make(sum(plane_of(i)), constant(acc, n));
    loop::Expr variance = loop::Div::make(squares(plane_of(i)), constant(acc, n));
    loop::Expr multiplier = loop::Div::make(channel_value(ctx, 1, i, acc),
                                            call("sqrt", {variance + constant(acc, epsilon)}));
    loop::Expr y = (cast(acc, x(i)) - mean) * multiplier + channel_value(ctx, 2, i, acc);
    return cast(type.dtype, y);
  })};
}

std::vector<ComputeTensor> lrn_compute(const ComputeContext& ctx) {
  LrnAttributes a = LrnAttributes::read(ctx);
  const ComputeTensor& x = ctx.input(0);
  const TensorType& type = ctx.output_type(0);
  const DType acc = accumulation_dtype(type.dtype);
  const int64_t before = (a.size - 1) / 2;
  ComputeTensor square_sum = ctx.reduce("lrn_square_sum", {acc, type.shape}, {a.size},
                                        Reducer::sum, [&](const Indices& i, const Indices& r) {
    Indices at = i;
    at[1] = affine(i[1] + r[0], 1, -before);
    loop::Expr value = cast(acc, x(at));
    return select(in_range(at[1], x.dim(1)), value * value, constant(acc, 0));
  });
  return {ctx.compute("lrn", type, [&](const Indices& i) {
    loop::Expr scaled = constant(acc, a.bias) + constant(acc, a.alpha / a.size) * square_sum(i);
    loop::Expr denominator = call("pow", {scaled, constant(acc, a.beta)});
    return cast(type.dtype, loop::Div::make(cast(acc, x(i)), denominator));
  })};
}

}  // namespace

void register_normalization_ops(OpRegistry& registry) {
  // Inference BatchNormalization is an affine map per channel: a broadcast op. (Training
  // mode has no compute rule, so its fusion group runs on reference kernels.)
  registry.add({.name = "BatchNormalization",
                .min_opset = 1,
                .min_inputs = 5,
                .max_inputs = 5,
                .max_outputs = 5,
                .fusion = FusionKind::broadcast,
                .shape_rule = batch_norm_shape,
                .kernel = batch_norm_kernel,
                .compute = batch_norm_compute});
  registry.add({.name = "InstanceNormalization",
                .min_opset = 1,
                .min_inputs = 3,
                .max_inputs = 3,
                .fusion = FusionKind::reduction,
                .shape_rule = instance_norm_shape,
                .kernel = instance_norm_kernel,
                .compute = instance_norm_compute});
  // LRN mixes neighbouring channels at every position; like TVM, minic fuses it with nothing.
  registry.add({.name = "LRN",
                .min_opset = 1,
                .fusion = FusionKind::opaque,
                .shape_rule = lrn_shape,
                .kernel = lrn_kernel,
                .compute = lrn_compute});
}

}  // namespace minic
