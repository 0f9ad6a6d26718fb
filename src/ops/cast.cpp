// Cast and CastLike: convert every element to another element type. Course module 2.
//
// Cast's attribute `to` is an ONNX TensorProto.DataType number; CastLike takes the type of its
// second input. The conversion is Tensor::cast: floats narrow to float16 and bfloat16 by
// rounding to nearest even; floats to integers truncate toward zero, saturating at the
// integer's range (ONNX leaves out-of-range values undefined), NaN giving 0; anything to bool
// is value != 0. The storage-only types (float8, float4, int4, int2) convert as
// low_precision.h describes, with the attributes `saturate` (opset 19, default 1: float8
// overflow becomes +-max) and `round_mode` (opset 24, default "up": how a value rounds to
// float8e8m0). minic has no string or complex tensors, so a Cast to those fails, naming the
// type.
//
// Compute rule (course module 3): one Cast expression, which converts as Tensor::cast does;
// the storage-only types have none (no loop IR expression computes in them).
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/compute.h"
#include "minic/ops/op.h"
#include "minic/ops/onnx_data_type.h"

#include <optional>

namespace minic {

namespace {

// ONNX's name for a data type number, for messages.
std::string onnx_type_name(int64_t onnx_type) {
  static const char* const kNames[] = {
      "UNDEFINED",    "FLOAT",          "UINT8",      "INT8",           "UINT16", "INT16",
      "INT32",        "INT64",          "STRING",     "BOOL",           "FLOAT16", "DOUBLE",
      "UINT32",       "UINT64",         "COMPLEX64",  "COMPLEX128",     "BFLOAT16",
      "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",  "INT4",
      "FLOAT4E2M1",   "FLOAT8E8M0",     "UINT2",      "INT2"};
  if (onnx_type >= 0 && onnx_type < static_cast<int64_t>(std::size(kNames))) {
    return kNames[onnx_type];
  }
  return fmt::format("data type {}", onnx_type);
}

// The attributes that steer conversions to the storage-only types.
CastOptions cast_options(const NodeContext& ctx) {
  CastOptions options;
  options.saturate = ctx.get_int("saturate", 1) != 0;
  std::string round_mode = ctx.get_string("round_mode", "up");
  std::optional<RoundMode> mode = round_mode_from_name(round_mode);
  if (!mode) ctx.fail("round_mode is '{}'; it must be 'up', 'down' or 'nearest'", round_mode);
  options.round_mode = *mode;
  return options;
}

std::vector<TensorType> cast_shape(const ShapeContext& ctx) {
  cast_options(ctx);  // checks the attributes
  int64_t to = ctx.get_int("to");
  std::optional<DType> dtype = dtype_of_onnx_code(to);
  if (!dtype) {
    ctx.fail("casts to {}, which minic does not support (it has no such tensors)",
             onnx_type_name(to));
  }
  return {{*dtype, ctx.input_type(0).shape}};
}

std::vector<TensorType> cast_like_shape(const ShapeContext& ctx) {
  cast_options(ctx);
  return {{ctx.input_type(1).dtype, ctx.input_type(0).shape}};
}

std::vector<Tensor> cast_kernel(const KernelContext& ctx) {
  return {ctx.input(0).cast(ctx.output_type(0).dtype, cast_options(ctx))};
}

std::vector<ComputeTensor> cast_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const TensorType& type = ctx.output_type(0);
  if (is_storage_only(x.dtype()) || is_storage_only(type.dtype)) {
    ctx.no_rule(fmt::format("a cast from {} to {}: loop IR does not compute in storage-only "
                            "types", dtype_name(x.dtype()), dtype_name(type.dtype)));
  }
  return {ctx.compute("cast", type, [&](const Indices& i) { return cast(type.dtype, x(i)); })};
}

}  // namespace

void register_cast_ops(OpRegistry& registry) {
  // Opsets 1 to 5 name the target type with a string; from opset 6 it is a number.
  registry.add({.name = "Cast",
                .min_opset = 6,
                .fusion = FusionKind::elementwise,
                .shape_rule = cast_shape,
                .kernel = cast_kernel,
                .compute = cast_compute});
  registry.add({.name = "CastLike",
                .min_opset = 15,
                .min_inputs = 2,
                .max_inputs = 2,
                .fusion = FusionKind::elementwise,
                .shape_rule = cast_like_shape,
                .kernel = cast_kernel,
                .compute = cast_compute});
}

}  // namespace minic
