// Activation functions with parameters: LeakyRelu, HardSigmoid, HardSwish, Elu, Selu, Celu,
// ThresholdedRelu, Gelu, Mish, Swish, Shrink, PRelu and Clip. Course module 2.
//
// Each is an elementwise formula of x and the op's attributes (alpha, beta, ...), evaluated
// in double like the ops of unary.cpp. Two take a second tensor: PRelu's slope, which
// broadcasts to x's shape (so the output has x's shape), and Clip's optional bounds.
// Shrink, unlike the others, takes integers too:
//   Shrink  y = x < -lambd ? x + bias : (x > lambd ? x - bias : 0)
// computed in double and converted back to x's type.
//
// Compute rules (course module 3): the same formulas on loop IR expressions, in f32 for
// f16 and bf16; the constants are the double values of the formulas rounded once.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "broadcast.h"
#include "elementwise.h"

#include "minic/ops/compute.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace minic {

namespace {

std::vector<TensorType> float_shape(const ShapeContext& ctx) {
  require_float_input(ctx, 0);
  if (ctx.node().op == "Gelu") {
    std::string approximate = ctx.get_string("approximate", "none");
    if (approximate != "none" && approximate != "tanh") {
      ctx.fail("approximate is '{}'; Gelu takes 'none' or 'tanh'", approximate);
    }
  }
  return {ctx.input_type(0)};
}

// The formula of each float activation, given the node (for its attributes).
using Formula = std::function<double(double)>;

Formula leaky_relu(const KernelContext& ctx) {
  double alpha = ctx.get_float("alpha", 0.01f);
  return [alpha](double x) { return x < 0 ? alpha * x : x; };
}

Formula hard_sigmoid(const KernelContext& ctx) {
  double alpha = ctx.get_float("alpha", 0.2f);
  double beta = ctx.get_float("beta", 0.5f);
  return [alpha, beta](double x) { return std::clamp(alpha * x + beta, 0.0, 1.0); };
}

Formula hard_swish(const KernelContext&) {
  return [](double x) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); };
}

Formula elu(const KernelContext& ctx) {
  double alpha = ctx.get_float("alpha", 1.0f);
  return [alpha](double x) { return x < 0 ? alpha * (std::exp(x) - 1) : x; };
}

Formula selu(const KernelContext& ctx) {
  double alpha = ctx.get_float("alpha", 1.67326319217681884765625f);
  double gamma = ctx.get_float("gamma", 1.05070102214813232421875f);
  return [alpha, gamma](double x) {
    return x <= 0 ? gamma * alpha * (std::exp(x) - 1) : gamma * x;
  };
}

Formula celu(const KernelContext& ctx) {
  double alpha = ctx.get_float("alpha", 1.0f);
  return [alpha](double x) {
    return std::max(0.0, x) + std::min(0.0, alpha * (std::exp(x / alpha) - 1));
  };
}

Formula thresholded_relu(const KernelContext& ctx) {
  double alpha = ctx.get_float("alpha", 1.0f);
  return [alpha](double x) { return x > alpha ? x : 0; };
}

Formula gelu(const KernelContext& ctx) {
  if (ctx.get_string("approximate", "none") == "tanh") {
    return [](double x) {
      double inner = std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x);
      return 0.5 * x * (1 + std::tanh(inner));
    };
  }
  return [](double x) { return 0.5 * x * (1 + std::erf(x / std::numbers::sqrt2)); };
}

Formula swish(const KernelContext& ctx) {
  double alpha = ctx.get_float("alpha", 1.0f);
  return [alpha](double x) { return x / (1 + std::exp(-alpha * x)); };
}

Formula mish(const KernelContext&) {
  return [](double x) {
    double softplus = x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    return x * std::tanh(softplus);
  };
}

struct FloatActivation {
  const char* name;
  int since;  // the opset that introduced the op in this form
  Formula (*formula)(const KernelContext&);
};

const FloatActivation kFloatActivations[] = {
    {"LeakyRelu", 1, leaky_relu},
    {"HardSigmoid", 1, hard_sigmoid},
    {"HardSwish", 14, hard_swish},
    {"Elu", 1, elu},
    {"Selu", 1, selu},
    {"Celu", 12, celu},
    {"ThresholdedRelu", 10, thresholded_relu},
    {"Gelu", 20, gelu},
    {"Mish", 18, mish},
    {"Swish", 24, swish},
};

// --- PRelu: x < 0 ? slope * x : x, with slope broadcast to x's shape -------------------------

std::vector<TensorType> prelu_shape(const ShapeContext& ctx) {
  require_numeric_input(ctx, 0);
  require_same_dtype(ctx, 0, 1);
  const TensorType& x = ctx.input_type(0);
  if (broadcast_shapes(ctx, {x.shape, ctx.input_type(1).shape}) != x.shape) {
    ctx.fail("slope of shape {} does not broadcast to the shape {} of x",
             shape_string(ctx.input_type(1).shape), shape_string(x.shape));
  }
  return {x};
}

std::vector<Tensor> prelu_kernel(const KernelContext& ctx) {
  Tensor out = ctx.make_output(0);
  visit_numeric(out.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    broadcast_binary<T, T, T>(ctx.input(0), ctx.input(1), out, [](T x, T slope) {
      return is_negative(C(x)) ? T(wrapping_mul(C(slope), C(x))) : x;
    });
  });
  return single_output(std::move(out));
}

// --- Shrink: x moved toward 0 by bias, and 0 within [-lambd, lambd] --------------------------

std::vector<TensorType> shrink_shape(const ShapeContext& ctx) {
  require_numeric_input(ctx, 0);
  return {ctx.input_type(0)};
}

std::vector<Tensor> shrink_kernel(const KernelContext& ctx) {
  const double lambd = ctx.get_float("lambd", 0.5f);
  const double bias = ctx.get_float("bias", 0.0f);
  const Tensor& x = ctx.input(0);
  Tensor out = ctx.make_output(0);
  visit_numeric(x.dtype(), [&]<typename T>() {
    auto in = x.values<T>();
    auto result = out.values<T>();
    for (size_t i = 0; i < in.size(); ++i) {
      double value = to_double(in[i]);
      double shrunk = value < -lambd ? value + bias : (value > lambd ? value - bias : 0);
      result[i] = saturate_cast<T>(shrunk);
    }
  });
  return single_output(std::move(out));
}

// --- Clip: min(max(x, low), high); a missing bound is no bound --------------------------------
//
// Opsets 6 to 10 give the bounds as float attributes; from opset 11 they are optional scalar
// inputs of x's type, and x may be any numeric type. When low > high every element becomes
// high, as numpy.clip gives. NaN stays NaN.

std::vector<TensorType> clip_shape(const ShapeContext& ctx) {
  if (ctx.opset() < 11) {
    require_float_input(ctx, 0);
    if (ctx.num_inputs() > 1) ctx.fail("takes its bounds as attributes before opset 11");
    return {ctx.input_type(0)};
  }
  require_numeric_input(ctx, 0);
  for (size_t bound : {1, 2}) {
    if (!ctx.has_input(bound)) continue;
    require_same_dtype(ctx, 0, bound);
    if (ctx.input_type(bound).num_elements() != 1) {
      ctx.fail("input {} (a bound) has shape {}; Clip's bounds are scalars", bound,
               shape_string(ctx.input_type(bound).shape));
    }
  }
  return {ctx.input_type(0)};
}

std::vector<Tensor> clip_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor out = ctx.make_output(0);
  visit_numeric(x.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    C low = std::numeric_limits<C>::lowest();
    C high = std::numeric_limits<C>::max();
    if (ctx.opset() < 11) {
      low = static_cast<C>(ctx.get_float("min", std::numeric_limits<float>::lowest()));
      high = static_cast<C>(ctx.get_float("max", std::numeric_limits<float>::max()));
    } else {
      if (ctx.has_input(1)) low = C(ctx.input(1).values<T>()[0]);
      if (ctx.has_input(2)) high = C(ctx.input(2).values<T>()[0]);
    }
    auto in = x.values<T>();
    auto result = out.values<T>();
    for (size_t i = 0; i < in.size(); ++i) {
      C value = C(in[i]);
      if (value < low) value = low;
      if (value > high) value = high;
      result[i] = T(value);
    }
  });
  return single_output(std::move(out));
}

// --- compute rules ----------------------------------------------------------------------------

using loop::Expr;

// The loop IR formula of a float activation, given the node (for its attributes).
using ExprFormula = std::function<Expr(Expr)>;

// Short names for the formulas below: a constant of x's type, and the intrinsics.
Expr like(const Expr& x, double value) { return constant(x.type().dtype, value); }
Expr exp_of(const Expr& x) { return call("exp", {x}); }
Expr less(const Expr& x, const Expr& y) { return loop::LT::make(x, y); }
Expr clamp01(const Expr& x) { return loop::min(loop::max(x, like(x, 0)), like(x, 1)); }

ExprFormula activation_expr(const NodeContext& ctx) {
  const std::string& op = ctx.node().op;
  if (op == "LeakyRelu") {
    double alpha = ctx.get_float("alpha", 0.01f);
    return [alpha](Expr x) { return select(less(x, like(x, 0)), like(x, alpha) * x, x); };
  }
  if (op == "HardSigmoid") {
    double alpha = ctx.get_float("alpha", 0.2f);
    double beta = ctx.get_float("beta", 0.5f);
    return [alpha, beta](Expr x) { return clamp01(like(x, alpha) * x + like(x, beta)); };
  }
  if (op == "HardSwish") {
    return [](Expr x) { return x * clamp01(loop::Div::make(x, like(x, 6)) + like(x, 0.5)); };
  }
  if (op == "Elu") {
    double alpha = ctx.get_float("alpha", 1.0f);
    return [alpha](Expr x) {
      return select(less(x, like(x, 0)), like(x, alpha) * (exp_of(x) - like(x, 1)), x);
    };
  }
  if (op == "Selu") {
    double alpha = ctx.get_float("alpha", 1.67326319217681884765625f);
    double gamma = ctx.get_float("gamma", 1.05070102214813232421875f);
    return [alpha, gamma](Expr x) {
      Expr negative = like(x, gamma * alpha) * (exp_of(x) - like(x, 1));
      return select(loop::LE::make(x, like(x, 0)), negative, like(x, gamma) * x);
    };
  }
  if (op == "Celu") {
    double alpha = ctx.get_float("alpha", 1.0f);
    return [alpha](Expr x) {
      Expr scaled = like(x, alpha) * (exp_of(loop::Div::make(x, like(x, alpha))) - like(x, 1));
      return loop::max(x, like(x, 0)) + loop::min(scaled, like(x, 0));
    };
  }
  if (op == "ThresholdedRelu") {
    double alpha = ctx.get_float("alpha", 1.0f);
    return [alpha](Expr x) { return select(loop::GT::make(x, like(x, alpha)), x, like(x, 0)); };
  }
  if (op == "Gelu" && ctx.get_string("approximate", "none") == "tanh") {
    return [](Expr x) {
      Expr inner = like(x, std::sqrt(2 / std::numbers::pi)) * (x + like(x, 0.044715) * x * x * x);
      return like(x, 0.5) * x * (like(x, 1) + call("tanh", {inner}));
    };
  }
  if (op == "Gelu") {
    // x / sqrt(2) as x * (1 / sqrt(2)): within an ulp of the quotient, and a multiply
    // where a vector division takes ten times as long.
    return [](Expr x) {
      Expr scaled = x * like(x, 1 / std::numbers::sqrt2);
      return like(x, 0.5) * x * (like(x, 1) + call("erf", {scaled}));
    };
  }
  if (op == "Swish") {
    double alpha = ctx.get_float("alpha", 1.0f);
    return [alpha](Expr x) { return x * call("sigmoid", {like(x, alpha) * x}); };
  }
  MINIC_CHECK(op == "Mish");
  return [](Expr x) {
    Expr one = like(x, 1);
    Expr softplus = select(loop::GT::make(x, like(x, 0)),
                           x + call("log", {one + exp_of(like(x, 0) - x)}),
                           call("log", {one + exp_of(x)}));
    return x * call("tanh", {softplus});
  };
}

std::vector<ComputeTensor> activation_compute(const ComputeContext& ctx) {
  ExprFormula formula = activation_expr(ctx);
  DType dtype = accumulation_dtype(ctx.input(0).dtype());
  return {elementwise(ctx, dtype, [&](const std::vector<Expr>& x) { return formula(x[0]); })};
}

// Shrink in f32 for f16 and bf16, in f64 for integers (as the kernel computes in double).
std::vector<ComputeTensor> shrink_compute(const ComputeContext& ctx) {
  const double lambd = ctx.get_float("lambd", 0.5f);
  const double bias = ctx.get_float("bias", 0.0f);
  DType input = ctx.input(0).dtype();
  DType dtype = is_float(input) ? accumulation_dtype(input) : DType::f64;
  return {elementwise(ctx, dtype, [&](const std::vector<Expr>& x) {
    Expr value = x[0];
    Expr above = select(loop::GT::make(value, like(value, lambd)), value - like(value, bias),
                        like(value, 0));
    return select(less(value, like(value, -lambd)), value + like(value, bias), above);
  })};
}

std::vector<ComputeTensor> prelu_compute(const ComputeContext& ctx) {
  return {elementwise(ctx, ctx.input(0).dtype(), [](const std::vector<Expr>& x) {
    return select(less(x[0], like(x[0], 0)), x[1] * x[0], x[0]);
  })};
}

// Clip: min(max(x, low), high), the bounds read as scalars (attributes before opset 11).
std::vector<ComputeTensor> clip_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  auto scalar = [](const ComputeTensor& bound) { return bound(Indices(bound.rank(), index(0))); };
  return {ctx.compute("clip", ctx.output_type(0), [&](const Indices& i) {
    Expr value = x(i);
    if (ctx.opset() < 11) {
      if (ctx.has_attr("min")) value = loop::max(value, like(value, ctx.get_float("min", 0)));
      if (ctx.has_attr("max")) value = loop::min(value, like(value, ctx.get_float("max", 0)));
      return value;
    }
    if (ctx.has_input(1)) value = loop::max(value, scalar(ctx.input(1)));
    if (ctx.has_input(2)) value = loop::min(value, scalar(ctx.input(2)));
    return value;
  })};
}

}  // namespace

void register_activation_ops(OpRegistry& registry) {
  for (const FloatActivation& activation : kFloatActivations) {
    auto formula = activation.formula;
    registry.add({.name = activation.name,
                  .min_opset = activation.since,
                  .fusion = FusionKind::elementwise,
                  .shape_rule = float_shape,
                  .kernel = [formula](const KernelContext& ctx) {
                    return std::vector<Tensor>{map_float(ctx.input(0), formula(ctx))};
                  },
                  .compute = activation_compute});
  }
  registry.add({.name = "Shrink",
                .min_opset = 9,
                .fusion = FusionKind::elementwise,
                .shape_rule = shrink_shape,
                .kernel = shrink_kernel,
                .compute = shrink_compute});
  registry.add({.name = "PRelu",
                .min_opset = 7,
                .min_inputs = 2,
                .max_inputs = 2,
                .fusion = FusionKind::broadcast,
                .shape_rule = prelu_shape,
                .kernel = prelu_kernel,
                .compute = prelu_compute});
  registry.add({.name = "Clip",
                .min_opset = 6,
                .max_inputs = 3,
                .fusion = FusionKind::elementwise,
                .shape_rule = clip_shape,
                .kernel = clip_kernel,
                .compute = clip_compute});
}

}  // namespace minic
