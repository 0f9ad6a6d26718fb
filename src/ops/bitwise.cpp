// Bitwise ops on integers: BitwiseAnd, BitwiseOr, BitwiseXor (with numpy broadcasting) and
// BitwiseNot. Course module 2.
//
// Each works on the bits of the two's-complement representation, bit by bit:
//   BitwiseAnd  out[i] = a[ia] & b[ib]       BitwiseOr   out[i] = a[ia] | b[ib]
//   BitwiseXor  out[i] = a[ia] ^ b[ib]       BitwiseNot  out[i] = ~x[i]
// over the broadcast shape of a and b (see broadcast.h), for the signed and unsigned
// integer types; both inputs of a binary op have the same type, which the output keeps.
// BitShift, the remaining bit op, is in binary.cpp.
//
// Fusion kind: opaque. Loop IR has no bitwise operators, so these ops have no compute rule
// and run on their reference kernels; an opaque op keeps its compiled neighbours out of
// a group that could not be lowered.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "broadcast.h"
#include "elementwise.h"

namespace minic {

namespace {

// Fails unless input `index` has an integer element type.
void require_int_input(const ShapeContext& ctx, size_t index) {
  DType dtype = ctx.input_type(index).dtype;
  if (!is_int(dtype)) {
    ctx.fail("input {} is {}; {} takes integer tensors", index, dtype_name(dtype),
             ctx.node().op);
  }
}

std::vector<TensorType> bitwise_binary_shape(const ShapeContext& ctx) {
  require_int_input(ctx, 0);
  require_same_dtype(ctx, 0, 1);
  const TensorType& a = ctx.input_type(0);
  return {{a.dtype, broadcast_shapes(ctx, {a.shape, ctx.input_type(1).shape})}};
}

std::vector<TensorType> bitwise_not_shape(const ShapeContext& ctx) {
  require_int_input(ctx, 0);
  return {ctx.input_type(0)};
}

// The kernel of a binary op: out = formula(a, b), the formula applied to the integer type.
template <typename Formula>
Kernel bitwise_binary_kernel(Formula formula) {
  return [formula](const KernelContext& ctx) {
    Tensor out = ctx.make_output(0);
    visit_numeric(out.dtype(), [&]<typename T>() {
      if constexpr (std::is_integral_v<T>) {
        broadcast_binary<T, T, T>(ctx.input(0), ctx.input(1), out,
                                  [&](T x, T y) { return static_cast<T>(formula(x, y)); });
      }
    });
    return single_output(std::move(out));
  };
}

std::vector<Tensor> bitwise_not_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor out = ctx.make_output(0);
  visit_numeric(x.dtype(), [&]<typename T>() {
    if constexpr (std::is_integral_v<T>) {
      auto in = x.values<T>();
      auto result = out.values<T>();
      for (size_t i = 0; i < in.size(); ++i) result[i] = static_cast<T>(~in[i]);
    }
  });
  return single_output(std::move(out));
}

}  // namespace

void register_bitwise_ops(OpRegistry& registry) {
  struct BinaryOp {
    const char* name;
    Kernel kernel;
  };
  const BinaryOp binary_ops[] = {
      {"BitwiseAnd", bitwise_binary_kernel([](auto x, auto y) { return x & y; })},
      {"BitwiseOr", bitwise_binary_kernel([](auto x, auto y) { return x | y; })},
      {"BitwiseXor", bitwise_binary_kernel([](auto x, auto y) { return x ^ y; })},
  };
  for (const BinaryOp& op : binary_ops) {
    registry.add({.name = op.name,
                  .min_opset = 18,
                  .min_inputs = 2,
                  .max_inputs = 2,
                  .shape_rule = bitwise_binary_shape,
                  .kernel = op.kernel});
  }
  registry.add({.name = "BitwiseNot",
                .min_opset = 18,
                .shape_rule = bitwise_not_shape,
                .kernel = bitwise_not_kernel});
}

}  // namespace minic
