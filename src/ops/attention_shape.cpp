// Attention's input checks and shape rule. Course module 2.
//
// What the op computes is in attention.cpp. The checks here run for the shape rule and
// again in the reference kernel: Q, K and V all 3-D (with q_num_heads and kv_num_heads)
// or all 4-D, with one batch size, K and V of one sequence length, Q and K of one head
// size, and the query heads a multiple of the key/value heads; past_key and past_value
// together, shaped as the cache; attn_mask bool or Q's type, broadcasting to [batch,
// q_heads, q_sequence, T] with its last dimension at most T; nonpad_kv_seqlen (opset 24
// only) i64[batch].
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "attention.h"

namespace minic {

AttentionAttributes AttentionAttributes::read(const NodeContext& ctx) {
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

namespace {

// Q, K and V are float16, bfloat16, float or double (is_float covers exactly these).
void check_float(const NodeContext& ctx, const TensorType& type, const char* name) {
  if (!is_float(type.dtype)) {
    ctx.fail("input {} is {}; Attention takes float16, bfloat16, float or double",
             name, type_string(type));
  }
}

// The head size of a 3-D input [batch, sequence, heads * head_size].
int64_t head_size_3d(const NodeContext& ctx, const TensorType& type, const char* name,
                     int64_t heads) {
  if (type.shape[2] % heads != 0) {
    ctx.fail("input {} {} has a hidden size that is not a multiple of its {} heads", name,
             type_string(type), heads);
  }
  return type.shape[2] / heads;
}

// The sizes given by Q, K and V (all but d.past).
AttentionDims read_dims(const NodeContext& ctx, const AttentionAttributes& a,
                        const TensorType& q, const TensorType& k, const TensorType& v) {
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

// Checks past_key and past_value against K and V; returns the past sequence length.
int64_t read_past(const NodeContext& ctx, const AttentionDims& d, const AttentionInputTypes& in) {
  if ((in[kPastKey] == nullptr) != (in[kPastValue] == nullptr)) {
    ctx.fail("past_key and past_value must be given together");
  }
  if (in[kPastKey] == nullptr) return 0;
  const TensorType& past_key = *in[kPastKey];
  const TensorType& past_value = *in[kPastValue];
  if (past_key.dtype != in[kK]->dtype || past_value.dtype != in[kV]->dtype) {
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
  return past_key.shape[2];
}

// attn_mask must be bool or Q's type and broadcast to [batch, q_heads, q_sequence, T],
// its last dimension at most T.
void check_mask(const NodeContext& ctx, const AttentionDims& d, const TensorType& mask,
                DType q_type) {
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

// nonpad_kv_seqlen (opset 24) is i64[batch], and replaces the cache.
void check_nonpad_kv_seqlen(const NodeContext& ctx, const AttentionDims& d,
                            const AttentionInputTypes& in) {
  if (ctx.opset() < 24) ctx.fail("input nonpad_kv_seqlen needs opset 24, not {}", ctx.opset());
  const TensorType& lengths = *in[kNonpadKvSeqlen];
  if (lengths.dtype != DType::i64 || lengths.shape != Shape{d.batch}) {
    ctx.fail("nonpad_kv_seqlen must be i64[{}], not {}", d.batch, type_string(lengths));
  }
  if (in[kPastKey] != nullptr) ctx.fail("nonpad_kv_seqlen cannot be used with past_key");
}

}  // namespace

AttentionDims check_attention_inputs(const NodeContext& ctx, const AttentionAttributes& a,
                                     const AttentionInputTypes& inputs) {
  // Q, K and V are required: one omitted in the middle ("" in a model) passes the count.
  for (size_t i : {kQ, kK, kV}) {
    if (inputs[i] == nullptr) ctx.fail("input {} ({}) is required but missing", i, "QKV"[i]);
  }
  AttentionDims d = read_dims(ctx, a, *inputs[kQ], *inputs[kK], *inputs[kV]);
  d.past = read_past(ctx, d, inputs);
  if (inputs[kMask] != nullptr) check_mask(ctx, d, *inputs[kMask], inputs[kQ]->dtype);
  if (inputs[kNonpadKvSeqlen] != nullptr) check_nonpad_kv_seqlen(ctx, d, inputs);
  return d;
}

std::vector<TensorType> attention_shape(const ShapeContext& ctx) {
  const AttentionAttributes a = AttentionAttributes::read(ctx);
  AttentionInputTypes inputs{};
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (ctx.has_input(i)) inputs[i] = &ctx.input_type(i);
  }
  const AttentionDims d = check_attention_inputs(ctx, a, inputs);
  const DType q_type = inputs[kQ]->dtype;
  const DType v_type = inputs[kV]->dtype;
  const Shape y = d.three_d ? Shape{d.batch, d.q_sequence, d.q_heads * d.v_head_size}
                            : Shape{d.batch, d.q_heads, d.q_sequence, d.v_head_size};
  std::vector<TensorType> types = {
      {q_type, y},
      {q_type, {d.batch, d.kv_heads, d.total(), d.head_size}},  // present_key, K's type
      {v_type, {d.batch, d.kv_heads, d.total(), d.v_head_size}},
      {q_type, {d.batch, d.q_heads, d.q_sequence, d.total()}},  // qk_matmul_output
  };
  types.resize(ctx.num_outputs());
  return types;
}

}  // namespace minic
