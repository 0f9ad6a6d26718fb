// Unary elementwise ops: y[i] = f(x[i]). Course module 2.
//
// Most of these ops are floating-point math and are listed in one table of (name, formula)
// pairs, each formula a function of a double (see elementwise.h for why double). Four ops
// also take integers -- Abs, Neg, Sign, Relu -- and are written once as a generic formula
// instantiated for every numeric type. Not, IsNaN and IsInf map to or from bool.
// Every op here has fusion kind `elementwise`: the output shape is the input shape.
//
// Compute rules (course module 3): the same formulas on loop IR expressions, computed in
// f32 for f16 and bf16 inputs; each libm function above is the loop IR intrinsic of the same
// name (Sin is sin, Acosh is acosh), Softplus and Softsign are written out.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "elementwise.h"

#include "minic/ops/compute.h"

#include <cmath>
#include <limits>
#include <map>

namespace minic {

namespace {

// A floating-point unary op: its name, the opset that introduced it, and its formula.
struct FloatUnaryOp {
  const char* name;
  int since;
  double (*formula)(double);
};

double softplus(double x) {
  // log(1 + e^x) without overflow for large x: x + log(1 + e^-x).
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

const FloatUnaryOp kFloatUnaryOps[] = {
    {"Exp", 1, [](double x) { return std::exp(x); }},
    {"Log", 1, [](double x) { return std::log(x); }},
    {"Sqrt", 1, [](double x) { return std::sqrt(x); }},
    {"Reciprocal", 1, [](double x) { return 1 / x; }},
    {"Ceil", 1, [](double x) { return std::ceil(x); }},
    {"Floor", 1, [](double x) { return std::floor(x); }},
    // Halves go to the even neighbour (2.5 -> 2): nearbyint in the default rounding mode.
    {"Round", 11, [](double x) { return std::nearbyint(x); }},
    {"Erf", 9, [](double x) { return std::erf(x); }},
    {"Tanh", 1, [](double x) { return std::tanh(x); }},
    {"Sigmoid", 1, [](double x) { return 1 / (1 + std::exp(-x)); }},
    {"Sin", 7, [](double x) { return std::sin(x); }},
    {"Cos", 7, [](double x) { return std::cos(x); }},
    {"Tan", 7, [](double x) { return std::tan(x); }},
    {"Asin", 7, [](double x) { return std::asin(x); }},
    {"Acos", 7, [](double x) { return std::acos(x); }},
    {"Atan", 7, [](double x) { return std::atan(x); }},
    {"Sinh", 9, [](double x) { return std::sinh(x); }},
    {"Cosh", 9, [](double x) { return std::cosh(x); }},
    {"Asinh", 9, [](double x) { return std::asinh(x); }},
    {"Acosh", 9, [](double x) { return std::acosh(x); }},
    {"Atanh", 9, [](double x) { return std::atanh(x); }},
    {"Softplus", 1, softplus},
    {"Softsign", 1, [](double x) { return x / (1 + std::fabs(x)); }},
};

std::vector<TensorType> float_unary_shape(const ShapeContext& ctx) {
  require_float_input(ctx, 0);
  return {ctx.input_type(0)};
}

std::vector<TensorType> numeric_unary_shape(const ShapeContext& ctx) {
  require_numeric_input(ctx, 0);
  return {ctx.input_type(0)};
}

std::vector<TensorType> bool_unary_shape(const ShapeContext& ctx) {
  if (ctx.input_type(0).dtype != DType::boolean) {
    ctx.fail("input 0 is {}; {} takes a bool tensor", dtype_name(ctx.input_type(0).dtype),
             ctx.node().op);
  }
  return {ctx.input_type(0)};
}

// IsNaN, IsInf: a float tensor in, a bool tensor of the same shape out.
std::vector<TensorType> float_test_shape(const ShapeContext& ctx) {
  require_float_input(ctx, 0);
  return {{DType::boolean, ctx.input_type(0).shape}};
}

// A kernel applying `formula` to every element, computed in compute_t<T>: exact for these
// four ops, whose results are one of their inputs, its negation, or -1, 0, 1.
template <typename Formula>
Kernel numeric_unary_kernel(Formula formula) {
  return [formula](const KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    Tensor out = ctx.make_output(0);
    visit_numeric(x.dtype(), [&]<typename T>() {
      using C = compute_t<T>;
      auto in = x.values<T>();
      auto result = out.values<T>();
      for (size_t i = 0; i < in.size(); ++i) result[i] = T(formula(C(in[i])));
    });
    return std::vector<Tensor>{std::move(out)};
  };
}

// out[i] = test(x[i]) for a float tensor x and a bool output.
template <typename Test>
Tensor test_floats(const Tensor& x, Tensor out, Test test) {
  visit_dtype(x.dtype(), [&]<typename T>() {
    if constexpr (is_float_v<T>) {
      auto in = x.values<T>();
      auto result = out.values<bool>();
      for (size_t i = 0; i < in.size(); ++i) result[i] = test(to_double(in[i]));
    }
  });
  return out;
}

std::vector<Tensor> isnan_kernel(const KernelContext& ctx) {
  return {test_floats(ctx.input(0), ctx.make_output(0), [](double x) { return std::isnan(x); })};
}

std::vector<Tensor> isinf_kernel(const KernelContext& ctx) {
  bool negative = ctx.get_int("detect_negative", 1) != 0;
  bool positive = ctx.get_int("detect_positive", 1) != 0;
  return {test_floats(ctx.input(0), ctx.make_output(0), [&](double x) {
    return std::isinf(x) && (x > 0 ? positive : negative);
  })};
}

std::vector<Tensor> not_kernel(const KernelContext& ctx) {
  Tensor out = ctx.make_output(0);
  auto in = ctx.input(0).values<bool>();
  auto result = out.values<bool>();
  for (size_t i = 0; i < in.size(); ++i) result[i] = !in[i];
  return single_output(std::move(out));
}

// --- compute rules ----------------------------------------------------------------------------

using loop::Expr;
using ExprFormula = Expr (*)(Expr);

Expr softplus_expr(Expr x) {
  Expr one = constant(x.type().dtype, 1);
  Expr zero = constant(x.type().dtype, 0);
  Expr large = x + call("log", {one + call("exp", {zero - x})});
  return select(loop::GT::make(x, zero), large, call("log", {one + call("exp", {x})}));
}

// The loop IR formula of each float unary op that has one.
const std::map<std::string, ExprFormula, std::less<>> kFloatUnaryExprs = {
    {"Exp", [](Expr x) { return call("exp", {x}); }},
    {"Log", [](Expr x) { return call("log", {x}); }},
    {"Sqrt", [](Expr x) { return call("sqrt", {x}); }},
    {"Reciprocal", [](Expr x) { return loop::Div::make(constant(x.type().dtype, 1), x); }},
    {"Ceil", [](Expr x) { return call("ceil", {x}); }},
    {"Floor", [](Expr x) { return call("floor", {x}); }},
    {"Round", [](Expr x) { return call("round", {x}); }},
    {"Erf", [](Expr x) { return call("erf", {x}); }},
    {"Tanh", [](Expr x) { return call("tanh", {x}); }},
    {"Sigmoid", [](Expr x) { return call("sigmoid", {x}); }},
    {"Sin", [](Expr x) { return call("sin", {x}); }},
    {"Cos", [](Expr x) { return call("cos", {x}); }},
    {"Tan", [](Expr x) { return call("tan", {x}); }},
    {"Asin", [](Expr x) { return call("asin", {x}); }},
    {"Acos", [](Expr x) { return call("acos", {x}); }},
    {"Atan", [](Expr x) { return call("atan", {x}); }},
    {"Sinh", [](Expr x) { return call("sinh", {x}); }},
    {"Cosh", [](Expr x) { return call("cosh", {x}); }},
    {"Asinh", [](Expr x) { return call("asinh", {x}); }},
    {"Acosh", [](Expr x) { return call("acosh", {x}); }},
    {"Atanh", [](Expr x) { return call("atanh", {x}); }},
    {"Softplus", softplus_expr},
    {"Softsign", [](Expr x) {
       return loop::Div::make(x, constant(x.type().dtype, 1) + call("fabs", {x}));
     }},
};

ComputeRule float_unary_compute(ExprFormula formula) {
  return [formula](const ComputeContext& ctx) {
    DType dtype = accumulation_dtype(ctx.input(0).dtype());
    return std::vector<ComputeTensor>{
        elementwise(ctx, dtype, [&](const std::vector<Expr>& x) { return formula(x[0]); })};
  };
}

// A rule for Abs, Neg, Sign, Relu: the formula on the element type itself.
ComputeRule numeric_unary_compute(ExprFormula formula) {
  return [formula](const ComputeContext& ctx) {
    DType dtype = ctx.input(0).dtype();
    return std::vector<ComputeTensor>{
        elementwise(ctx, dtype, [&](const std::vector<Expr>& x) { return formula(x[0]); })};
  };
}

Expr is_negative_expr(const Expr& x) {
  return loop::LT::make(x, constant(x.type().dtype, 0));
}

std::vector<ComputeTensor> not_compute(const ComputeContext& ctx) {
  return {elementwise(ctx, DType::boolean, [](const std::vector<Expr>& x) {
    return loop::Not::make(x[0]);
  })};
}

std::vector<ComputeTensor> isnan_compute(const ComputeContext& ctx) {
  // NaN is the one value unequal to itself.
  return {elementwise(ctx, ctx.input(0).dtype(), [](const std::vector<Expr>& x) {
    return loop::NE::make(x[0], x[0]);
  })};
}

std::vector<ComputeTensor> isinf_compute(const ComputeContext& ctx) {
  bool negative = ctx.get_int("detect_negative", 1) != 0;
  bool positive = ctx.get_int("detect_positive", 1) != 0;
  return {elementwise(ctx, ctx.input(0).dtype(), [&](const std::vector<Expr>& x) {
    DType dtype = x[0].type().dtype;
    double infinity = std::numeric_limits<double>::infinity();
    Expr result = constant(DType::boolean, 0);
    if (positive) result = loop::Or::make(result, loop::EQ::make(x[0], constant(dtype, infinity)));
    if (negative) result = loop::Or::make(result, loop::EQ::make(x[0], constant(dtype, -infinity)));
    return result;
  })};
}

void add_unary(OpRegistry& registry, const char* name, int since, ShapeRule shape_rule,
               Kernel kernel, ComputeRule compute) {
  registry.add({.name = name,
                .min_opset = since,
                .fusion = FusionKind::elementwise,
                .shape_rule = std::move(shape_rule),
                .kernel = std::move(kernel),
                .compute = std::move(compute)});
}

}  // namespace

void register_unary_ops(OpRegistry& registry) {
  for (const FloatUnaryOp& op : kFloatUnaryOps) {
    auto formula = op.formula;
    auto expr = kFloatUnaryExprs.find(op.name);
    ComputeRule compute;
    if (expr != kFloatUnaryExprs.end()) compute = float_unary_compute(expr->second);
    add_unary(registry, op.name, op.since, float_unary_shape, [formula](const KernelContext& ctx) {
      return std::vector<Tensor>{map_float(ctx.input(0), formula)};
    }, compute);
  }

  // Ops on every numeric type. Integer negation wraps (see negate() in elementwise.h). For
  // floats the sign of zero counts (1 / Abs(-0) is +inf, 1 / Neg(0) is -inf): Abs is fabs,
  // and Neg multiplies by -1 (0 - x would give +0 for x = +0).
  add_unary(registry, "Abs", 1, numeric_unary_shape, numeric_unary_kernel([](auto x) {
              using C = decltype(x);
              return x == C(0) ? C(0) : is_negative(x) ? negate(x) : x;
            }),
            numeric_unary_compute([](Expr x) {
              if (is_float(x.type().dtype)) return call("fabs", {x});
              return select(is_negative_expr(x), constant(x.type().dtype, 0) - x, x);
            }));
  add_unary(registry, "Neg", 1, numeric_unary_shape,
            numeric_unary_kernel([](auto x) { return negate(x); }),
            numeric_unary_compute([](Expr x) {
              DType dtype = x.type().dtype;
              return is_float(dtype) ? x * constant(dtype, -1) : constant(dtype, 0) - x;
            }));
  // Sign keeps 0 and NaN as they are.
  add_unary(registry, "Sign", 9, numeric_unary_shape, numeric_unary_kernel([](auto x) {
              using C = decltype(x);
              return x > 0 ? C(1) : is_negative(x) ? C(-1) : x;
            }),
            numeric_unary_compute([](Expr x) {
              DType dtype = x.type().dtype;
              Expr negative = select(is_negative_expr(x), constant(dtype, -1), x);
              return select(loop::GT::make(x, constant(dtype, 0)), constant(dtype, 1), negative);
            }));
  // Relu: max(x, 0), keeping NaN.
  add_unary(registry, "Relu", 1, numeric_unary_shape,
            numeric_unary_kernel([](auto x) { return is_negative(x) ? decltype(x)(0) : x; }),
            numeric_unary_compute(
                [](Expr x) { return loop::max(x, constant(x.type().dtype, 0)); }));

  add_unary(registry, "Not", 1, bool_unary_shape, not_kernel, not_compute);
  add_unary(registry, "IsNaN", 9, float_test_shape, isnan_kernel, isnan_compute);
  add_unary(registry, "IsInf", 10, float_test_shape, isinf_kernel, isinf_compute);
}

}  // namespace minic
