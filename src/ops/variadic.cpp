// Sum, Mean, Min and Max: elementwise over one or more inputs, with numpy broadcasting.
// Course module 2.
//
// The output has the broadcast shape of all inputs. The kernel folds the inputs in order:
// out = broadcast(input 0), then out[i] = combine(out[i], input k[ik]) for k = 1, 2, ...
// Mean divides the sum by the input count at the end. Min and Max propagate NaN, as
// numpy.minimum and numpy.maximum do: a NaN in any input gives NaN in that position.
//
// Compute rules (course module 3): the same fold as one expression over the broadcast
// inputs, in the element type; the loop IR's Min and Max propagate NaN as these do.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "broadcast.h"
#include "elementwise.h"

#include "minic/ops/compute.h"

#include <cmath>

namespace minic {

namespace {

// True for a NaN of a float compute type; false for integers.
template <typename C>
bool is_nan(C x) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isnan(x);
  } else {
    return false;
  }
}

std::vector<TensorType> variadic_shape(const ShapeContext& ctx) {
  bool floats_only = ctx.node().op == "Sum" || ctx.node().op == "Mean";
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (floats_only) {
      require_float_input(ctx, i);
    } else {
      require_numeric_input(ctx, i);
    }
    require_same_dtype(ctx, 0, i);
    shapes.push_back(ctx.input_type(i).shape);
  }
  return {{ctx.input_type(0).dtype, broadcast_shapes(ctx, shapes)}};
}

// Folds every input into the output with combine(accumulated, next), in compute_t<T>.
template <typename Combine>
Tensor fold_inputs(const KernelContext& ctx, Combine combine) {
  Tensor out = ctx.make_output(0);
  visit_numeric(out.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    // Start from input 0 broadcast to the output's shape: combine(_, x) keeping x.
    broadcast_binary<T, T, T>(out, ctx.input(0), out, [](T, T x) { return x; });
    for (size_t k = 1; k < ctx.num_inputs(); ++k) {
      // Reading and writing `out` at the same position is safe: each element is read once,
      // just before it is written.
      broadcast_binary<T, T, T>(out, ctx.input(k), out,
                                [&](T sum, T x) { return T(combine(C(sum), C(x))); });
    }
  });
  return out;
}

std::vector<Tensor> sum_kernel(const KernelContext& ctx) {
  return {fold_inputs(ctx, [](auto sum, auto x) { return sum + x; })};
}

std::vector<Tensor> mean_kernel(const KernelContext& ctx) {
  Tensor sum = fold_inputs(ctx, [](auto sum, auto x) { return sum + x; });
  double count = static_cast<double>(ctx.num_inputs());
  return {map_float(sum, [count](double x) { return x / count; })};
}

std::vector<Tensor> min_kernel(const KernelContext& ctx) {
  return {fold_inputs(ctx, [](auto low, auto x) {
    if (is_nan(low) || is_nan(x)) return is_nan(low) ? low : x;
    return x < low ? x : low;
  })};
}

std::vector<Tensor> max_kernel(const KernelContext& ctx) {
  return {fold_inputs(ctx, [](auto high, auto x) {
    if (is_nan(high) || is_nan(x)) return is_nan(high) ? high : x;
    return x > high ? x : high;
  })};
}

// out = combine(...combine(input 0, input 1)..., input n-1); Mean divides at the end.
ComputeRule fold_compute(loop::Expr (*combine)(loop::Expr, loop::Expr), bool mean) {
  return [combine, mean](const ComputeContext& ctx) {
    DType dtype = ctx.input(0).dtype();
    return std::vector<ComputeTensor>{
        elementwise(ctx, dtype, [&](const std::vector<loop::Expr>& x) {
          loop::Expr result = x[0];
          for (size_t k = 1; k < x.size(); ++k) result = combine(result, x[k]);
          if (mean) {
            result = loop::Div::make(result, constant(dtype, static_cast<double>(x.size())));
          }
          return result;
        })};
  };
}

void add_variadic(OpRegistry& registry, const char* name, Kernel kernel, ComputeRule compute) {
  // Opset 6 takes inputs of one shape, opset 8 broadcasts them; broadcasting covers both.
  registry.add({.name = name,
                .min_opset = 6,
                .min_inputs = 1,
                .max_inputs = 1 << 16,
                .fusion = FusionKind::broadcast,
                .shape_rule = variadic_shape,
                .kernel = std::move(kernel),
                .compute = std::move(compute)});
}

}  // namespace

void register_variadic_ops(OpRegistry& registry) {
  auto plus = [](loop::Expr x, loop::Expr y) { return x + y; };
  add_variadic(registry, "Sum", sum_kernel, fold_compute(plus, false));
  add_variadic(registry, "Mean", mean_kernel, fold_compute(plus, true));
  add_variadic(registry, "Min", min_kernel, fold_compute(loop::min, false));
  add_variadic(registry, "Max", max_kernel, fold_compute(loop::max, false));
}

}  // namespace minic
