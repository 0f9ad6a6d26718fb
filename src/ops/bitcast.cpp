// BitCast: the same bits, read as another element type. Course module 2.
//
//   out[i] = the element of type `to` whose bits are those of in[i]
// `to` is an ONNX TensorProto.DataType number; its type must have as many bits as the
// input's (float32 <-> int32, uint8 <-> int8, int4 <-> float4e2m1, ...). Unlike Cast, no
// value is converted: 1.0f becomes the integer 1065353216. minic stores every element in
// little-endian order, and a storage-only element (float8, float4, int4, int2) as one byte
// with its bits in the low bits, so the kernel copies the bytes whatever the types. A bool
// holds only 0 or 1: reading any other byte as a bool is an error, not an undefined value.
//
// Fusion kind: elementwise (each output element is the input element at the same
// position). BitCast has no compute rule: loop IR has no expression that reinterprets bits.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/op.h"
#include "minic/ops/onnx_data_type.h"

#include <algorithm>
#include <cstring>

namespace minic {

namespace {

// How many bits an element of `type` holds (not how many bytes minic stores it in).
int bit_width(DType type) {
  switch (type) {
    case DType::f4e2m1:
    case DType::i4:
    case DType::u4: return 4;
    case DType::i2:
    case DType::u2: return 2;
    default: return 8 * dtype_size(type);
  }
}

std::vector<TensorType> bitcast_shape(const ShapeContext& ctx) {
  const TensorType& input = ctx.input_type(0);
  const int64_t to = ctx.get_int("to");
  std::optional<DType> output = dtype_of_onnx_code(to);
  if (!output) {
    ctx.fail("to is {}, a data type minic does not have (it has no string or complex "
             "tensors)", to);
  }
  if (bit_width(*output) != bit_width(input.dtype)) {
    ctx.fail("cannot reinterpret {} ({} bits) as {} ({} bits); BitCast needs types of the "
             "same bit width", dtype_name(input.dtype), bit_width(input.dtype),
             dtype_name(*output), bit_width(*output));
  }
  return {{*output, input.shape}};
}

std::vector<Tensor> bitcast_kernel(const KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  Tensor output = ctx.make_output(0);
  std::span<const std::byte> from = input.bytes();
  if (output.dtype() == DType::boolean) {
    auto not_bool = [](std::byte b) { return b != std::byte{0} && b != std::byte{1}; };
    auto bad = std::find_if(from.begin(), from.end(), not_bool);
    if (bad != from.end()) {
      ctx.fail("element {} is the byte {}, which is not a bool (0 or 1)",
               bad - from.begin(), std::to_integer<int>(*bad));
    }
  }
  MINIC_CHECK(from.size() == output.bytes().size());
  if (!from.empty()) std::memcpy(output.bytes().data(), from.data(), from.size());
  return single_output(std::move(output));
}

}  // namespace

void register_bitcast_ops(OpRegistry& registry) {
  registry.add({.name = "BitCast",
                .min_opset = 26,
                .fusion = FusionKind::elementwise,
                .shape_rule = bitcast_shape,
                .kernel = bitcast_kernel});
}

}  // namespace minic
