// CausalConvWithState: a causal, depthwise 1-D convolution that carries its last inputs
// from one call to the next (Mamba, Gated DeltaNet). Course module 2.
//
// input [B, C, L], weight [C, 1, K], optional bias [C] and past_state [B, C, K-1] (zeros
// when omitted). With p = concat(past_state, input) along the length,
//   output[b, c, t] = act(bias[c] + sum over j < K of weight[c, 0, j] * p[b, c, t + j])
//   present_state   = the last K-1 positions of p
// so output t sees input positions t-K+1 .. t only. act is the identity ("none") or
// x * sigmoid(x) ("silu", also called "swish"). The kernel computes in double and rounds
// the convolution to the input's type before the activation, as the op's definition does.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include <cmath>

#include "minic/ops/op.h"

namespace minic {

namespace {

struct CausalConvForm {
  int64_t batch = 0, channels = 0, length = 0, kernel = 0;
  bool silu = false;

  static CausalConvForm read(const NodeContext& ctx,
                             const std::function<const TensorType&(size_t)>& type) {
    CausalConvForm f;
    const std::string activation = ctx.get_string("activation", "none");
    if (activation != "none" && activation != "silu" && activation != "swish") {
      ctx.fail("activation must be none, silu or swish, not '{}'", activation);
    }
    f.silu = activation != "none";
    const TensorType& x = type(0);
    const TensorType& w = type(1);
    if (x.rank() != 3) ctx.fail("input must be [batch, channels, length], not {}", type_string(x));
    if (!is_float(x.dtype)) ctx.fail("input must be floating point, not {}", dtype_name(x.dtype));
    f.batch = x.shape[0];
    f.channels = x.shape[1];
    f.length = x.shape[2];
    if (w.rank() != 3 || w.shape[0] != f.channels || w.shape[1] != 1 || w.shape[2] < 1) {
      ctx.fail("weight must be [{}, 1, K] with K >= 1, not {}", f.channels, type_string(w));
    }
    f.kernel = w.shape[2];
    if (ctx.has_input(2) && type(2).shape != Shape{f.channels}) {
      ctx.fail("bias must be [{}], not {}", f.channels, type_string(type(2)));
    }
    if (ctx.has_input(3) && type(3).shape != f.state_shape()) {
      ctx.fail("past_state must be {}, not {}", shape_string(f.state_shape()),
               type_string(type(3)));
    }
    return f;
  }

  Shape state_shape() const { return {batch, channels, kernel - 1}; }
};

std::vector<TensorType> causal_conv_shape(const ShapeContext& ctx) {
  auto f =
      CausalConvForm::read(ctx, [&](size_t i) -> const TensorType& { return ctx.input_type(i); });
  const DType dtype = ctx.input_type(0).dtype;
  std::vector<TensorType> types = {ctx.input_type(0), {dtype, f.state_shape()}};
  types.resize(ctx.num_outputs());
  return types;
}

std::vector<Tensor> causal_conv_kernel(const KernelContext& ctx) {
  auto f =
      CausalConvForm::read(ctx, [&](size_t i) -> const TensorType& { return ctx.input(i).type(); });
  const DType dtype = ctx.input(0).dtype();
  const std::vector<double> x = ctx.input(0).to_double_vector();
  const std::vector<double> w = ctx.input(1).to_double_vector();
  const std::vector<double> bias =
      ctx.has_input(2) ? ctx.input(2).to_double_vector() : std::vector<double>(f.channels);
  const std::vector<double> past = ctx.has_input(3)
                                       ? ctx.input(3).to_double_vector()
                                       : std::vector<double>(num_elements(f.state_shape()));
  const int64_t carried = f.kernel - 1, padded_length = carried + f.length;
  std::vector<double> output(x.size());
  std::vector<double> present(past.size());
  for (int64_t b = 0; b < f.batch; ++b) {
    for (int64_t c = 0; c < f.channels; ++c) {
      const int64_t row = b * f.channels + c;
      // p[i]: the past state, then the input.
      auto p = [&](int64_t i) {
        return i < carried ? past[row * carried + i] : x[row * f.length + i - carried];
      };
      for (int64_t t = 0; t < f.length; ++t) {
        double sum = bias[c];
        for (int64_t j = 0; j < f.kernel; ++j) sum += w[c * f.kernel + j] * p(t + j);
        output[row * f.length + t] = sum;
      }
      for (int64_t i = 0; i < carried; ++i)
        present[row * carried + i] = p(padded_length - carried + i);
    }
  }
  Tensor y = Tensor::from_vector<double>(ctx.output_type(0).shape, output).cast(dtype);
  if (f.silu) {
    std::vector<double> rounded = y.to_double_vector();
    for (double& v : rounded) v = v / (1 + std::exp(-v));
    y = Tensor::from_vector<double>(ctx.output_type(0).shape, rounded).cast(dtype);
  }
  std::vector<Tensor> outputs;
  outputs.push_back(std::move(y));
  if (ctx.num_outputs() > 1) {
    outputs.push_back(Tensor::from_vector<double>(f.state_shape(), present).cast(dtype));
  }
  return outputs;
}

}  // namespace

void register_causal_conv_ops(OpRegistry& registry) {
  registry.add({.name = "CausalConvWithState",
                .min_opset = 27,
                .min_inputs = 2,
                .max_inputs = 4,
                .max_outputs = 2,
                .shape_rule = causal_conv_shape,
                .kernel = causal_conv_kernel});
}

}  // namespace minic
