// Identity and Dropout: ops that pass their input through. Course module 2.
//
// Dropout at inference is the identity: ONNX's Dropout only drops elements when its
// `training_mode` input is true, and then randomly, which a compiler for inference does not
// reproduce; minic accepts training_mode only when it is a known false (or when ratio is 0,
// where nothing is dropped). Its optional second output, the mask, is all true.
//
// Compute rules (course module 3): the input itself, so that consumers read it directly
// (a kernel whose output it is copies it).
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/compute.h"
#include "minic/ops/op.h"

namespace minic {

namespace {

std::vector<TensorType> identity_shape(const ShapeContext& ctx) { return {ctx.input_type(0)}; }

std::vector<Tensor> identity_kernel(const KernelContext& ctx) { return {ctx.input(0)}; }

// True if this Dropout drops nothing: not training, or training with a ratio of 0.
bool dropout_is_identity(const ShapeContext& ctx) {
  if (ctx.opset() < 12) return ctx.get_int("is_test", 1) != 0 || ctx.get_float("ratio", 0.5f) == 0;
  if (!ctx.has_input(2)) return true;
  const Tensor& training = ctx.input_value(2);
  if (training.as_int64(0) == 0) return true;
  return ctx.has_input(1) && ctx.input_value(1).as_double(0) == 0.0;
}

std::vector<TensorType> dropout_shape(const ShapeContext& ctx) {
  if (!dropout_is_identity(ctx)) {
    ctx.fail("training-mode Dropout drops elements at random; minic compiles for inference");
  }
  std::vector<TensorType> types = {ctx.input_type(0)};
  if (ctx.num_outputs() > 1) types.push_back({DType::boolean, ctx.input_type(0).shape});
  return types;
}

std::vector<Tensor> dropout_kernel(const KernelContext& ctx) {
  std::vector<Tensor> outputs = {ctx.input(0)};
  if (ctx.num_outputs() > 1) {
    Tensor mask = ctx.make_output(1);
    for (bool& keep : mask.values<bool>()) keep = true;
    outputs.push_back(std::move(mask));
  }
  return outputs;
}

std::vector<ComputeTensor> identity_compute(const ComputeContext& ctx) { return {ctx.input(0)}; }

std::vector<ComputeTensor> dropout_compute(const ComputeContext& ctx) {
  std::vector<ComputeTensor> outputs = {ctx.input(0)};
  if (ctx.num_outputs() > 1) {
    outputs.push_back(ctx.compute("mask", ctx.output_type(1), [](const Indices&) {
      return constant(DType::boolean, 1);
    }));
  }
  return outputs;
}

}  // namespace

void register_identity_ops(OpRegistry& registry) {
  registry.add({.name = "Identity",
                .min_opset = 1,
                .fusion = FusionKind::elementwise,
                .shape_rule = identity_shape,
                .kernel = identity_kernel,
                .compute = identity_compute});
  registry.add({.name = "Dropout",
                .min_opset = 7,
                .max_inputs = 3,
                .max_outputs = 2,
                .fusion = FusionKind::elementwise,
                .shape_rule = dropout_shape,
                .kernel = dropout_kernel,
                .compute = dropout_compute});
}

}  // namespace minic
