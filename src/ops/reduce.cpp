// The reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
// ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare, and ArgMax / ArgMin.
// Course module 2.
//
// A reduction combines the elements of its input along some axes into one element each:
//   ReduceSum(x: [2,3,4], axes=[1], keepdims=1) -> [2,1,4]      (keepdims=0: [2,4])
// The axes come from the attribute `axes` up to opset 12 for ReduceSum and opset 17 for the
// others; from then on from an optional second input, whose value minic needs at compile
// time because the output shape depends on it. No axes means all axes -- unless
// noop_with_empty_axes = 1, which makes the op the identity.
//
// One walker runs all ten Reduce ops. Every output element gets an accumulator that starts
// at `init`; the walker visits the input in row-major order and combines each element into
// the accumulator of the output element it falls in; at the end `finish` turns each
// accumulator into the result, knowing how many elements went in. Each op is then one line
// of the table in reduction_for(). An empty reduction (a reduced axis of size 0) gives
// finish(init, 0): 0 for a sum, -inf for a max, 1 for a product, log(0) = -inf for
// ReduceLogSum, as the ONNX spec asks.
//
// Precision: floating-point inputs are accumulated in double; the reductions are limited by
// memory traffic, so the reference can afford the more accurate sum. Integers accumulate in
// 64 bits and wrap on overflow (accumulate.h).
//
// Compute rules (course module 3) for the ten Reduce ops: one reduction stage over the
// reduced axes -- the element, transformed (|x|, x * x, exp(x)), combined by sum, product,
// max or min -- then, where the op has one, an elementwise stage for `finish` (divide by
// the count, sqrt, log). Floats accumulate in f32 (f16 and bf16 too), integers in their
// own type, which wraps as the 64-bit accumulator truncated back does. ArgMax and ArgMin
// are two reductions: the extreme value, then the first (or last) index holding it.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "accumulate.h"
#include "broadcast.h"
#include "minic/ops/compute.h"
#include "minic/ops/op.h"

#include <cmath>
#include <limits>
#include <optional>

namespace minic {

namespace {

// --- the table of reductions ----------------------------------------------------------------

// The accumulator type for elements of type T: double for floating point, 64-bit integers
// of T's signedness for integers (and for bool, which only ReduceMax and ReduceMin take).
template <typename T>
using reduce_acc_t = std::conditional_t<
    std::is_integral_v<T>, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>, double>;

template <typename A>
bool is_nan(A x) {
  if constexpr (std::is_floating_point_v<A>) {
    return std::isnan(x);
  } else {
    return false;
  }
}

// Max and min that propagate NaN, as numpy and ONNX Runtime do.
template <typename A>
A larger(A acc, A x) { return x > acc || is_nan(x) ? x : acc; }
template <typename A>
A smaller(A acc, A x) { return x < acc || is_nan(x) ? x : acc; }

template <typename A>
A abs_of(A x) {
  if constexpr (std::is_unsigned_v<A>) {
    return x;
  } else if constexpr (std::is_integral_v<A>) {
    return x < 0 ? static_cast<A>(0 - static_cast<uint64_t>(x)) : x;  // wraps for INT64_MIN
  } else {
    return std::abs(x);
  }
}

// The mean of `count` elements summing to `sum`. Of no elements: NaN (as numpy) for floats,
// 0 for integers.
template <typename A>
A mean_of(A sum, int64_t count) {
  if (count == 0) return std::is_floating_point_v<A> ? std::numeric_limits<A>::quiet_NaN() : 0;
  return sum / static_cast<A>(count);
}

template <typename A>
struct Reduction {
  A init;
  A (*combine)(A acc, A x);
  A (*finish)(A acc, int64_t count);
};

// The reduction named by `op`, for input elements of type T accumulated in A. The ops in
// float_only_reduction() are only instantiated here for integer A, never run.
template <typename T, typename A>
Reduction<A> reduction_for(const NodeContext& ctx) {
  // The identities of max and min: -inf and +inf where T has them, T's extremes otherwise.
  A lowest = -std::numeric_limits<A>::infinity();
  A highest = std::numeric_limits<A>::infinity();
  if constexpr (std::is_integral_v<T>) {
    lowest = static_cast<A>(std::numeric_limits<T>::lowest());
    highest = static_cast<A>(std::numeric_limits<T>::max());
  }
  // How an element joins the accumulator...
  auto plus = [](A acc, A x) { return add_wrapping(acc, x); };
  auto times = [](A acc, A x) { return mul_wrapping(acc, x); };
  auto plus_abs = [](A acc, A x) { return add_wrapping(acc, abs_of(x)); };
  auto plus_square = [](A acc, A x) { return add_wrapping(acc, mul_wrapping(x, x)); };
  auto plus_exp = [](A acc, A x) { return acc + A(std::exp(x)); };
  // ... and how the accumulator becomes the result.
  auto keep = [](A acc, int64_t) { return acc; };
  auto square_root = [](A acc, int64_t) { return A(std::sqrt(acc)); };
  auto log_of = [](A acc, int64_t) { return A(std::log(acc)); };

  const std::string& op = ctx.node().op;
  //                                   init     combine        finish
  if (op == "ReduceSum")       return {A(0),    plus,          keep};
  if (op == "ReduceMean")      return {A(0),    plus,          mean_of<A>};
  if (op == "ReduceMax")       return {lowest,  larger<A>,     keep};
  if (op == "ReduceMin")       return {highest, smaller<A>,    keep};
  if (op == "ReduceProd")      return {A(1),    times,         keep};
  if (op == "ReduceL1")        return {A(0),    plus_abs,      keep};
  if (op == "ReduceL2")        return {A(0),    plus_square,   square_root};
  if (op == "ReduceSumSquare") return {A(0),    plus_square,   keep};
  if (op == "ReduceLogSum")    return {A(0),    plus,          log_of};
  // Double accumulation keeps exp from overflowing for inputs up to about 709.
  if (op == "ReduceLogSumExp") return {A(0),    plus_exp,      log_of};
  ctx.fail("is not a reduction minic knows");
}

// Ops whose result is not an integer: minic computes them for floating-point inputs only.
bool float_only_reduction(std::string_view op) {
  return op == "ReduceL2" || op == "ReduceLogSum" || op == "ReduceLogSumExp";
}

void check_reduce_type(const NodeContext& ctx, DType type) {
  std::string_view op = ctx.node().op;
  if (type == DType::boolean && op != "ReduceMax" && op != "ReduceMin") {
    ctx.fail("element type bool is only supported by ReduceMax and ReduceMin");
  }
  if (!is_float(type) && float_only_reduction(op)) {
    ctx.fail("element type {} is not supported; {} takes floating-point inputs",
             dtype_name(type), op);
  }
}

// --- axes -----------------------------------------------------------------------------------

// The first opset in which the op takes its axes as an input rather than an attribute.
int axes_input_opset(std::string_view op) { return op == "ReduceSum" ? 13 : 18; }

// Which axes of a rank-`rank` input the node reduces, as a mask over the axes; nullopt if
// the node is the identity (no axes and noop_with_empty_axes = 1). `axes_input` is the
// value of the optional axes input, or null.
std::optional<std::vector<bool>> reduced_axes(const NodeContext& ctx, int64_t rank,
                                              const Tensor* axes_input) {
  std::vector<int64_t> axes;
  if (ctx.opset() >= axes_input_opset(ctx.node().op)) {
    if (axes_input) {
      if (axes_input->rank() > 1) ctx.fail("the axes input must be 1-D");
      axes = axes_input->to_int64_vector();
    }
  } else {
    if (ctx.has_input(1)) {
      ctx.fail("takes its axes as an attribute before opset {}, not as an input",
               axes_input_opset(ctx.node().op));
    }
    axes = ctx.get_ints("axes", {});
  }
  if (axes.empty()) {
    if (ctx.get_int("noop_with_empty_axes", 0) != 0) return std::nullopt;
    return std::vector<bool>(static_cast<size_t>(rank), true);
  }
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t axis : axes) {
    int64_t normalized = ctx.normalize_axis(axis, rank);
    if (reduced[normalized]) ctx.fail("axis {} is listed twice", axis);
    reduced[normalized] = true;
  }
  return reduced;
}

// The input shape with reduced axes set to 1 (keepdims = 1) or removed (keepdims = 0).
Shape reduced_shape(const Shape& input, const std::vector<bool>& reduced, bool keepdims) {
  Shape output;
  for (size_t axis = 0; axis < input.size(); ++axis) {
    if (!reduced[axis]) {
      output.push_back(input[axis]);
    } else if (keepdims) {
      output.push_back(1);
    }
  }
  return output;
}

std::vector<TensorType> reduce_shape(const ShapeContext& ctx) {
  const TensorType& input = ctx.input_type(0);
  check_reduce_type(ctx, input.dtype);
  const Tensor* axes = ctx.has_input(1) ? &ctx.input_value(1) : nullptr;
  std::optional<std::vector<bool>> reduced = reduced_axes(ctx, input.rank(), axes);
  if (!reduced) return {input};
  return {{input.dtype, reduced_shape(input.shape, *reduced, ctx.get_int("keepdims", 1) != 0)}};
}

// --- the walker -----------------------------------------------------------------------------

template <typename T>
void reduce(const KernelContext& ctx, const Tensor& input, const std::vector<bool>& reduced,
            Tensor& out) {
  using A = reduce_acc_t<T>;  // float16 and bfloat16 convert to and from A through float
  Reduction<A> reduction = reduction_for<T, A>(ctx);
  // Input index -> output element: the output's row-major strides (with kept dims), and
  // stride 0 along reduced axes, so every element of a reduced group lands on one
  // accumulator.
  const Shape& shape = input.shape();
  Shape strides = row_major_strides(reduced_shape(shape, reduced, true));
  int64_t count = 1;
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    if (reduced[axis]) {
      strides[axis] = 0;
      count *= shape[axis];
    }
  }
  std::vector<A> acc(static_cast<size_t>(out.num_elements()), reduction.init);
  auto in = input.values<T>();
  int64_t flat = 0;
  for_each_index(shape, [&](const Shape& index) {
    A& a = acc[offset_of(index, strides)];
    a = reduction.combine(a, static_cast<A>(static_cast<compute_t<T>>(in[flat++])));
  });
  auto vo = out.values<T>();
  for (size_t i = 0; i < acc.size(); ++i) {
    vo[i] = static_cast<T>(static_cast<compute_t<T>>(reduction.finish(acc[i], count)));
  }
}

std::vector<Tensor> reduce_kernel(const KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  const Tensor* axes = ctx.has_input(1) ? &ctx.input(1) : nullptr;
  std::optional<std::vector<bool>> reduced = reduced_axes(ctx, input.rank(), axes);
  if (!reduced) return {input};
  Tensor out = ctx.make_output(0);
  visit_dtype(input.dtype(), [&]<typename T>() { reduce<T>(ctx, input, *reduced, out); });
  return {std::move(out)};
}

// --- ArgMax, ArgMin -------------------------------------------------------------------------

std::vector<TensorType> arg_shape(const ShapeContext& ctx) {
  const TensorType& input = ctx.input_type(0);
  if (input.dtype == DType::boolean) ctx.fail("element type bool is not supported");
  int64_t axis = ctx.normalize_axis(ctx.get_int("axis", 0), input.rank());
  if (input.shape[axis] == 0) ctx.fail("axis {} has size 0: there is no element to pick", axis);
  std::vector<bool> reduced(static_cast<size_t>(input.rank()), false);
  reduced[axis] = true;
  return {{DType::i64, reduced_shape(input.shape, reduced, ctx.get_int("keepdims", 1) != 0)}};
}

// The index of the largest (ArgMax) or smallest (ArgMin) element along `axis`; of equal
// ones the first, or the last with select_last_index = 1.
std::vector<Tensor> arg_kernel(const KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  const Shape& shape = input.shape();
  int64_t axis = ctx.normalize_axis(ctx.get_int("axis", 0), input.rank());
  bool is_max = ctx.node().op == "ArgMax";
  bool last = ctx.get_int("select_last_index", 0) != 0;
  // The input as [outer, n, inner] with n the size of `axis`.
  int64_t outer = 1, inner = 1, n = shape[axis];
  for (int64_t i = 0; i < axis; ++i) outer *= shape[i];
  for (int64_t i = axis + 1; i < input.rank(); ++i) inner *= shape[i];
  Tensor out = ctx.make_output(0);
  auto vo = out.values<int64_t>();
  visit_dtype(input.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    auto in = input.values<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        auto at = [&](int64_t j) { return static_cast<C>(in[(o * n + j) * inner + i]); };
        int64_t best = 0;
        for (int64_t j = 1; j < n; ++j) {
          bool better = is_max ? at(j) > at(best) : at(j) < at(best);
          if (better || (last && at(j) == at(best))) best = j;
        }
        vo[o * inner + i] = best;
      }
    }
  });
  return {std::move(out)};
}

// --- compute rules ------------------------------------------------------------------------------

std::vector<ComputeTensor> reduce_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const std::string& op = ctx.node().op;
  const Tensor* axes = ctx.has_input(1) ? &ctx.constant_input(1) : nullptr;
  std::optional<std::vector<bool>> reduced = reduced_axes(ctx, x.rank(), axes);
  if (!reduced) return {x};
  const bool keepdims = ctx.get_int("keepdims", 1) != 0;
  const TensorType& type = ctx.output_type(0);
  const DType acc = accumulation_dtype(type.dtype);
  Shape extents;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if ((*reduced)[d]) extents.push_back(x.dim(d));
  }
  // The element each reduction step takes, and the reducer.
  Reducer reducer = Reducer::sum;
  if (op == "ReduceMax") reducer = Reducer::max;
  if (op == "ReduceMin") reducer = Reducer::min;
  if (op == "ReduceProd") reducer = Reducer::product;
  auto transform = [&](loop::Expr value) {
    if (op == "ReduceL1") {
      return select(loop::LT::make(value, constant(acc, 0)), constant(acc, 0) - value, value);
    }
    if (op == "ReduceL2" || op == "ReduceSumSquare") return value * value;
    if (op == "ReduceLogSumExp") return call("exp", {value});
    return value;
  };
  ComputeTensor total = ctx.reduce(stage_name(ctx), {acc, type.shape}, extents, reducer,
                                   [&](const Indices& i, const Indices& r) {
    // Input axis d: the next reduction index where reduced, else the next output index
    // (output axes of kept, reduced dimensions are skipped).
    Indices at;
    size_t next_out = 0;
    size_t next_reduce = 0;
    for (int64_t d = 0; d < x.rank(); ++d) {
      if ((*reduced)[d]) {
        at.push_back(r[next_reduce++]);
        if (keepdims) ++next_out;
      } else {
        at.push_back(i[next_out++]);
      }
    }
    return transform(cast(acc, x(at)));
  });
  const bool mean = op == "ReduceMean";
  const bool root = op == "ReduceL2";
  const bool log = op == "ReduceLogSum" || op == "ReduceLogSumExp";
  if (!mean && !root && !log && acc == type.dtype) return {total};
  const int64_t count = num_elements(extents);
  return {ctx.compute(stage_name(ctx) + "_result", type, [&](const Indices& i) {
    loop::Expr value = total(i);
    if (mean && (is_float(acc) || count > 0)) {
      value = loop::Div::make(value, constant(acc, static_cast<double>(count)));
    }
    if (root) value = call("sqrt", {value});
    if (log) value = call("log", {value});
    return cast(type.dtype, value);
  })};
}

std::vector<ComputeTensor> arg_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const int64_t axis = ctx.normalize_axis(ctx.get_int("axis", 0), x.rank());
  const bool keepdims = ctx.get_int("keepdims", 1) != 0;
  const bool last = ctx.get_int("select_last_index", 0) != 0;
  const int64_t n = x.dim(axis);
  const TensorType& type = ctx.output_type(0);
  // x at output index i, with `axis` indexed by r.
  auto element = [&](const Indices& i, const loop::Expr& r) {
    Indices at = i;
    if (keepdims) {
      at[axis] = r;
    } else {
      at.insert(at.begin() + axis, r);
    }
    return x(at);
  };
  const bool is_max = ctx.node().op == "ArgMax";
  ComputeTensor best =
      ctx.reduce(stage_name(ctx) + "_value", {x.dtype(), type.shape}, {n},
                 is_max ? Reducer::max : Reducer::min,
                 [&](const Indices& i, const Indices& r) { return element(i, r[0]); });
  // The first index holding the best value (min over matches; n where none), or the last.
  return {ctx.reduce(stage_name(ctx), type, {n}, last ? Reducer::max : Reducer::min,
                     [&](const Indices& i, const Indices& r) {
                       loop::Expr match = loop::EQ::make(element(i, r[0]), best(i));
                       return select(match, r[0], index(last ? -1 : n));
                     })};
}

}  // namespace

void register_reduce_ops(OpRegistry& registry) {
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                         "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                         "ReduceSumSquare"}) {
    registry.add({.name = op,
                  .min_opset = 1,
                  .max_inputs = 2,
                  .fusion = FusionKind::reduction,
                  .shape_rule = reduce_shape,
                  .kernel = reduce_kernel,
                  .compute = reduce_compute});
  }
  for (const char* op : {"ArgMax", "ArgMin"}) {
    registry.add({.name = op,
                  .min_opset = 1,
                  .fusion = FusionKind::reduction,
                  .shape_rule = arg_shape,
                  .kernel = arg_kernel,
                  .compute = arg_compute});
  }
}

}  // namespace minic
