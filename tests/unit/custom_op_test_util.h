// The custom op the custom op tests register under names of their own: Softsign,
// y = x / (1 + |x|) on f32, with a shape rule, a reference kernel and a compute rule.
// Course module 8.
#pragma once

#include "minic/ops/compute.h"
#include "minic/ops/custom_op.h"

#include <cmath>
#include <string>
#include <vector>

namespace minic::testing {

inline OpSchema softsign_schema(const std::string& name) {
  OpSchema schema;
  schema.name = name;
  schema.fusion = FusionKind::elementwise;
  schema.shape_rule = [](const ShapeContext& ctx) {
    if (ctx.input_type(0).dtype != DType::f32) ctx.fail("x must be f32");
    return std::vector<TensorType>{ctx.input_type(0)};
  };
  schema.kernel = [](const KernelContext& ctx) {
    Tensor y = ctx.make_output(0);
    std::span<const float> x = ctx.input(0).values<float>();
    for (size_t i = 0; i < x.size(); ++i) y.values<float>()[i] = x[i] / (1 + std::fabs(x[i]));
    return single_output(std::move(y));
  };
  schema.compute = [](const ComputeContext& ctx) {
    return std::vector<ComputeTensor>{
        ctx.compute("softsign", ctx.output_type(0), [&](const Indices& i) {
          loop::Expr x = ctx.input(0)(i);
          return loop::Div::make(x, constant(DType::f32, 1) + call("fabs", {x}));
        })};
  };
  return schema;
}

}  // namespace minic::testing
