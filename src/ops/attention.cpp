// Attention: scaled dot-product attention over heads, with masks and a key/value cache.
// Course module 2.
//
// Q, K and V are 4-D, [batch, heads, sequence, head_size], or 3-D, [batch, sequence,
// heads * head_size] with the head counts in q_num_heads and kv_num_heads. With the past
// cache (past_key, past_value) in front of K and V, so that the total sequence length is
// T = past + kv_sequence, each query head h reads the key/value head h / (q_heads /
// kv_heads) (grouped-query attention: q_heads must be a multiple of kv_heads), and for
// query position i and key position j:
//
//   score[i][j]  = scale * sum over d of Q[i][d] * K[j][d]    (scale default 1/sqrt(head_size))
//   capped[i][j] = softcap * tanh(score[i][j] / softcap)       (only when softcap > 0)
//   biased[i][j] = capped[i][j] + bias[i][j]
//   P[i][j]      = exp(biased[i][j]) / sum over j' of exp(biased[i][j'])
//   Y[i][e]      = sum over j of P[i][j] * V[j][e]
//
// bias is the sum of
//   - attn_mask, broadcast to [batch, q_heads, q_sequence, T]: a float mask is added as it
//     is; a boolean mask adds 0 where true and -inf where false. A mask whose last
//     dimension is shorter than T counts as -inf (false) in the columns past its end.
//   - with is_causal = 1, -inf where j > i + past (the upper-left aligned causal mask),
//   - with nonpad_kv_seqlen (opset 24), -inf where j >= nonpad_kv_seqlen[batch].
// The optional outputs are present_key and present_value (the cache with K and V
// appended, [batch, kv_heads, T, head_size]) and qk_matmul_output, which is, by
// qk_matmul_output_mode: 0 score, 1 capped, 2 biased, 3 P.
//
// The kernel computes in double, which is at least the precision softmax_precision asks
// for, and rounds the outputs to their element types once at the end. A query row that
// every position masks out has no finite score; its softmax is 0/0, NaN, as in ONNX.
// Fusion kind: opaque. The checks and the shape rule are in attention_shape.cpp.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "attention.h"
#include "broadcast.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace minic {

namespace {

// The index of element e of head h of token s in batch b, in the 4-D layout [batch, heads,
// sequence, size] (heads_first) or the 3-D one [batch, sequence, heads * size].
int64_t head_offset(bool heads_first, int64_t heads, int64_t sequence, int64_t size, int64_t b,
                    int64_t h, int64_t s, int64_t e) {
  return heads_first ? ((b * heads + h) * sequence + s) * size + e
                     : ((b * sequence + s) * heads + h) * size + e;
}

// Copies `values` from one of the two layouts above to the other.
std::vector<double> change_layout(const std::vector<double>& values, bool from_heads_first,
                                  int64_t batch, int64_t heads, int64_t sequence, int64_t size) {
  std::vector<double> result(values.size());
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t s = 0; s < sequence; ++s) {
        for (int64_t e = 0; e < size; ++e) {
          result[head_offset(!from_heads_first, heads, sequence, size, b, h, s, e)] =
              values[head_offset(from_heads_first, heads, sequence, size, b, h, s, e)];
        }
      }
    }
  }
  return result;
}

// The elements of Q, K or V in the 4-D layout [batch, heads, sequence, size], as doubles.
std::vector<double> to_heads(const Tensor& input, int64_t heads) {
  std::vector<double> values = input.to_double_vector();
  if (input.rank() == 4) return values;
  const Shape& shape = input.shape();
  return change_layout(values, false, shape[0], heads, shape[1], shape[2] / heads);
}

// The cache [batch, heads, past + sequence, size]: past (or nothing) then the new entries.
std::vector<double> append_to_cache(const KernelContext& ctx, size_t past_input,
                                    const std::vector<double>& current, int64_t batch,
                                    int64_t heads, int64_t sequence, int64_t size) {
  if (!ctx.has_input(past_input)) return current;
  const Tensor& past_tensor = ctx.input(past_input);
  const std::vector<double> past = past_tensor.to_double_vector();
  const int64_t past_length = past_tensor.shape()[2];
  std::vector<double> result;
  result.reserve(past.size() + current.size());
  for (int64_t bh = 0; bh < batch * heads; ++bh) {
    auto past_row = past.begin() + bh * past_length * size;
    result.insert(result.end(), past_row, past_row + past_length * size);
    auto current_row = current.begin() + bh * sequence * size;
    result.insert(result.end(), current_row, current_row + sequence * size);
  }
  return result;
}

// bias[b][h][i][j] of the formula in the header, as a function of the full index.
// Each -inf term makes the sum -inf, so the first one found is returned.
class AttentionBias {
 public:
  AttentionBias(const KernelContext& ctx, const AttentionAttributes& a, const AttentionDims& d)
      : d_(d), is_causal_(a.is_causal) {
    if (ctx.has_input(kMask)) {
      const Tensor& mask = ctx.input(kMask);
      mask_ = mask.to_double_vector();
      mask_is_bool_ = mask.dtype() == DType::boolean;
      mask_columns_ = mask.shape().back();
      // Strides of the mask as 4-D, 0 along the dimensions it broadcasts over. Along the
      // last one, columns at or past mask_columns_ are never read.
      Shape shape = mask.shape();
      shape.insert(shape.begin(), 4 - shape.size(), 1);
      mask_strides_ = row_major_strides(shape);
      for (size_t i = 0; i < 3; ++i) {
        if (shape[i] == 1) mask_strides_[i] = 0;
      }
    }
    if (ctx.has_input(kNonpadKvSeqlen)) {
      nonpad_ = ctx.input(kNonpadKvSeqlen).to_int64_vector();
      for (int64_t length : nonpad_) {
        if (length < 0 || length > d.kv_sequence) {
          ctx.fail("nonpad_kv_seqlen {} is outside [0, {}]", length, d.kv_sequence);
        }
      }
    }
  }

  double operator()(int64_t b, int64_t h, int64_t i, int64_t j) const {
    constexpr double kMinusInf = -std::numeric_limits<double>::infinity();
    double bias = 0;
    if (!mask_.empty()) {
      if (j >= mask_columns_) return kMinusInf;  // past the end of a short mask
      const double m = mask_[offset_of({b, h, i, j}, mask_strides_)];
      if (mask_is_bool_) {
        if (m == 0) return kMinusInf;
      } else {
        bias += m;
      }
    }
    if (is_causal_ && j > i + d_.past) return kMinusInf;
    if (!nonpad_.empty() && j >= nonpad_[b]) return kMinusInf;
    return bias;
  }

 private:
  const AttentionDims& d_;
  bool is_causal_;
  std::vector<double> mask_;
  bool mask_is_bool_ = false;
  int64_t mask_columns_ = 0;
  Shape mask_strides_;
  std::vector<int64_t> nonpad_;
};

std::vector<Tensor> attention_kernel(const KernelContext& ctx) {
  const AttentionAttributes a = AttentionAttributes::read(ctx);
  AttentionInputTypes types{};
  for (size_t i = 0; i < types.size(); ++i) {
    if (ctx.has_input(i)) types[i] = &ctx.input(i).type();
  }
  const AttentionDims d = check_attention_inputs(ctx, a, types);
  const int64_t total = d.total();
  const std::vector<double> q = to_heads(ctx.input(kQ), d.q_heads);
  const std::vector<double> key =
      append_to_cache(ctx, kPastKey, to_heads(ctx.input(kK), d.kv_heads), d.batch, d.kv_heads,
                      d.kv_sequence, d.head_size);
  const std::vector<double> value =
      append_to_cache(ctx, kPastValue, to_heads(ctx.input(kV), d.kv_heads), d.batch, d.kv_heads,
                      d.kv_sequence, d.v_head_size);
  const AttentionBias bias(ctx, a, d);
  const double scale = a.scale.value_or(1.0 / std::sqrt(static_cast<double>(d.head_size)));
  const int64_t group = d.q_heads / d.kv_heads;

  // y in [batch, q_heads, q_sequence, v_head_size]; qk in [batch, q_heads, q_sequence, T].
  std::vector<double> y(d.batch * d.q_heads * d.q_sequence * d.v_head_size, 0.0);
  std::vector<double> qk(d.batch * d.q_heads * d.q_sequence * total, 0.0);
  std::vector<double> biased(total);
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < d.q_heads; ++h) {
      const int64_t kv_head = (b * d.kv_heads + h / group) * total;  // first row of its cache
      for (int64_t i = 0; i < d.q_sequence; ++i) {
        const int64_t row = (b * d.q_heads + h) * d.q_sequence + i;
        const double* q_row = &q[row * d.head_size];
        double* qk_row = &qk[row * total];
        for (int64_t j = 0; j < total; ++j) {
          const double* k_row = &key[(kv_head + j) * d.head_size];
          double score = 0;
          for (int64_t e = 0; e < d.head_size; ++e) score += q_row[e] * k_row[e];
          score *= scale;
          const double capped = a.softcap > 0 ? a.softcap * std::tanh(score / a.softcap) : score;
          biased[j] = capped + bias(b, h, i, j);
          if (a.qk_output == QkOutputMode::score) qk_row[j] = score;
          if (a.qk_output == QkOutputMode::capped) qk_row[j] = capped;
          if (a.qk_output == QkOutputMode::biased) qk_row[j] = biased[j];
        }
        // Softmax over j, shifted by the row's maximum so that exp cannot overflow.
        double largest = -std::numeric_limits<double>::infinity();
        for (double x : biased) largest = std::max(largest, x);
        double sum = 0;
        for (double& x : biased) {
          x = std::exp(x - largest);
          sum += x;
        }
        for (int64_t j = 0; j < total; ++j) {
          const double p = biased[j] / sum;
          if (a.qk_output == QkOutputMode::softmax) qk_row[j] = p;
          const double* v_row = &value[(kv_head + j) * d.v_head_size];
          double* y_row = &y[row * d.v_head_size];
          for (int64_t e = 0; e < d.v_head_size; ++e) y_row[e] += p * v_row[e];
        }
      }
    }
  }

  // Y back to the 3-D layout [batch, q_sequence, q_heads * v_head_size] for 3-D inputs.
  if (d.three_d) y = change_layout(y, true, d.batch, d.q_heads, d.q_sequence, d.v_head_size);
  const std::vector<double>* results[] = {&y, &key, &value, &qk};
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    const TensorType& type = ctx.output_type(i);
    outputs.push_back(Tensor::from_vector<double>(type.shape, *results[i]).cast(type.dtype));
  }
  return outputs;
}

}  // namespace

void register_attention_ops(OpRegistry& registry) {
  registry.add({.name = "Attention",
                .min_opset = 23,
                .min_inputs = 3,
                .max_inputs = 7,
                .max_outputs = 4,
                .fusion = FusionKind::opaque,
                .shape_rule = attention_shape,
                .kernel = attention_kernel});
}

}  // namespace minic
