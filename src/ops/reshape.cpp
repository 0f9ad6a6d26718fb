// Reshape, Flatten, Squeeze, Unsqueeze: ops that change a tensor's shape, not its data.
// Course module 2.
//
// A row-major tensor's bytes do not depend on how its dimensions are grouped, so each
// kernel is a copy with a new shape (Tensor::reshaped) and all the work is in the shape
// rules. Their fusion kind is injective: output element i is input element i.
//
// Reshape's target comes from its second input (opset >= 5; an attribute before), which
// must be known before running. In the target, 0 copies the input's dimension at the same
// position (unless allowzero=1, when 0 means an empty dimension) and one -1 is inferred
// from the element count.
//
// Compute rule (course module 3), one for all four: output element i reads the input
// element with the same row-major offset (reshape_indices in compute.h).
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/compute.h"
#include "minic/ops/op.h"
#include "movement.h"

#include <algorithm>

namespace minic {

namespace {

std::vector<Tensor> reshape_kernel(const KernelContext& ctx) {
  return {ctx.input(0).reshaped(ctx.output_type(0).shape)};
}

// --- Reshape ----------------------------------------------------------------------------------

std::vector<TensorType> reshape_shape(const ShapeContext& ctx) {
  const TensorType& input = ctx.input_type(0);
  std::vector<int64_t> target = ctx.opset() < 5
                                    ? ctx.get_ints("shape")
                                    : int_list(ctx, ctx.input_value(1), "the target shape");
  const bool allow_zero = ctx.get_int("allowzero", 0) != 0;

  Shape shape;
  int64_t inferred_axis = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t dim = target[i];
    if (dim == 0 && !allow_zero) {
      if (static_cast<int64_t>(i) >= input.rank()) {
        ctx.fail("target shape {} copies dimension {} (a 0) but the input {} has rank {}",
                 shape_string(target), i, type_string(input), input.rank());
      }
      dim = input.shape[i];
    } else if (dim == -1) {
      if (inferred_axis >= 0) {
        ctx.fail("target shape {} has more than one -1", shape_string(target));
      }
      inferred_axis = static_cast<int64_t>(i);
      dim = 1;
    } else if (dim < 0) {
      ctx.fail("target shape {} has the negative dimension {}", shape_string(target), dim);
    }
    shape.push_back(dim);
  }
  // Rejects absurd targets before their element count can overflow.
  check_shape(shape, input.dtype, fmt::format("{}: target shape", ctx.node().describe()));
  const int64_t known_elements = num_elements(shape);  // the -1 counted as 1

  const int64_t elements = input.num_elements();
  if (inferred_axis >= 0) {
    if (known_elements == 0 || elements % known_elements != 0) {
      ctx.fail("cannot reshape {} ({} elements) to {}: the -1 cannot be inferred",
               type_string(input), elements, shape_string(target));
    }
    shape[inferred_axis] = elements / known_elements;
  }
  if (num_elements(shape) != elements) {
    ctx.fail("cannot reshape {} ({} elements) to {} ({} elements)", type_string(input), elements,
             shape_string(shape), num_elements(shape));
  }
  return {{input.dtype, shape}};
}

// --- Flatten ----------------------------------------------------------------------------------

// Flatten(axis) gives a matrix: the dimensions before `axis` become the rows, the rest the
// columns. Axis may be anything in [-rank, rank].
std::vector<TensorType> flatten_shape(const ShapeContext& ctx) {
  const TensorType& input = ctx.input_type(0);
  int64_t axis = ctx.get_int("axis", 1);
  if (axis < -input.rank() || axis > input.rank()) {
    ctx.fail("axis {} is out of range for rank {}", axis, input.rank());
  }
  if (axis < 0) axis += input.rank();
  int64_t rows = 1;
  int64_t columns = 1;
  for (int64_t d = 0; d < input.rank(); ++d) (d < axis ? rows : columns) *= input.shape[d];
  return {{input.dtype, {rows, columns}}};
}

// --- Squeeze and Unsqueeze --------------------------------------------------------------------

// The axes of Squeeze or Unsqueeze: an attribute before opset 13, an input from 13 on.
// Null when none are given.
std::optional<std::vector<int64_t>> axes_of(const ShapeContext& ctx) {
  if (ctx.opset() < 13) {
    if (!ctx.has_attr("axes")) return std::nullopt;
    return ctx.get_ints("axes");
  }
  if (!ctx.has_input(1)) return std::nullopt;
  return int_list(ctx, ctx.input_value(1), "axes");
}

// Squeeze removes the given dimensions of size 1, or every dimension of size 1 if no axes
// are given.
std::vector<TensorType> squeeze_shape(const ShapeContext& ctx) {
  const TensorType& input = ctx.input_type(0);
  std::vector<bool> remove(static_cast<size_t>(input.rank()), false);
  if (std::optional<std::vector<int64_t>> axes = axes_of(ctx)) {
    for (int64_t axis : normalize_axes(ctx, *axes, input.rank())) {
      if (input.shape[axis] != 1) {
        ctx.fail("cannot squeeze axis {} of {}: its size is {}, not 1", axis, type_string(input),
                 input.shape[axis]);
      }
      remove[axis] = true;
    }
  } else {
    for (int64_t d = 0; d < input.rank(); ++d) remove[d] = input.shape[d] == 1;
  }
  Shape shape;
  for (int64_t d = 0; d < input.rank(); ++d) {
    if (!remove[d]) shape.push_back(input.shape[d]);
  }
  return {{input.dtype, shape}};
}

// Unsqueeze inserts dimensions of size 1; its axes index the output, whose rank is the
// input's plus the number of axes.
std::vector<TensorType> unsqueeze_shape(const ShapeContext& ctx) {
  const TensorType& input = ctx.input_type(0);
  std::optional<std::vector<int64_t>> axes = axes_of(ctx);
  if (!axes) ctx.fail("missing the axes to insert");
  const int64_t rank = input.rank() + static_cast<int64_t>(axes->size());
  std::vector<bool> inserted(static_cast<size_t>(rank), false);
  for (int64_t axis : normalize_axes(ctx, *axes, rank)) inserted[axis] = true;
  Shape shape;
  auto next_input_dim = input.shape.begin();
  for (int64_t d = 0; d < rank; ++d) shape.push_back(inserted[d] ? 1 : *next_input_dim++);
  return {{input.dtype, shape}};
}

std::vector<ComputeTensor> reshape_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const TensorType& type = ctx.output_type(0);
  return {ctx.compute(stage_name(ctx), type, [&](const Indices& i) {
    return x(reshape_indices(i, type.shape, x.shape()));
  })};
}

}  // namespace

void register_reshape_ops(OpRegistry& registry) {
  registry.add({.name = "Reshape",
                .min_opset = 1,
                .max_inputs = 2,
                .fusion = FusionKind::injective,
                .shape_rule = reshape_shape,
                .kernel = reshape_kernel,
                .compute = reshape_compute});
  registry.add({.name = "Flatten",
                .min_opset = 1,
                .fusion = FusionKind::injective,
                .shape_rule = flatten_shape,
                .kernel = reshape_kernel,
                .compute = reshape_compute});
  registry.add({.name = "Squeeze",
                .min_opset = 1,
                .max_inputs = 2,
                .fusion = FusionKind::injective,
                .shape_rule = squeeze_shape,
                .kernel = reshape_kernel,
                .compute = reshape_compute});
  registry.add({.name = "Unsqueeze",
                .min_opset = 1,
                .max_inputs = 2,
                .fusion = FusionKind::injective,
                .shape_rule = unsqueeze_shape,
                .kernel = reshape_kernel,
                .compute = reshape_compute});
}

}  // namespace minic
