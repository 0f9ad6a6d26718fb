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
// Fusion kind: opaque.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "broadcast.h"
#include "minic/ops/op.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace minic {

namespace {

// Input and output positions, as in the ONNX schema.
enum AttentionInput : size_t { kQ, kK, kV, kMask, kPastKey, kPastValue, kNonpadKvSeqlen };
enum AttentionOutput : size_t { kY, kPresentKey, kPresentValue, kQkMatmul };

// What qk_matmul_output holds.
enum class QkOutputMode : int64_t { score = 0, capped = 1, biased = 2, softmax = 3 };

struct AttentionAttributes {
  bool is_causal = false;
  std::optional<double> scale;  // absent: 1 / sqrt(head_size)
  double softcap = 0;           // 0: no softcap
  QkOutputMode qk_output = QkOutputMode::score;
  std::optional<int64_t> q_num_heads;
  std::optional<int64_t> kv_num_heads;

  static AttentionAttributes read(const NodeContext& ctx) {
    AttentionAttributes a;
    const int64_t causal = ctx.get_int("is_causal", 0);
    if (causal != 0 && causal != 1) ctx.fail("is_causal must be 0 or 1, not {}", causal);
    a.is_causal = causal == 1;
    if (ctx.has_attr("scale")) a.scale = ctx.get_float("scale", 0.0f);
    a.softcap = ctx.get_float("softcap", 0.0f);
    if (!(a.softcap >= 0)) ctx.fail("softcap must be 0 (none) or positive, not {}", a.softcap);
    const int64_t mode = ctx.get_int("qk_matmul_output_mode", 0);
    if (mode < 0 || mode > 3) {
      ctx.fail("qk_matmul_output_mode must be 0, 1, 2 or 3, not {}", mode);
    }
    a.qk_output = static_cast<QkOutputMode>(mode);
    if (ctx.has_attr("q_num_heads")) a.q_num_heads = ctx.get_int("q_num_heads");
    if (ctx.has_attr("kv_num_heads")) a.kv_num_heads = ctx.get_int("kv_num_heads");
    if (ctx.has_attr("softmax_precision")) {
      // An ONNX TensorProto element type code: float, float16, double or bfloat16.
      const int64_t precision = ctx.get_int("softmax_precision");
      if (precision != 1 && precision != 10 && precision != 11 && precision != 16) {
        ctx.fail("softmax_precision {} is not a floating-point element type", precision);
      }
    }
    return a;
  }
};

// The sizes of one Attention node, read from its input types.
struct AttentionDims {
  int64_t batch = 0;
  int64_t q_heads = 0;
  int64_t kv_heads = 0;
  int64_t q_sequence = 0;
  int64_t kv_sequence = 0;
  int64_t past = 0;        // past_sequence_length, 0 without a cache
  int64_t head_size = 0;   // of Q and K
  int64_t v_head_size = 0;
  bool three_d = false;    // Q, K, V are [batch, sequence, hidden]

  int64_t total() const { return past + kv_sequence; }
};

// Q, K and V are float16, bfloat16, float or double (is_float covers exactly these).
void check_float(const ShapeContext& ctx, const TensorType& type, const char* name) {
  if (!is_float(type.dtype)) {
    ctx.fail("input {} is {}; Attention takes float16, bfloat16, float or double",
             name, type_string(type));
  }
}

// The head count and head size of a 3-D input [batch, sequence, heads * head_size].
int64_t head_size_3d(const ShapeContext& ctx, const TensorType& type, const char* name,
                     int64_t heads) {
  if (type.shape[2] % heads != 0) {
    ctx.fail("input {} {} has a hidden size that is not a multiple of its {} heads", name,
             type_string(type), heads);
  }
  return type.shape[2] / heads;
}

AttentionDims read_dims(const ShapeContext& ctx, const AttentionAttributes& a) {
  const TensorType& q = ctx.input_type(kQ);
  const TensorType& k = ctx.input_type(kK);
  const TensorType& v = ctx.input_type(kV);
  check_float(ctx, q, "Q");
  check_float(ctx, k, "K");
  check_float(ctx, v, "V");
  if (k.dtype != q.dtype) ctx.fail("input K is {} but Q is {}", type_string(k), type_string(q));
  if (q.rank() != k.rank() || q.rank() != v.rank() || (q.rank() != 3 && q.rank() != 4)) {
    ctx.fail("Q, K and V must all be 3-D or all 4-D, not {}, {} and {}", type_string(q),
             type_string(k), type_string(v));
  }
  AttentionDims d;
  d.three_d = q.rank() == 3;
  d.batch = q.shape[0];
  if (d.three_d) {
    if (!a.q_num_heads || !a.kv_num_heads) {
      ctx.fail("3-D inputs need the attributes q_num_heads and kv_num_heads");
    }
    if (*a.q_num_heads <= 0 || *a.kv_num_heads <= 0) {
      ctx.fail("q_num_heads ({}) and kv_num_heads ({}) must be positive", *a.q_num_heads,
               *a.kv_num_heads);
    }
    d.q_heads = *a.q_num_heads;
    d.kv_heads = *a.kv_num_heads;
    d.q_sequence = q.shape[1];
    d.kv_sequence = k.shape[1];
    d.head_size = head_size_3d(ctx, q, "Q", d.q_heads);
    if (head_size_3d(ctx, k, "K", d.kv_heads) != d.head_size) {
      ctx.fail("K {} with {} heads has another head size than Q {} with {} heads",
               type_string(k), d.kv_heads, type_string(q), d.q_heads);
    }
    d.v_head_size = head_size_3d(ctx, v, "V", d.kv_heads);
  } else {
    d.q_heads = q.shape[1];
    d.kv_heads = k.shape[1];
    d.q_sequence = q.shape[2];
    d.kv_sequence = k.shape[2];
    d.head_size = q.shape[3];
    d.v_head_size = v.shape[3];
    if (k.shape[3] != d.head_size) {
      ctx.fail("K {} has another head size than Q {}", type_string(k), type_string(q));
    }
    if (v.shape[1] != d.kv_heads) {
      ctx.fail("V {} has another head count than K {}", type_string(v), type_string(k));
    }
    if ((a.q_num_heads && *a.q_num_heads != d.q_heads) ||
        (a.kv_num_heads && *a.kv_num_heads != d.kv_heads)) {
      ctx.fail("q_num_heads and kv_num_heads disagree with the head counts of the 4-D Q {} "
               "and K {}", type_string(q), type_string(k));
    }
  }
  if (k.shape[0] != d.batch || v.shape[0] != d.batch) {
    ctx.fail("Q, K and V have different batch sizes: {}, {} and {}", type_string(q),
             type_string(k), type_string(v));
  }
  const int64_t v_sequence = d.three_d ? v.shape[1] : v.shape[2];
  if (v_sequence != d.kv_sequence) {
    ctx.fail("K {} and V {} have different sequence lengths", type_string(k), type_string(v));
  }
  if (d.q_heads == 0 || d.kv_heads == 0 || d.q_heads % d.kv_heads != 0) {
    ctx.fail("the {} query heads are not a positive multiple of the {} key/value heads",
             d.q_heads, d.kv_heads);
  }
  return d;
}

// Checks past_key and past_value against K and V and sets d.past.
void read_past(const ShapeContext& ctx, AttentionDims& d) {
  if (ctx.has_input(kPastKey) != ctx.has_input(kPastValue)) {
    ctx.fail("past_key and past_value must be given together");
  }
  if (!ctx.has_input(kPastKey)) return;
  const TensorType& past_key = ctx.input_type(kPastKey);
  const TensorType& past_value = ctx.input_type(kPastValue);
  if (past_key.dtype != ctx.input_type(kK).dtype || past_value.dtype != ctx.input_type(kV).dtype) {
    ctx.fail("past_key {} and past_value {} must have the element types of K and V",
             type_string(past_key), type_string(past_value));
  }
  const bool fits = past_key.rank() == 4 && past_value.rank() == 4 &&
                    past_key.shape[0] == d.batch && past_value.shape[0] == d.batch &&
                    past_key.shape[1] == d.kv_heads && past_value.shape[1] == d.kv_heads &&
                    past_key.shape[2] == past_value.shape[2] &&
                    past_key.shape[3] == d.head_size && past_value.shape[3] == d.v_head_size;
  if (!fits) {
    ctx.fail("past_key {} and past_value {} must be [{}, {}, past, {}] and [{}, {}, past, {}]",
             type_string(past_key), type_string(past_value), d.batch, d.kv_heads, d.head_size,
             d.batch, d.kv_heads, d.v_head_size);
  }
  d.past = past_key.shape[2];
}

// attn_mask must be bool or Q's type and broadcast to [batch, q_heads, q_sequence, T],
// its last dimension at most T.
void check_mask(const ShapeContext& ctx, const AttentionDims& d) {
  const TensorType& mask = ctx.input_type(kMask);
  const DType q_type = ctx.input_type(kQ).dtype;
  if (mask.dtype != DType::boolean && mask.dtype != q_type) {
    ctx.fail("attn_mask is {}; it must be bool or Q's type {}", type_string(mask),
             dtype_name(q_type));
  }
  const Shape full = {d.batch, d.q_heads, d.q_sequence, d.total()};
  bool fits = mask.rank() >= 1 && mask.rank() <= 4 && mask.shape.back() <= d.total();
  for (int64_t i = 2; fits && i <= mask.rank(); ++i) {
    const int64_t dim = mask.shape[mask.rank() - i];
    fits = dim == 1 || dim == full[4 - i];
  }
  if (!fits) {
    ctx.fail("attn_mask {} does not broadcast to {} (its last dimension may be shorter)",
             type_string(mask), shape_string(full));
  }
}

std::vector<TensorType> attention_shape(const ShapeContext& ctx) {
  const AttentionAttributes a = AttentionAttributes::read(ctx);
  AttentionDims d = read_dims(ctx, a);
  read_past(ctx, d);
  if (ctx.has_input(kMask)) check_mask(ctx, d);
  if (ctx.has_input(kNonpadKvSeqlen)) {
    if (ctx.opset() < 24) ctx.fail("input nonpad_kv_seqlen needs opset 24, not {}", ctx.opset());
    const TensorType& lengths = ctx.input_type(kNonpadKvSeqlen);
    if (lengths.dtype != DType::i64 || lengths.shape != Shape{d.batch}) {
      ctx.fail("nonpad_kv_seqlen must be i64[{}], not {}", d.batch, type_string(lengths));
    }
    if (ctx.has_input(kPastKey)) ctx.fail("nonpad_kv_seqlen cannot be used with past_key");
  }
  const DType q_type = ctx.input_type(kQ).dtype;
  const DType v_type = ctx.input_type(kV).dtype;
  std::vector<TensorType> types;
  types.push_back(d.three_d ? TensorType{q_type, {d.batch, d.q_sequence, d.q_heads * d.v_head_size}}
                            : TensorType{q_type, {d.batch, d.q_heads, d.q_sequence, d.v_head_size}});
  types.push_back({ctx.input_type(kK).dtype, {d.batch, d.kv_heads, d.total(), d.head_size}});
  types.push_back({v_type, {d.batch, d.kv_heads, d.total(), d.v_head_size}});
  types.push_back({q_type, {d.batch, d.q_heads, d.q_sequence, d.total()}});
  types.resize(ctx.num_outputs());
  return types;
}

// The elements of Q, K or V in the 4-D layout [batch, heads, sequence, size], as doubles:
// a 4-D input as it is, a 3-D [batch, sequence, heads * size] one transposed.
std::vector<double> to_heads(const Tensor& input, int64_t heads) {
  std::vector<double> values = input.to_double_vector();
  if (input.rank() == 4) return values;
  const int64_t batch = input.shape()[0];
  const int64_t sequence = input.shape()[1];
  const int64_t size = input.shape()[2] / heads;
  std::vector<double> result(values.size());
  int64_t from = 0;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t s = 0; s < sequence; ++s) {
      for (int64_t h = 0; h < heads; ++h) {
        for (int64_t e = 0; e < size; ++e) {
          result[((b * heads + h) * sequence + s) * size + e] = values[from++];
        }
      }
    }
  }
  return result;
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

// Reads the sizes again from the input tensors (the kernel sees no ShapeContext).
AttentionDims kernel_dims(const KernelContext& ctx, const AttentionAttributes& a) {
  const Shape& q = ctx.input(kQ).shape();
  const Shape& k = ctx.input(kK).shape();
  const Shape& v = ctx.input(kV).shape();
  AttentionDims d;
  d.three_d = q.size() == 3;
  d.batch = q[0];
  d.q_heads = d.three_d ? *a.q_num_heads : q[1];
  d.kv_heads = d.three_d ? *a.kv_num_heads : k[1];
  d.q_sequence = d.three_d ? q[1] : q[2];
  d.kv_sequence = d.three_d ? k[1] : k[2];
  d.head_size = d.three_d ? q[2] / d.q_heads : q[3];
  d.v_head_size = d.three_d ? v[2] / d.kv_heads : v[3];
  d.past = ctx.has_input(kPastKey) ? ctx.input(kPastKey).shape()[2] : 0;
  return d;
}

std::vector<Tensor> attention_kernel(const KernelContext& ctx) {
  const AttentionAttributes a = AttentionAttributes::read(ctx);
  const AttentionDims d = kernel_dims(ctx, a);
  const int64_t total = d.total();
  const std::vector<double> q = to_heads(ctx.input(kQ), d.q_heads);
  const std::vector<double> key = append_to_cache(ctx, kPastKey, to_heads(ctx.input(kK), d.kv_heads),
                                                  d.batch, d.kv_heads, d.kv_sequence, d.head_size);
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
  if (d.three_d) {
    std::vector<double> heads_last(y.size());
    int64_t to = 0;
    for (int64_t b = 0; b < d.batch; ++b) {
      for (int64_t i = 0; i < d.q_sequence; ++i) {
        for (int64_t h = 0; h < d.q_heads; ++h) {
          for (int64_t e = 0; e < d.v_head_size; ++e) {
            heads_last[to++] = y[((b * d.q_heads + h) * d.q_sequence + i) * d.v_head_size + e];
          }
        }
      }
    }
    y = std::move(heads_last);
  }
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
