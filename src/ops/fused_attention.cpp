// minic.FusedAttention: scaled dot-product attention as one op
// (include/minic/ops/fused_attention.h). Course module 4.
//
// The reference computes each row of scores in double, subtracts its maximum before the
// exponentials (as Softmax does), and rounds Y to float32 once at the end.
//
// The compute rule is six stages, each the formula of one step, so that the attention
// rule (src/schedule/rules/cpu_attention.cpp) can move them all under one loop of rows:
//   scores[.., i, j]  = sum over d of Q[.., i, d] * K_t[.., d, j]          (a reduction)
//   max[.., i, 0]     = max over j of scores[.., i, j] * scale + mask       (a reduction)
//   p[.., i, j]       = exp(scores[.., i, j] * scale + mask - max[.., i, 0])    (kept)
//   sum[.., i, 0]     = sum over j of p[.., i, j]                           (a reduction)
//   context[.., i, e] = sum over j of p[.., i, j] * V[.., j, e]             (a reduction)
//   Y[.., i, e]       = context[.., i, e] / sum[.., i, 0]
// The normalisation is done last, on S x E quotients rather than S x T; p is kept in a
// buffer because two stages read it and each element costs an exponential.
//
// Chapter: docs/module4-schedules.md#9-fused-attention
#include "minic/ops/fused_attention.h"
#include "broadcast.h"
#include "minic/ops/compute.h"
#include "minic/ops/op.h"

#include <algorithm>
#include <cmath>

namespace minic {
namespace {

// The extents of one attention: `batch` independent heads (the product of the leading
// dimensions) of S query rows, D, T keys and E.
struct AttentionShape {
  Shape leading;
  int64_t batch = 1, s = 0, d = 0, t = 0, e = 0;
  Shape scores() const {
    Shape shape = leading;
    shape.push_back(s);
    shape.push_back(t);
    return shape;
  }
};

// The shapes of Q, K_t and V as the header says; an error naming the node otherwise.
AttentionShape attention_shape(const NodeContext& ctx, const TensorType& q, const TensorType& k,
                               const TensorType& v) {
  for (const TensorType* type : {&q, &k, &v}) {
    if (type->dtype != DType::f32) {
      ctx.fail("element type {} is not supported; {} takes float32", dtype_name(type->dtype),
               ctx.node().op);
    }
  }
  if (q.rank() < 2 || k.rank() != q.rank() || v.rank() != q.rank()) {
    ctx.fail("Q {}, K_t {} and V {} must have one rank, 2 or more", type_string(q),
             type_string(k), type_string(v));
  }
  AttentionShape shape;
  shape.leading.assign(q.shape.begin(), q.shape.end() - 2);
  const bool same_leading = std::equal(shape.leading.begin(), shape.leading.end(),
                                       k.shape.begin()) &&
                            std::equal(shape.leading.begin(), shape.leading.end(),
                                       v.shape.begin());
  shape.s = q.shape[q.rank() - 2];
  shape.d = q.shape.back();
  shape.t = k.shape.back();
  shape.e = v.shape.back();
  if (!same_leading || k.shape[k.rank() - 2] != shape.d || v.shape[v.rank() - 2] != shape.t) {
    ctx.fail("Q {}, K_t {} and V {} do not fit: they must be [..., S, D], [..., D, T] and "
             "[..., T, E] with the same leading dimensions", type_string(q), type_string(k),
             type_string(v));
  }
  for (int64_t extent : shape.leading) shape.batch *= extent;
  return shape;
}

// The mask, if present, must be float32 and broadcast to the scores' shape.
void check_mask(const NodeContext& ctx, const TensorType& mask, const Shape& scores) {
  if (mask.dtype != DType::f32) {
    ctx.fail("the mask is {}; it must be float32", type_string(mask));
  }
  if (!broadcasts_to(mask.shape, scores)) {
    ctx.fail("the mask {} does not broadcast to the scores' shape {}", type_string(mask),
             shape_string(scores));
  }
}

double scale_of(const NodeContext& ctx) {
  if (!ctx.has_attr("scale")) ctx.fail("the attribute 'scale' is required");
  return ctx.get_float("scale", 1.0f);
}

std::vector<TensorType> fused_attention_shape(const ShapeContext& ctx) {
  AttentionShape shape =
      attention_shape(ctx, ctx.input_type(0), ctx.input_type(1), ctx.input_type(2));
  if (ctx.has_input(3)) check_mask(ctx, ctx.input_type(3), shape.scores());
  scale_of(ctx);
  Shape y = shape.leading;
  y.push_back(shape.s);
  y.push_back(shape.e);
  return {{DType::f32, y}};
}

std::vector<Tensor> fused_attention_kernel(const KernelContext& ctx) {
  const Tensor& q = ctx.input(0);
  const Tensor& k = ctx.input(1);
  const Tensor& v = ctx.input(2);
  const AttentionShape shape = attention_shape(
      ctx, {q.dtype(), q.shape()}, {k.dtype(), k.shape()}, {v.dtype(), v.shape()});
  const double scale = scale_of(ctx);
  const Shape scores_shape = shape.scores();
  // The mask's element for score (head, i, j): its offset through broadcast strides.
  const Tensor* mask = ctx.has_input(3) ? &ctx.input(3) : nullptr;
  const Shape mask_strides =
      mask ? broadcast_strides(mask->shape(), scores_shape) : Shape(scores_shape.size(), 0);
  Tensor out = ctx.make_output(0);
  auto qv = q.values<float>();
  auto kv = k.values<float>();
  auto vv = v.values<float>();
  auto yv = out.values<float>();
  const int64_t s = shape.s, d = shape.d, t = shape.t, e = shape.e;
  std::vector<double> row(static_cast<size_t>(t));
  Shape at(scores_shape.size(), 0);  // the scores' index of (head, i, j), for the mask
  for (int64_t head = 0; head < shape.batch; ++head) {
    // The head's leading indices, for the mask's broadcast offset.
    for (int64_t axis = static_cast<int64_t>(shape.leading.size()) - 1, rest = head; axis >= 0;
         --axis) {
      at[axis] = rest % shape.leading[axis];
      rest /= shape.leading[axis];
    }
    const float* qh = qv.data() + head * s * d;
    const float* kh = kv.data() + head * d * t;
    const float* vh = vv.data() + head * t * e;
    float* yh = yv.data() + head * s * e;
    for (int64_t i = 0; i < s; ++i) {
      at[at.size() - 2] = i;
      double max = -INFINITY;
      for (int64_t j = 0; j < t; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < d; ++c) dot += double(qh[i * d + c]) * kh[c * t + j];
        at.back() = j;
        row[j] = dot * scale + (mask ? mask->values<float>()[offset_of(at, mask_strides)] : 0.0);
        max = std::max(max, row[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < t; ++j) {
        row[j] = std::exp(row[j] - max);
        sum += row[j];
      }
      for (int64_t c = 0; c < e; ++c) {
        double value = 0;
        for (int64_t j = 0; j < t; ++j) value += row[j] * vh[j * e + c];
        yh[i * e + c] = static_cast<float>(value / sum);
      }
    }
  }
  return {std::move(out)};
}

std::vector<ComputeTensor> fused_attention_compute(const ComputeContext& ctx) {
  const ComputeTensor& q = ctx.input(0);
  const ComputeTensor& k = ctx.input(1);
  const ComputeTensor& v = ctx.input(2);
  const AttentionShape shape =
      attention_shape(ctx, {q.dtype(), q.shape()}, {k.dtype(), k.shape()},
                      {v.dtype(), v.shape()});
  const Shape scores_shape = shape.scores();
  const size_t rank = scores_shape.size();
  Shape row_shape = scores_shape;
  row_shape.back() = 1;
  const DType f32 = DType::f32;
  const loop::Expr scale = constant(f32, scale_of(ctx));
  // The indices with the last one replaced: (.., i, j) from (.., i, x) and j.
  auto with_last = [](Indices at, const loop::Expr& last) {
    at.back() = last;
    return at;
  };
  const std::string name = stage_name(ctx);
  ComputeTensor scores = ctx.reduce(name + "_scores", {f32, scores_shape}, {shape.d},
                                    Reducer::sum, [&](const Indices& i, const Indices& r) {
    Indices qi = with_last(i, r[0]);  // Q[.., i, d]
    Indices ki = i;                   // K_t[.., d, j]
    ki[rank - 2] = r[0];
    return q(qi) * k(ki);
  });
  // The scaled, masked score at (.., i, j).
  auto biased = [&](const Indices& at) {
    loop::Expr value = scores(at) * scale;
    if (ctx.has_input(3)) {
      const ComputeTensor& mask = ctx.input(3);
      value = value + mask(broadcast_indices(at, mask.shape(), scores_shape));
    }
    return value;
  };
  ComputeTensor max = ctx.reduce(name + "_max", {f32, row_shape}, {shape.t}, Reducer::max,
                                 [&](const Indices& i, const Indices& r) {
    return biased(with_last(i, r[0]));
  });
  ComputeTensor p = ctx.keep(ctx.compute(name + "_p", {f32, scores_shape}, [&](const Indices& i) {
    return call("exp", {biased(i) - max(with_last(i, index(0)))});
  }));
  ComputeTensor sum = ctx.reduce(name + "_sum", {f32, row_shape}, {shape.t}, Reducer::sum,
                                 [&](const Indices& i, const Indices& r) {
    return p(with_last(i, r[0]));
  });
  const TensorType& type = ctx.output_type(0);
  ComputeTensor context = ctx.reduce(name + "_context", type, {shape.t}, Reducer::sum,
                                     [&](const Indices& i, const Indices& r) {
    Indices vi = i;  // V[.., j, e]
    vi[rank - 2] = r[0];
    return p(with_last(i, r[0])) * v(vi);
  });
  return {ctx.compute(name, type, [&](const Indices& i) {
    return loop::Div::make(context(i), sum(with_last(i, index(0))));
  })};
}

}  // namespace

void register_fused_attention_ops(OpRegistry& registry) {
  registry.add({.name = kFusedAttentionOp,
                .min_inputs = 3,
                .max_inputs = 4,
                .fusion = FusionKind::opaque,
                .shape_rule = fused_attention_shape,
                .kernel = fused_attention_kernel,
                .compute = fused_attention_compute});
}

}  // namespace minic
