// Where(condition, x, y): out[i] = condition[i] ? x[i] : y[i], all three broadcast together
// like numpy.where. Course module 2.
//
// The output has the broadcast shape of the three inputs and x's element type; x and y must
// share it, and the condition is bool. Fusion kind `broadcast`.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "broadcast.h"
#include "elementwise.h"

#include "minic/ops/compute.h"

namespace minic {

namespace {

std::vector<TensorType> where_shape(const ShapeContext& ctx) {
  if (ctx.input_type(0).dtype != DType::boolean) {
    ctx.fail("the condition (input 0) is {}; Where needs a bool tensor",
             dtype_name(ctx.input_type(0).dtype));
  }
  require_same_dtype(ctx, 1, 2);
  Shape shape = broadcast_shapes(
      ctx, {ctx.input_type(0).shape, ctx.input_type(1).shape, ctx.input_type(2).shape});
  return {{ctx.input_type(1).dtype, shape}};
}

std::vector<Tensor> where_kernel(const KernelContext& ctx) {
  const Tensor& condition = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  Tensor out = ctx.make_output(0);
  const Shape& shape = out.shape();
  Shape condition_strides = broadcast_strides(condition.shape(), shape);
  Shape x_strides = broadcast_strides(x.shape(), shape);
  Shape y_strides = broadcast_strides(y.shape(), shape);
  visit_dtype(out.dtype(), [&]<typename T>() {
    auto take = condition.values<bool>();
    auto from_x = x.values<T>();
    auto from_y = y.values<T>();
    auto result = out.values<T>();
    int64_t flat = 0;
    for_each_index(shape, [&](const Shape& index) {
      bool pick_x = take[offset_of(index, condition_strides)];
      result[flat++] = pick_x ? from_x[offset_of(index, x_strides)]
                              : from_y[offset_of(index, y_strides)];
    });
  });
  return single_output(std::move(out));
}

// Compute rule (course module 3): a select of the broadcast inputs.
std::vector<ComputeTensor> where_compute(const ComputeContext& ctx) {
  const ComputeTensor& condition = ctx.input(0);
  const ComputeTensor& x = ctx.input(1);
  const ComputeTensor& y = ctx.input(2);
  const Shape& shape = ctx.output_type(0).shape;
  return {ctx.compute("where", ctx.output_type(0), [&](const Indices& i) {
    return select(condition(broadcast_indices(i, condition.shape(), shape)),
                  x(broadcast_indices(i, x.shape(), shape)),
                  y(broadcast_indices(i, y.shape(), shape)));
  })};
}

}  // namespace

void register_select_ops(OpRegistry& registry) {
  registry.add({.name = "Where",
                .min_opset = 9,
                .min_inputs = 3,
                .max_inputs = 3,
                .fusion = FusionKind::broadcast,
                .shape_rule = where_shape,
                .kernel = where_kernel,
                .compute = where_compute});
}

}  // namespace minic
