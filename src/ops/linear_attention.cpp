// LinearAttention: attention as a recurrence over a fixed-size state, the form linear
// transformers and Gated DeltaNet use. Course module 2.
//
// query [B, T, Hq*dk], key [B, T, Hkv*dk], value [B, T, Hkv*dv] pack their heads into the
// last dimension (q_num_heads and kv_num_heads say how many). Each key/value head h keeps a
// state S_h, a dk x dv matrix (past_state [B, Hkv, dk, dv], zero when omitted). For each
// token t, in order, with g the decay (in log space) and β the update rate:
//   linear:       S = S + k ⊗ v
//   gated:        S = exp(g) ∘ S + k ⊗ v
//   delta:        S = S + k ⊗ β (v - Sᵀk)
//   gated_delta:  S = exp(g) ∘ S;  S = S + k ⊗ β (v - Sᵀk)
//   output_t = scale · qᵀ S         (scale defaults to 1/sqrt(dk))
// where ⊗ is the outer product and exp(g) ∘ S scales row d of S by exp(g[d]) (decay is
// [B, T, Hkv], one g per head, or [B, T, Hkv*dk], one per key dimension). β is [B, T, Hkv]
// or [B, T, 1]. Query heads share key/value heads in groups of Hq / Hkv (grouped-query
// attention). Outputs: output [B, T, Hq*dv] and present_state, the final S.
// The kernel computes in double; chunk_size is a hint for parallel implementations and
// does not change the result.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include <cmath>

#include "minic/ops/op.h"

namespace minic {

namespace {

struct LinearAttentionForm {
  int64_t batch = 0, tokens = 0;
  int64_t q_heads = 0, kv_heads = 0;
  int64_t key_size = 0, value_size = 0;  // dk, dv
  bool gated = false, delta = false;
  int64_t decay_per_head = 1;  // 1 (one g per head) or dk (one per key dimension)
  int64_t beta_heads = 0;      // Hkv or 1
  double scale = 0;

  // Reads and checks the attributes and input types.
  static LinearAttentionForm read(const NodeContext& ctx,
                                  const std::function<const TensorType&(size_t)>& type) {
    LinearAttentionForm f;
    const std::string rule = ctx.get_string("update_rule", "gated_delta");
    if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta") {
      ctx.fail("update_rule must be linear, gated, delta or gated_delta, not '{}'", rule);
    }
    f.gated = rule == "gated" || rule == "gated_delta";
    f.delta = rule == "delta" || rule == "gated_delta";
    f.q_heads = ctx.get_int("q_num_heads");
    f.kv_heads = ctx.get_int("kv_num_heads");
    if (f.q_heads <= 0 || f.kv_heads <= 0 || f.q_heads % f.kv_heads != 0) {
      ctx.fail("q_num_heads ({}) must be a positive multiple of kv_num_heads ({})", f.q_heads,
               f.kv_heads);
    }
    const TensorType& q = type(0);
    const TensorType& k = type(1);
    const TensorType& v = type(2);
    for (const TensorType* t : {&q, &k, &v}) {
      if (t->rank() != 3)
        ctx.fail("query, key and value must be [B, T, heads*size], not {}", type_string(*t));
    }
    if (!is_float(q.dtype)) ctx.fail("query must be floating point, not {}", dtype_name(q.dtype));
    f.batch = q.shape[0];
    f.tokens = q.shape[1];
    if (q.shape[2] % f.q_heads != 0) {
      ctx.fail("query's last dimension {} is not a multiple of q_num_heads {}", q.shape[2],
               f.q_heads);
    }
    f.key_size = q.shape[2] / f.q_heads;
    if (v.shape[2] % f.kv_heads != 0) {
      ctx.fail("value's last dimension {} is not a multiple of kv_num_heads {}", v.shape[2],
               f.kv_heads);
    }
    f.value_size = v.shape[2] / f.kv_heads;
    const Shape key_shape{f.batch, f.tokens, f.kv_heads * f.key_size};
    const Shape value_shape{f.batch, f.tokens, f.kv_heads * f.value_size};
    if (k.shape != key_shape || v.shape[0] != f.batch || v.shape[1] != f.tokens) {
      ctx.fail("key must be {} and value [{}, {}, Hkv*dv] for query {}", shape_string(key_shape),
               f.batch, f.tokens, type_string(q));
    }
    if (ctx.has_input(3)) {
      const Shape state{f.batch, f.kv_heads, f.key_size, f.value_size};
      if (type(3).shape != state) {
        ctx.fail("past_state must be {}, not {}", shape_string(state), type_string(type(3)));
      }
    }
    if (f.gated != ctx.has_input(4)) {
      ctx.fail("update_rule '{}' {} the decay input", rule, f.gated ? "needs" : "takes no");
    }
    if (f.delta != ctx.has_input(5)) {
      ctx.fail("update_rule '{}' {} the beta input", rule, f.delta ? "needs" : "takes no");
    }
    if (f.gated) {
      const Shape& d = type(4).shape;
      if (d.size() != 3 || d[0] != f.batch || d[1] != f.tokens ||
          (d[2] != f.kv_heads && d[2] != f.kv_heads * f.key_size)) {
        ctx.fail("decay must be [{}, {}, Hkv] or [{}, {}, Hkv*dk], not {}", f.batch, f.tokens,
                 f.batch, f.tokens, type_string(type(4)));
      }
      f.decay_per_head = d[2] / f.kv_heads;
    }
    if (f.delta) {
      const Shape& b = type(5).shape;
      if (b.size() != 3 || b[0] != f.batch || b[1] != f.tokens ||
          (b[2] != f.kv_heads && b[2] != 1)) {
        ctx.fail("beta must be [{}, {}, Hkv] or [{}, {}, 1], not {}", f.batch, f.tokens, f.batch,
                 f.tokens, type_string(type(5)));
      }
      f.beta_heads = b[2];
    }
    const double scale = ctx.get_float("scale", 0.0f);
    f.scale = scale != 0 ? scale : 1.0 / std::sqrt(static_cast<double>(f.key_size));
    return f;
  }

  Shape state_shape() const { return {batch, kv_heads, key_size, value_size}; }
};

std::vector<TensorType> linear_attention_shape(const ShapeContext& ctx) {
  auto f = LinearAttentionForm::read(
      ctx, [&](size_t i) -> const TensorType& { return ctx.input_type(i); });
  const DType dtype = ctx.input_type(0).dtype;
  const DType state = ctx.has_input(3) ? ctx.input_type(3).dtype : dtype;
  std::vector<TensorType> types = {{dtype, {f.batch, f.tokens, f.q_heads * f.value_size}},
                                   {state, f.state_shape()}};
  types.resize(ctx.num_outputs());
  return types;
}

std::vector<Tensor> linear_attention_kernel(const KernelContext& ctx) {
  auto f = LinearAttentionForm::read(
      ctx, [&](size_t i) -> const TensorType& { return ctx.input(i).type(); });
  const std::vector<double> q = ctx.input(0).to_double_vector();
  const std::vector<double> k = ctx.input(1).to_double_vector();
  const std::vector<double> v = ctx.input(2).to_double_vector();
  const std::vector<double> decay =
      f.gated ? ctx.input(4).to_double_vector() : std::vector<double>{};
  const std::vector<double> beta =
      f.delta ? ctx.input(5).to_double_vector() : std::vector<double>{};
  std::vector<double> state = ctx.has_input(3) ? ctx.input(3).to_double_vector()
                                               : std::vector<double>(num_elements(f.state_shape()));
  std::vector<double> output(f.batch * f.tokens * f.q_heads * f.value_size);
  const int64_t dk = f.key_size, dv = f.value_size, group = f.q_heads / f.kv_heads;

  for (int64_t b = 0; b < f.batch; ++b) {
    for (int64_t h = 0; h < f.kv_heads; ++h) {
      double* s = &state[((b * f.kv_heads) + h) * dk * dv];  // S[d][m] = s[d * dv + m]
      for (int64_t t = 0; t < f.tokens; ++t) {
        const int64_t token = b * f.tokens + t;
        const double* key = &k[(token * f.kv_heads + h) * dk];
        std::vector<double> val(&v[(token * f.kv_heads + h) * dv],
                                &v[(token * f.kv_heads + h) * dv] + dv);
        if (f.gated) {
          for (int64_t d = 0; d < dk; ++d) {
            const int64_t g =
                (token * f.kv_heads + h) * f.decay_per_head + (f.decay_per_head == 1 ? 0 : d);
            for (int64_t m = 0; m < dv; ++m) s[d * dv + m] *= std::exp(decay[g]);
          }
        }
        if (f.delta) {
          const double rate = beta[token * f.beta_heads + (f.beta_heads == 1 ? 0 : h)];
          for (int64_t m = 0; m < dv; ++m) {
            double retrieved = 0;  // (Sᵀ k)[m]
            for (int64_t d = 0; d < dk; ++d) retrieved += s[d * dv + m] * key[d];
            val[m] = rate * (val[m] - retrieved);
          }
        }
        for (int64_t d = 0; d < dk; ++d) {
          for (int64_t m = 0; m < dv; ++m) s[d * dv + m] += key[d] * val[m];
        }
        for (int64_t qh = h * group; qh < (h + 1) * group; ++qh) {
          const double* query = &q[(token * f.q_heads + qh) * dk];
          double* out = &output[(token * f.q_heads + qh) * dv];
          for (int64_t m = 0; m < dv; ++m) {
            double sum = 0;
            for (int64_t d = 0; d < dk; ++d) sum += query[d] * s[d * dv + m];
            out[m] = f.scale * sum;
          }
        }
      }
    }
  }
  std::vector<Tensor> outputs;
  outputs.push_back(
      Tensor::from_vector<double>(ctx.output_type(0).shape, output).cast(ctx.output_type(0).dtype));
  if (ctx.num_outputs() > 1) {
    outputs.push_back(
        Tensor::from_vector<double>(f.state_shape(), state).cast(ctx.output_type(1).dtype));
  }
  return outputs;
}

}  // namespace

void register_linear_attention_ops(OpRegistry& registry) {
  registry.add({.name = "LinearAttention",
                .min_opset = 27,
                .min_inputs = 3,
                .max_inputs = 6,
                .max_outputs = 2,
                .shape_rule = linear_attention_shape,
                .kernel = linear_attention_kernel});
}

}  // namespace minic
