// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: the loss of a classifier's scores
// against integer class labels. Course module 2.
//
// The input has shape [N, C, d1, ..., dk] (k >= 0): C class scores for each sample position
// (n, d1, ..., dk). The target has shape [N, d1, ..., dk] and holds one class c in [0, C)
// for each position, or the attribute `ignore_index`, which marks a position to leave out.
// With the optional weight w of shape [C] (all ones when absent), each position's loss is
//
//   loss[n, d...] = -input[n, c, d...] * w[c]      with c = target[n, d...]
//   loss[n, d...] = 0                               where target[n, d...] = ignore_index
//
// NegativeLogLikelihoodLoss reads `input` as log-probabilities. SoftmaxCrossEntropyLoss
// first turns its scores into log-probabilities along the class axis,
//
//   log_prob[n, c, d...] = x[n, c, d...] - max_c' x - log(sum_c' exp(x[n, c', d...] - max_c' x))
//
// and then takes the same loss; its optional second output is log_prob itself.
// The attribute `reduction` says what comes out:
//   none:  loss, of the target's shape
//   sum:   sum(loss), a scalar
//   mean (the default):  sum(loss) / sum(w[c]) over the positions not ignored, a scalar
//          (without weights, the number of positions not ignored). If every position is
//          ignored this is 0 / 0, NaN.
// A target outside [0, C) that is not ignore_index is an error naming the position.
//
// Opsets: both ops appeared in opset 12; later versions (13, and 22 for
// NegativeLogLikelihoodLoss) only added element types, so one form serves them all. The
// kernels accept f16, bf16, f32 and f64 at every version, compute in double and round
// once to the element type at the end.
// Fusion kind: opaque. Which input element a loss reads depends on the target's values.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/op.h"

#include <cmath>
#include <optional>

namespace minic {

namespace {

enum class Reduction { none, sum, mean };

struct LossAttributes {
  Reduction reduction = Reduction::mean;
  std::optional<int64_t> ignore_index;

  static LossAttributes read(const NodeContext& ctx) {
    LossAttributes a;
    const std::string reduction = ctx.get_string("reduction", "mean");
    if (reduction == "none") {
      a.reduction = Reduction::none;
    } else if (reduction == "sum") {
      a.reduction = Reduction::sum;
    } else if (reduction == "mean") {
      a.reduction = Reduction::mean;
    } else {
      ctx.fail("reduction '{}' is not one of 'none', 'sum', 'mean'", reduction);
    }
    if (ctx.has_attr("ignore_index")) a.ignore_index = ctx.get_int("ignore_index");
    return a;
  }
};

// The input viewed as [N, C, D] with D = d1 * ... * dk: element (n, c, d) is at
// (n * C + c) * D + d, and the target's element (n, d) at n * D + d.
struct LossLayout {
  int64_t n = 0, classes = 0, positions = 1;

  explicit LossLayout(const Shape& input) : n(input[0]), classes(input[1]) {
    for (size_t i = 2; i < input.size(); ++i) positions *= input[i];
  }
  int64_t at(int64_t sample, int64_t c, int64_t d) const {
    return (sample * classes + c) * positions + d;
  }
};

// Checks the input, target and weight types (the weight is input 2 when present) and
// returns the loss output's type.
TensorType loss_shape(const ShapeContext& ctx, const char* input_name) {
  const TensorType& input = ctx.input_type(0);
  const TensorType& target = ctx.input_type(1);
  if (!is_float(input.dtype)) {
    ctx.fail("input {} is {}; {} takes floating-point scores", input_name, type_string(input),
             ctx.node().op);
  }
  if (input.rank() < 2) {
    ctx.fail("input {} is {}; it needs shape [N, C] or [N, C, d1, ..., dk]", input_name,
             type_string(input));
  }
  if (target.dtype != DType::i32 && target.dtype != DType::i64) {
    ctx.fail("the target (class labels) must be i32 or i64, not {}", type_string(target));
  }
  Shape expected = {input.shape[0]};
  expected.insert(expected.end(), input.shape.begin() + 2, input.shape.end());
  if (target.shape != expected) {
    ctx.fail("the target is {} but input {} {} needs a target of shape {}", type_string(target),
             input_name, type_string(input), shape_string(expected));
  }
  if (ctx.has_input(2)) {
    const TensorType& weight = ctx.input_type(2);
    if (weight.dtype != input.dtype || weight.shape != Shape{input.shape[1]}) {
      ctx.fail("the weight is {} but must be {}[{}], one weight per class", type_string(weight),
               dtype_name(input.dtype), input.shape[1]);
    }
  }
  const LossAttributes a = LossAttributes::read(ctx);
  return {input.dtype, a.reduction == Reduction::none ? target.shape : Shape{}};
}

// The loss of log-probabilities `log_prob` (laid out as the input, [N, C, D]) against the
// kernel's target (input 1) and optional weight (input 2), reduced as the attributes say;
// the result has output 0's type.
Tensor negative_log_likelihood(const KernelContext& ctx, const std::vector<double>& log_prob) {
  const LossAttributes a = LossAttributes::read(ctx);
  const Tensor& input = ctx.input(0);
  const LossLayout layout(input.shape());
  const std::vector<int64_t> target = ctx.input(1).to_int64_vector();
  const std::vector<double> weight = ctx.has_input(2) ? ctx.input(2).to_double_vector()
                                                      : std::vector<double>(layout.classes, 1.0);

  std::vector<double> loss(target.size(), 0.0);
  double loss_sum = 0;
  double weight_sum = 0;  // of the positions not ignored
  for (int64_t sample = 0; sample < layout.n; ++sample) {
    for (int64_t d = 0; d < layout.positions; ++d) {
      const int64_t position = sample * layout.positions + d;
      const int64_t c = target[position];
      if (a.ignore_index && c == *a.ignore_index) continue;
      if (c < 0 || c >= layout.classes) {
        ctx.fail("target {} at element {} is not a class in [0, {}) nor ignore_index", c,
                 position, layout.classes);
      }
      const double w = weight[c];
      loss[position] = -log_prob[layout.at(sample, c, d)] * w;
      loss_sum += loss[position];
      weight_sum += w;
    }
  }

  const TensorType& type = ctx.output_type(0);
  if (a.reduction == Reduction::none) {
    return Tensor::from_vector<double>(type.shape, loss).cast(type.dtype);
  }
  const double total = a.reduction == Reduction::sum ? loss_sum : loss_sum / weight_sum;
  return Tensor::scalar<double>(total).cast(type.dtype);
}

// --- NegativeLogLikelihoodLoss ------------------------------------------------------------------

std::vector<TensorType> nll_loss_shape(const ShapeContext& ctx) {
  return {loss_shape(ctx, "input")};
}

std::vector<Tensor> nll_loss_kernel(const KernelContext& ctx) {
  return single_output(negative_log_likelihood(ctx, ctx.input(0).to_double_vector()));
}

// --- SoftmaxCrossEntropyLoss --------------------------------------------------------------------

std::vector<TensorType> sce_loss_shape(const ShapeContext& ctx) {
  std::vector<TensorType> types = {loss_shape(ctx, "scores")};
  if (ctx.num_outputs() > 1) types.push_back(ctx.input_type(0));
  return types;
}

// LogSoftmax of the scores along the class axis, in double.
std::vector<double> log_softmax_classes(const Tensor& scores) {
  const LossLayout layout(scores.shape());
  std::vector<double> x = scores.to_double_vector();
  std::vector<double> log_prob(x.size());
  for (int64_t sample = 0; sample < layout.n; ++sample) {
    for (int64_t d = 0; d < layout.positions; ++d) {
      double max = -INFINITY;
      for (int64_t c = 0; c < layout.classes; ++c) {
        max = std::max(max, x[layout.at(sample, c, d)]);
      }
      double sum = 0;
      for (int64_t c = 0; c < layout.classes; ++c) {
        sum += std::exp(x[layout.at(sample, c, d)] - max);
      }
      const double log_sum = std::log(sum);
      for (int64_t c = 0; c < layout.classes; ++c) {
        const int64_t i = layout.at(sample, c, d);
        log_prob[i] = x[i] - max - log_sum;
      }
    }
  }
  return log_prob;
}

std::vector<Tensor> sce_loss_kernel(const KernelContext& ctx) {
  const std::vector<double> log_prob = log_softmax_classes(ctx.input(0));
  std::vector<Tensor> outputs;
  outputs.push_back(negative_log_likelihood(ctx, log_prob));
  if (ctx.num_outputs() > 1) {
    const TensorType& type = ctx.output_type(1);
    outputs.push_back(Tensor::from_vector<double>(type.shape, log_prob).cast(type.dtype));
  }
  return outputs;
}

}  // namespace

void register_loss_ops(OpRegistry& registry) {
  registry.add({.name = "NegativeLogLikelihoodLoss",
                .min_opset = 12,
                .min_inputs = 2,
                .max_inputs = 3,
                .shape_rule = nll_loss_shape,
                .kernel = nll_loss_kernel});
  registry.add({.name = "SoftmaxCrossEntropyLoss",
                .min_opset = 12,
                .min_inputs = 2,
                .max_inputs = 3,
                .max_outputs = 2,
                .shape_rule = sce_loss_shape,
                .kernel = sce_loss_kernel});
}

}  // namespace minic
