// Exercise m8-custom-op, solved: com.example.QuickGelu with a compute rule, elementwise, so
// that it fuses into the kernel before it. Course module 8.
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

std::vector<ComputeTensor> quick_gelu_compute(const ComputeContext& ctx) {
  const float alpha = ctx.get_float("alpha", kDefaultAlpha);
  const ComputeTensor& x = ctx.input(0);
  return {ctx.compute("quick_gelu", ctx.output_type(0), [&](const Indices& i) {
    return x(i) * call("sigmoid", {constant(DType::f32, alpha) * x(i)});
  })};
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
  // An elementwise op with a compute rule: fused with its neighbours, and compiled.
  schema.fusion = FusionKind::elementwise;
  schema.compute = quick_gelu_compute;
  return schema;
}

}  // namespace

MINIC_REGISTER_CUSTOM_OP(quick_gelu_schema);

}  // namespace minic
