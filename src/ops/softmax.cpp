// Softmax, LogSoftmax and Hardmax: normalisations along an axis. Course module 2.
//
//   Softmax(x)_j    = exp(x_j - max(x)) / sum_k exp(x_k - max(x))
//   LogSoftmax(x)_j = (x_j - max(x)) - log(sum_k exp(x_k - max(x)))
//   Hardmax(x)_j    = 1 if j is the first index of max(x), else 0
// Subtracting the maximum changes nothing mathematically and keeps exp from overflowing:
// every exponent is <= 0, so each term is in (0, 1] and the sum in [1, n].
//
// Which elements form one group ("x" above) changed in opset 13:
//   opset < 13:  the input is viewed as a matrix [d0 * ... * d(axis-1), d(axis) * ... * d(r-1)]
//                and each row is one group; `axis` defaults to 1.
//   opset >= 13: each 1-D fibre along `axis` is one group; `axis` defaults to -1.
// Both are the same computation on the input viewed as [outer, n, inner], where a group is
// the n elements at one (outer, inner) position: the old form has inner = 1 and n the
// product of the trailing dimensions.
//
// Precision: computed in double, then rounded to the element type (float types only).
//
// Compute rules (course module 3) for Softmax and LogSoftmax: three stages over the
// group's axes (the axis, or every axis from it on before opset 13), kept as extent 1:
//   max[g]    = max over the group of x                          (a reduction)
//   sum[g]    = sum over the group of exp(x - max[g])            (a reduction)
//   out[i]    = exp(x[i] - max[g]) / sum[g], or x[i] - max[g] - log(sum[g])
// computed in f32 for f16 and bf16. Hardmax is three stages too, matching the kernel's
// scan (the first element greater than every one before it, NaN never greater):
//   max[g]    = max over the group of x, NaN left out                  (a reduction)
//   first[g]  = min over the group of j where x_j == max[g], else n    (a reduction)
//   out[i]    = 1 where i's index j in the group is first[g] and max[g] is not -inf, else 0
// (with max[g] = -inf, every element -inf or NaN, the kernel's answer is index 0).
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/compute.h"
#include "minic/ops/op.h"

#include <cmath>

namespace minic {

namespace {

// The input viewed as [outer, n, inner]: group (o, i) is the elements at
// (o * n + j) * inner + i for j in [0, n).
struct Groups {
  int64_t outer = 1, n = 1, inner = 1;
};

Groups softmax_groups(const NodeContext& ctx, const Shape& shape) {
  int64_t rank = static_cast<int64_t>(shape.size());
  bool old_form = ctx.opset() < 13;
  int64_t axis = ctx.normalize_axis(ctx.get_int("axis", old_form ? 1 : -1), rank);
  Groups groups;
  for (int64_t i = 0; i < axis; ++i) groups.outer *= shape[i];
  groups.n = shape[axis];
  for (int64_t i = axis + 1; i < rank; ++i) {
    if (old_form) {
      groups.n *= shape[i];
    } else {
      groups.inner *= shape[i];
    }
  }
  return groups;
}

std::vector<TensorType> softmax_shape(const ShapeContext& ctx) {
  const TensorType& input = ctx.input_type(0);
  if (!is_float(input.dtype)) {
    ctx.fail("element type {} is not supported; {} takes floating-point inputs",
             dtype_name(input.dtype), ctx.node().op);
  }
  softmax_groups(ctx, input.shape);  // checks the axis
  return {input};
}

template <typename T>
double to_double(T value) { return static_cast<compute_t<T>>(value); }

// Writes the result for one group of n elements, read and written with a stride of `step`.
template <typename T>
void normalize_group(std::string_view op, const T* x, T* y, int64_t n, int64_t step) {
  double max = -INFINITY;
  int64_t arg_max = 0;
  for (int64_t j = 0; j < n; ++j) {
    double value = to_double(x[j * step]);
    if (value > max) {
      max = value;
      arg_max = j;
    }
  }
  if (op == "Hardmax") {
    for (int64_t j = 0; j < n; ++j) y[j * step] = static_cast<T>(j == arg_max ? 1.0f : 0.0f);
    return;
  }
  double sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += std::exp(to_double(x[j * step]) - max);
  for (int64_t j = 0; j < n; ++j) {
    double shifted = to_double(x[j * step]) - max;
    double result = op == "Softmax" ? std::exp(shifted) / sum : shifted - std::log(sum);
    y[j * step] = static_cast<T>(static_cast<compute_t<T>>(result));
  }
}

std::vector<Tensor> softmax_kernel(const KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  Groups g = softmax_groups(ctx, input.shape());
  Tensor out = ctx.make_output(0);
  if (out.num_elements() == 0) return {std::move(out)};
  visit_dtype(input.dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      const T* x = input.values<T>().data();
      T* y = out.values<T>().data();
      for (int64_t o = 0; o < g.outer; ++o) {
        for (int64_t i = 0; i < g.inner; ++i) {
          int64_t first = o * g.n * g.inner + i;
          normalize_group<T>(ctx.node().op, x + first, y + first, g.n, g.inner);
        }
      }
    } else {
      ctx.fail("element type {} is not supported", dtype_name(input.dtype()));
    }
  });
  return {std::move(out)};
}

// --- compute rules ------------------------------------------------------------------------------

std::vector<ComputeTensor> softmax_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  const bool old_form = ctx.opset() < 13;
  const int64_t axis = ctx.normalize_axis(ctx.get_int("axis", old_form ? 1 : -1), rank);
  const int64_t last = old_form ? rank : axis + 1;  // the group's axes are [axis, last)
  const DType acc = accumulation_dtype(x.dtype());
  Shape kept = x.shape();
  Shape group;
  for (int64_t d = axis; d < last; ++d) {
    group.push_back(kept[d]);
    kept[d] = 1;
  }
  // x at output index i with the group's axes taken from r; the group's index of i.
  auto element = [&](const Indices& i, const Indices& r) {
    Indices at = i;
    for (int64_t d = axis; d < last; ++d) at[d] = r[d - axis];
    return cast(acc, x(at));
  };
  auto group_of = [&](const Indices& i) {
    Indices at = i;
    for (int64_t d = axis; d < last; ++d) at[d] = index(0);
    return at;
  };
  const std::string name = stage_name(ctx);
  ComputeTensor max = ctx.reduce(name + "_max", {acc, kept}, group, Reducer::max, element);
  ComputeTensor sum = ctx.reduce(name + "_sum", {acc, kept}, group, Reducer::sum,
                                 [&](const Indices& i, const Indices& r) {
                                   return call("exp", {element(i, r) - max(i)});
                                 });
  const TensorType& type = ctx.output_type(0);
  const bool log = ctx.node().op == "LogSoftmax";
  return {ctx.compute(name, type, [&](const Indices& i) {
    loop::Expr shifted = cast(acc, x(i)) - max(group_of(i));
    loop::Expr result = log ? shifted - call("log", {sum(group_of(i))})
                            : loop::Div::make(call("exp", {shifted}), sum(group_of(i)));
    return cast(type.dtype, result);
  })};
}

std::vector<ComputeTensor> hardmax_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  const bool old_form = ctx.opset() < 13;
  const int64_t axis = ctx.normalize_axis(ctx.get_int("axis", old_form ? 1 : -1), rank);
  const int64_t last = old_form ? rank : axis + 1;  // the group's axes are [axis, last)
  const DType dtype = x.dtype();
  Shape kept = x.shape();
  Shape group;
  for (int64_t d = axis; d < last; ++d) {
    group.push_back(kept[d]);
    kept[d] = 1;
  }
  int64_t group_size = 1;
  for (int64_t extent : group) group_size *= extent;
  auto element = [&](const Indices& i, const Indices& r) {
    Indices at = i;
    for (int64_t d = axis; d < last; ++d) at[d] = r[d - axis];
    return x(at);
  };
  auto group_of = [&](const Indices& i) {
    Indices at = i;
    for (int64_t d = axis; d < last; ++d) at[d] = index(0);
    return at;
  };
  auto position_in_group = [&](const Indices& i) {
    Indices within(i.begin() + axis, i.begin() + last);
    return flat_offset(within, group);
  };
  const std::string name = stage_name(ctx);
  const double infinity = INFINITY;
  ComputeTensor max = ctx.reduce(name + "_max", {dtype, kept}, group, Reducer::max,
                                 [&](const Indices& i, const Indices& r) {
                                   loop::Expr value = element(i, r);
                                   return select(loop::NE::make(value, value),
                                                 constant(dtype, -infinity), value);
                                 });
  ComputeTensor first = ctx.reduce(name + "_first", {DType::i64, kept}, group, Reducer::min,
                                   [&](const Indices& i, const Indices& r) {
                                     return select(loop::EQ::make(element(i, r), max(i)),
                                                   flat_offset(r, group), index(group_size));
                                   });
  const TensorType& type = ctx.output_type(0);
  return {ctx.compute(name, type, [&](const Indices& i) {
    loop::Expr found = loop::NE::make(max(group_of(i)), constant(dtype, -infinity));
    loop::Expr chosen = select(found, first(group_of(i)), index(0));
    return select(loop::EQ::make(position_in_group(i), chosen), constant(type.dtype, 1),
                  constant(type.dtype, 0));
  })};
}

}  // namespace

void register_softmax_ops(OpRegistry& registry) {
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    const bool hardmax = std::string_view(op) == "Hardmax";
    registry.add({.name = op,
                  .min_opset = 1,
                  .fusion = FusionKind::reduction,
                  .shape_rule = softmax_shape,
                  .kernel = softmax_kernel,
                  .compute = hardmax ? hardmax_compute : softmax_compute});
  }
}

}  // namespace minic
