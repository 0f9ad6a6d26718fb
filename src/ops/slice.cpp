// Slice: takes every step-th element between start and end along some axes.
// Course module 2.
//
// Before opset 10, starts, ends and axes are attributes and every step is 1; from 10 on
// they are inputs (starts, ends, optional axes, optional steps), and because they decide
// the output shape their values must be known before running. Along each sliced axis of
// size n, following the ONNX specification:
//   1. a negative start or end counts from the end: it has n added;
//   2. with step > 0, start and end are clamped into [0, n]; with step < 0, start into
//      [0, n-1] and end into [-1, n-1] (so INT_MAX and INT_MIN mean "to the far end");
//   3. the output has max(0, ceil((end - start) / step)) elements along the axis:
//      start, start + step, ... while before end.
// (ONNX Runtime goes further and reads an end of INT_MAX with a negative step as "to the
// front"; the specification does not, and neither does minic: backwards, use INT_MIN.)
// The kernel is a strided view (movement.h): it starts at the offset of the start
// indices, and output dimension d moves through the input by step[d] times its stride.
// Fusion kind: injective. Compute rule (course module 3): the same view, output index
// i[d] reading input index starts[d] + i[d] * steps[d].
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/compute.h"
#include "minic/ops/op.h"
#include "movement.h"

#include <algorithm>
#include <optional>

namespace minic {

namespace {

struct SliceArgs {
  std::vector<int64_t> starts;
  std::vector<int64_t> ends;
  std::optional<std::vector<int64_t>> axes;   // default: 0, 1, ..., len(starts) - 1
  std::optional<std::vector<int64_t>> steps;  // default: all 1
};

// The slice arguments of this node; value_of(i) gives the value of input i (opset >= 10).
template <typename ValueOf>
SliceArgs read_args(const NodeContext& ctx, ValueOf value_of) {
  SliceArgs args;
  if (ctx.opset() < 10) {
    args.starts = ctx.get_ints("starts");
    args.ends = ctx.get_ints("ends");
    if (ctx.has_attr("axes")) args.axes = ctx.get_ints("axes");
    return args;
  }
  args.starts = int_list(ctx, value_of(1), "starts");
  args.ends = int_list(ctx, value_of(2), "ends");
  if (ctx.has_input(3)) args.axes = int_list(ctx, value_of(3), "axes");
  if (ctx.has_input(4)) args.steps = int_list(ctx, value_of(4), "steps");
  return args;
}

// Where the slice begins and how it walks, per input dimension.
struct SlicePlan {
  Shape starts;  // the first index taken along each dimension
  Shape steps;   // 1 along dimensions that are not sliced
  Shape shape;   // the output shape
};

SlicePlan plan_slice(const NodeContext& ctx, const Shape& input, const SliceArgs& args) {
  const int64_t rank = static_cast<int64_t>(input.size());
  const size_t count = args.starts.size();
  std::vector<int64_t> axes(count);
  for (size_t i = 0; i < count; ++i) axes[i] = static_cast<int64_t>(i);
  if (args.axes) axes = *args.axes;
  const std::vector<int64_t> steps = args.steps.value_or(std::vector<int64_t>(count, 1));
  if (args.ends.size() != count || axes.size() != count || steps.size() != count) {
    ctx.fail("starts, ends, axes and steps have {}, {}, {} and {} entries; they must agree",
             count, args.ends.size(), axes.size(), steps.size());
  }
  axes = normalize_axes(ctx, axes, rank);

  SlicePlan plan{Shape(rank, 0), Shape(rank, 1), input};
  for (size_t i = 0; i < count; ++i) {
    const int64_t axis = axes[i];
    const int64_t n = input[axis];
    const int64_t step = steps[i];
    if (step == 0) ctx.fail("the step along axis {} is 0", axis);
    int64_t start = args.starts[i];
    int64_t end = args.ends[i];
    if (start < 0) start += n;
    if (end < 0) end += n;
    int64_t size = 0;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, n);
      end = std::clamp<int64_t>(end, 0, n);
      if (end > start) size = (end - start - 1) / step + 1;
    } else if (n > 0) {
      start = std::clamp<int64_t>(start, 0, n - 1);
      end = std::clamp<int64_t>(end, -1, n - 1);
      // end < start here; both differences are negative, so the division rounds down.
      if (end < start) size = (end - start + 1) / step + 1;
    }
    // With at most one element the step is never taken; 1 keeps the strides small.
    plan.starts[axis] = size > 0 ? start : 0;
    plan.steps[axis] = size > 1 ? step : 1;
    plan.shape[axis] = size;
  }
  return plan;
}

std::vector<TensorType> slice_shape(const ShapeContext& ctx) {
  const TensorType& input = ctx.input_type(0);
  SliceArgs args = read_args(ctx, [&](size_t i) -> const Tensor& { return ctx.input_value(i); });
  return {{input.dtype, plan_slice(ctx, input.shape, args).shape}};
}

std::vector<Tensor> slice_kernel(const KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  SliceArgs args = read_args(ctx, [&](size_t i) -> const Tensor& { return ctx.input(i); });
  const SlicePlan plan = plan_slice(ctx, input.shape(), args);
  const Shape input_strides = row_major_strides(input.shape());
  Shape strides;
  for (int64_t d = 0; d < input.rank(); ++d) strides.push_back(plan.steps[d] * input_strides[d]);
  Tensor output = ctx.make_output(0);
  copy_strided(input, offset_of(plan.starts, input_strides), strides, output);
  return single_output(std::move(output));
}

std::vector<ComputeTensor> slice_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  SliceArgs args =
      read_args(ctx, [&](size_t i) -> const Tensor& { return ctx.constant_input(i); });
  const SlicePlan plan = plan_slice(ctx, x.shape(), args);
  return {ctx.compute("slice", ctx.output_type(0), [&](const Indices& i) {
    Indices source;
    for (size_t d = 0; d < i.size(); ++d) {
      source.push_back(affine(i[d], plan.steps[d], plan.starts[d]));
    }
    return x(source);
  })};
}

}  // namespace

void register_slice_ops(OpRegistry& registry) {
  registry.add({.name = "Slice",
                .min_opset = 1,
                .max_inputs = 5,
                .fusion = FusionKind::injective,
                .shape_rule = slice_shape,
                .kernel = slice_kernel,
                .compute = slice_compute});
}

}  // namespace minic
