// LayerNormalization: normalise over the trailing axes of each sample.
//
// Course module 2. With X of rank r and axis a (default -1, the last axis), X is read as a
// matrix of rows, one per index of the leading axes [0, a), each row holding the elements
// of the trailing axes [a, r). Each row is standardised and then scaled and shifted:
//
//   mean    = sum(row) / n                 (n = the row's length)
//   inv_std = 1 / sqrt(sum((row - mean)^2) / n + epsilon)
//   y       = (row - mean) * inv_std * Scale + B
//
// Scale and the optional B broadcast to the trailing shape X.shape[a:]. The optional
// outputs Mean and InvStdDev have X's shape with the trailing axes set to 1, and the
// element type `stash_type` names (float by default). The kernel computes in double.
//
// Compute rule (course module 3): the formulas above in f32 (or X's type if wider), as
// two reductions over the trailing axes -- the sum, then the sum of squared deviations
// -- and one elementwise stage; mean and inv_std are inlined where they are read.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "broadcast.h"
#include "float_compute.h"
#include "minic/ops/compute.h"

#include <cmath>

namespace minic {

namespace {

struct LayerNormAttributes {
  int64_t axis = -1;  // normalised into [0, rank)
  double epsilon = 1e-5;
  DType stash_type = DType::f32;

  static LayerNormAttributes read(const NodeContext& ctx, const TensorType& x) {
    LayerNormAttributes a;
    a.axis = ctx.normalize_axis(ctx.get_int("axis", -1), x.rank());
    a.epsilon = ctx.get_float("epsilon", 1e-5f);
    // stash_type is an ONNX TensorProto element type code.
    int64_t stash = ctx.get_int("stash_type", 1);
    switch (stash) {
      case 1: a.stash_type = DType::f32; break;
      case 10: a.stash_type = DType::f16; break;
      case 11: a.stash_type = DType::f64; break;
      case 16: a.stash_type = DType::bf16; break;
      default: ctx.fail("stash_type {} is not a floating-point element type", stash);
    }
    return a;
  }

  Shape normalized_shape(const TensorType& x) const {
    return Shape(x.shape.begin() + axis, x.shape.end());
  }
  // X's shape with the normalised axes set to 1: the shape of Mean and InvStdDev.
  Shape statistics_shape(const TensorType& x) const {
    Shape shape = x.shape;
    for (int64_t i = axis; i < x.rank(); ++i) shape[i] = 1;
    return shape;
  }
};

// Checks that a parameter (Scale or B) broadcasts to the normalised shape.
void check_parameter(const ShapeContext& ctx, size_t index, const char* name,
                     const TensorType& x, const Shape& normalized) {
  const TensorType& type = ctx.input_type(index);
  if (type.dtype != x.dtype) {
    ctx.fail("input {} is {} but X is {}", name, dtype_name(type.dtype), dtype_name(x.dtype));
  }
  bool fits = type.rank() <= static_cast<int64_t>(normalized.size());
  for (int64_t i = 1; fits && i <= type.rank(); ++i) {
    int64_t dim = type.shape[type.rank() - i];
    fits = dim == 1 || dim == normalized[normalized.size() - i];
  }
  if (!fits) {
    ctx.fail("input {} {} does not broadcast to the normalised shape {}", name,
             type_string(type), shape_string(normalized));
  }
}

std::vector<TensorType> layer_norm_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  visit_float_dtype(ctx, x.dtype, "input X", []<typename T>() {});
  if (x.rank() < 1) ctx.fail("input X is a scalar; it needs at least one axis");
  LayerNormAttributes a = LayerNormAttributes::read(ctx, x);
  Shape normalized = a.normalized_shape(x);
  check_parameter(ctx, 1, "Scale", x, normalized);
  if (ctx.has_input(2)) check_parameter(ctx, 2, "B", x, normalized);
  std::vector<TensorType> types = {x};
  for (size_t i = 1; i < ctx.num_outputs(); ++i) {
    types.push_back({a.stash_type, a.statistics_shape(x)});
  }
  return types;
}

// The elements of `parameter` broadcast to `normalized`, in row-major order, as doubles.
std::vector<double> broadcast_parameter(const Tensor& parameter, const Shape& normalized) {
  std::vector<double> values = parameter.to_double_vector();
  Shape strides = broadcast_strides(parameter.shape(), normalized);
  std::vector<double> result;
  result.reserve(num_elements(normalized));
  for_each_index(normalized, [&](const Shape& index) {
    result.push_back(values[offset_of(index, strides)]);
  });
  return result;
}

std::vector<Tensor> layer_norm_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  LayerNormAttributes a = LayerNormAttributes::read(ctx, x.type());
  const Shape normalized = a.normalized_shape(x.type());
  const int64_t row = num_elements(normalized);
  const int64_t rows = row == 0 ? 0 : x.num_elements() / row;
  std::vector<double> scale = broadcast_parameter(ctx.input(1), normalized);
  std::vector<double> bias = ctx.has_input(2) ? broadcast_parameter(ctx.input(2), normalized)
                                              : std::vector<double>(row, 0.0);
  std::vector<double> means(rows);
  std::vector<double> inv_stds(rows);
  Tensor y = ctx.make_output(0);
  visit_float_dtype(ctx, x.dtype(), "input X", [&]<typename T>() {
    auto in = x.values<T>();
    auto out = y.values<T>();
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t base = r * row;
      double sum = 0;
      for (int64_t i = 0; i < row; ++i) sum += to_double(in[base + i]);
      const double mean = sum / static_cast<double>(row);
      double squares = 0;
      for (int64_t i = 0; i < row; ++i) {
        double d = to_double(in[base + i]) - mean;
        squares += d * d;
      }
      const double inv_std = 1.0 / std::sqrt(squares / static_cast<double>(row) + a.epsilon);
      for (int64_t i = 0; i < row; ++i) {
        double normal = (to_double(in[base + i]) - mean) * inv_std;
        out[base + i] = static_cast<T>(normal * scale[i] + bias[i]);
      }
      means[r] = mean;
      inv_stds[r] = inv_std;
    }
  });

  std::vector<Tensor> outputs = {std::move(y)};
  const std::vector<double>* statistics[] = {&means, &inv_stds};
  for (size_t i = 1; i < ctx.num_outputs(); ++i) {
    Tensor stat = Tensor::from_vector<double>(ctx.output_type(i).shape, *statistics[i - 1]);
    outputs.push_back(stat.cast(ctx.output_type(i).dtype));
  }
  return outputs;
}

std::vector<ComputeTensor> layer_norm_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  LayerNormAttributes a = LayerNormAttributes::read(ctx, x.type());
  const Shape normalized = a.normalized_shape(x.type());
  const TensorType statistics{accumulation_dtype(x.dtype()), a.statistics_shape(x.type())};
  const DType acc = statistics.dtype;
  const double n = static_cast<double>(num_elements(normalized));
  const size_t axis = static_cast<size_t>(a.axis);
  // x at the statistics' index i (leading axes) and the row's index r (trailing axes).
  auto element = [&](const Indices& i, const Indices& r) {
    Indices at(i.begin(), i.begin() + axis);
    at.insert(at.end(), r.begin(), r.end());
    return cast(acc, x(at));
  };
  // The statistics' index of element i of X.
  auto row_of = [&](const Indices& i) {
    Indices at(i.begin(), i.begin() + axis);
    at.resize(i.size(), index(0));
    return at;
  };
  ComputeTensor sum = ctx.reduce("layernorm_sum", statistics, normalized, Reducer::sum, element);
  ComputeTensor mean = ctx.compute("layernorm_mean", statistics, [&](const Indices& i) {
    return loop::Div::make(sum(i), constant(acc, n));
  });
  ComputeTensor squares = ctx.reduce("layernorm_squares", statistics, normalized, Reducer::sum,
                                     [&](const Indices& i, const Indices& r) {
    loop::Expr deviation = element(i, r) - mean(i);
    return deviation * deviation;
  });
  ComputeTensor inv_std = ctx.compute("layernorm_inv_std", statistics, [&](const Indices& i) {
    loop::Expr variance = loop::Div::make(squares(i), constant(acc, n));
    return loop::Div::make(constant(acc, 1), call("sqrt", {variance + constant(acc, a.epsilon)}));
  });
  const TensorType& type = ctx.output_type(0);
  const ComputeTensor& scale = ctx.input(1);
  std::vector<ComputeTensor> outputs = {ctx.compute("layernorm", type, [&](const Indices& i) {
    loop::Expr normal = (cast(acc, x(i)) - mean(row_of(i))) * inv_std(row_of(i));
    loop::Expr y = normal * cast(acc, scale(broadcast_indices(i, scale.shape())));
    if (ctx.has_input(2)) {
      const ComputeTensor& bias = ctx.input(2);
      y = y + cast(acc, bias(broadcast_indices(i, bias.shape())));
    }
    return cast(type.dtype, y);
  })};
  // The optional Mean and InvStdDev, in stash_type.
  const ComputeTensor* stats[] = {&mean, &inv_std};
  for (size_t k = 1; k < ctx.num_outputs(); ++k) {
    const ComputeTensor& stat = *stats[k - 1];
    const TensorType& stat_type = ctx.output_type(k);
    outputs.push_back(stat.dtype() == stat_type.dtype
                          ? stat
                          : ctx.compute("layernorm_stat", stat_type, [&](const Indices& i) {
                              return cast(stat_type.dtype, stat(i));
                            }));
  }
  return outputs;
}

}  // namespace

void register_layer_norm_ops(OpRegistry& registry) {
  registry.add({.name = "LayerNormalization",
                .min_opset = 17,
                .min_inputs = 2,
                .max_inputs = 3,
                .max_outputs = 3,
                .fusion = FusionKind::reduction,
                .shape_rule = layer_norm_shape,
                .kernel = layer_norm_kernel,
                .compute = layer_norm_compute});
}

}  // namespace minic
