// Exercise m8-custom-op: a custom op that compiles. Course module 8.
//
// exercises/m8-custom-op/README.md gives the task; this file is where it is done. The op
// com.example.QuickGelu is registered already (the last line) with its shape rule and
// reference kernel, so minic imports and runs models that use it: as given, it has no
// compute rule, every QuickGelu node runs its reference kernel as a step of its own, and
// the exercise's tests fail.
//
//   Y = X * sigmoid(alpha * X)        alpha: a float attribute, 1.702 by default
//
// (ONNX Runtime's contrib op com.microsoft.QuickGelu computes the same.)
//
// Chapter: docs/module8-deployment.md#6-custom-operators
#include "minic/ops/compute.h"
#include "minic/ops/custom_op.h"

#include <cmath>

namespace minic {
namespace {

constexpr float kDefaultAlpha = 1.702f;

std::vector<TensorType> quick_gelu_shape(const ShapeContext& ctx) {
  if (ctx.input_type(0).dtype != DType::f32) {
    ctx.fail("X is {}, not f32", type_string(ctx.input_type(0)));
  }
  return {ctx.input_type(0)};
}

std::vector<Tensor> quick_gelu_kernel(const KernelContext& ctx) {
  const double alpha = ctx.get_float("alpha", kDefaultAlpha);
  std::span<const float> x = ctx.input(0).values<float>();
  Tensor y = ctx.make_output(0);
  for (size_t i = 0; i < x.size(); ++i) {
    y.values<float>()[i] = static_cast<float>(x[i] / (1.0 + std::exp(-alpha * x[i])));
  }
  return single_output(std::move(y));
}

OpSchema quick_gelu_schema() {
  OpSchema schema;
  schema.name = "com.example.QuickGelu";
  schema.shape_rule = quick_gelu_shape;
  schema.kernel = quick_gelu_kernel;
  // The compute rule and the fusion kind go here (include/minic/ops/custom_op.h says what
  // each gives the op).
  return schema;
}

}  // namespace

MINIC_REGISTER_CUSTOM_OP(quick_gelu_schema);

}  // namespace minic
