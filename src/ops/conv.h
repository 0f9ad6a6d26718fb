// What Conv's reference kernel (conv.cpp) and its compute rules (conv_compute.cpp) share:
// the checks of X, W and B, and the attributes read once. Course modules 2 and 3.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#pragma once

#include "minic/ops/compute.h"
#include "minic/ops/op.h"
#include "float_compute.h"
#include "window.h"

namespace minic {

// Checks the types of X, W and B common to Conv and ConvTranspose; returns the spatial rank.
inline int64_t check_conv_inputs(const NodeContext& ctx, const TensorType& x, const TensorType& w,
                          const TensorType* bias) {
  if (x.rank() < 3) {
    ctx.fail("input X is {}; {} needs N x C x D1 x ... (at least one spatial axis)",
             type_string(x), ctx.node().op);
  }
  if (w.rank() != x.rank()) {
    ctx.fail("weight W is {} but X is {}: W needs the same rank as X", type_string(w),
             type_string(x));
  }
  if (w.dtype != x.dtype) {
    ctx.fail("weight W is {} but X is {}", dtype_name(w.dtype), dtype_name(x.dtype));
  }
  if (bias && (bias->rank() != 1 || bias->dtype != x.dtype)) {
    ctx.fail("bias B is {}; it should be a vector of {}", type_string(*bias), dtype_name(x.dtype));
  }
  return x.rank() - 2;
}

// The kernel extent: W's spatial dimensions, which `kernel_shape`, if given, must match.
inline Shape read_kernel_shape(const NodeContext& ctx, const TensorType& w) {
  Shape kernel(w.shape.begin() + 2, w.shape.end());
  if (ctx.has_attr("kernel_shape") && ctx.get_ints("kernel_shape") != kernel) {
    ctx.fail("attribute kernel_shape {} does not match the weight W {}",
             shape_string(ctx.get_ints("kernel_shape")), type_string(w));
  }
  return kernel;
}

// The reference kernels of the convolutions (Conv, ConvTranspose, minic.NchwcConv) share
// their frame: X, W and the optional bias B read into plain arrays of the compute type C,
// `forward(x, w, bias or null, y)` filling Y's (of type `y_type`), and Y stored back in its
// element type.
template <typename Forward>
Tensor run_conv_reference(const NodeContext& ctx, const Tensor& x, const Tensor& w,
                          const Tensor* bias, const TensorType& y_type, Forward&& forward) {
  Tensor y(y_type);
  visit_float_dtype(ctx, x.dtype(), "input X", [&]<typename T>() {
    using C = compute_t<T>;
    std::vector<C> xs = to_compute<T>(x);
    std::vector<C> ws = to_compute<T>(w);
    std::vector<C> bs = bias ? to_compute<T>(*bias) : std::vector<C>();
    std::vector<C> ys(y.num_elements());
    forward(xs.data(), ws.data(), bias ? bs.data() : nullptr, ys.data());
    store_computed<T>(ys, y);
  });
  return y;
}

// --- Conv ---------------------------------------------------------------------------------------

struct ConvAttributes {
  int64_t group = 1;
  WindowGeometry window;

  static ConvAttributes read(const NodeContext& ctx, const TensorType& x, const TensorType& w,
                             const TensorType* bias) {
    int64_t rank = check_conv_inputs(ctx, x, w, bias);
    ConvAttributes a;
    a.group = ctx.get_int("group", 1);
    if (a.group < 1) ctx.fail("attribute group is {}; it must be positive", a.group);
    const int64_t in_channels = x.shape[1];
    const int64_t out_channels = w.shape[0];
    if (in_channels % a.group != 0 || out_channels % a.group != 0) {
      ctx.fail("group {} does not divide the input channels ({}) and output channels ({})",
               a.group, in_channels, out_channels);
    }
    if (w.shape[1] * a.group != in_channels) {
      ctx.fail("weight W {} expects {} input channels per group, {} in all, but X {} has {}",
               type_string(w), w.shape[1], w.shape[1] * a.group, type_string(x), in_channels);
    }
    if (bias && bias->shape[0] != out_channels) {
      ctx.fail("bias B {} should have one entry per output channel ({})", type_string(*bias),
               out_channels);
    }
    Shape spatial(x.shape.begin() + 2, x.shape.end());
    a.window = read_window(ctx, spatial, read_kernel_shape(ctx, w), /*ceil_mode=*/false);
    MINIC_CHECK(a.window.rank() == rank);
    return a;
  }
};

// Conv's reference kernel on given tensors: Conv(X, W, B) with the node's attributes
// (conv.cpp). minic.NchwcConv's reference kernel is this on its tensors unblocked.
Tensor conv_reference(const NodeContext& ctx, const Tensor& x, const Tensor& w, const Tensor* bias);

// The same for int32 X, W and B (the integer convolutions of quantized_linear.cpp, whose
// zero points are subtracted first): sums wrap at 32 bits.
Tensor conv_integer_reference(const NodeContext& ctx, const Tensor& x, const Tensor& w,
                              const Tensor* bias);

// Conv's compute rule (conv_compute.cpp).
std::vector<ComputeTensor> conv_compute(const ComputeContext& ctx);

// What the forms of Conv's compute rule read (conv_compute.cpp): X and W as compute
// tensors (an integer convolution's with their zero points subtracted, or packed into
// words of four channels), the optional bias, the type sums accumulate in, and how a sum
// plus bias becomes an output element (`finish`; unset, a conversion to the output type).
// `product` (unset: x * w in the accumulator type) is the term a tap adds, and `border`
// (unset: 0) what padding reads.
struct ConvOperands {
  ComputeTensor x;
  ComputeTensor w;
  std::optional<ComputeTensor> bias;
  DType acc = DType::f32;
  TensorType output;
  std::function<loop::Expr(const loop::Expr& value, const Indices& i)> finish = {};
  std::function<loop::Expr(const loop::Expr& x, const loop::Expr& w)> product = {};
  std::optional<loop::Expr> border = {};

  // The term of an input element and a weight.
  loop::Expr multiply(const loop::Expr& x_value, const loop::Expr& w_value) const;
  // The value an input element outside the image has.
  loop::Expr border_value() const;
  // Output element `i` from its sum: the bias added, then finished.
  loop::Expr finish_sum(const loop::Expr& sum, const Indices& i) const;
};

// Conv's compute rule on given operands, with the node's attributes `a`: the rule of
// Conv, ConvInteger and QLinearConv.
std::vector<ComputeTensor> conv_compute_of(const ComputeContext& ctx, const ConvAttributes& a,
                                           const ConvOperands& operands);

}  // namespace minic
