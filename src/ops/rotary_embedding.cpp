// RotaryEmbedding: rotary positional embeddings (RoPE), rotating pairs of each head's
// elements by an angle that depends on the token's position. Course module 2.
//
// X is 4-D, [batch, heads, sequence, head_size], or 3-D, [batch, sequence, heads *
// head_size] with the head count in num_heads. The first R = rotary_embedding_dim
// elements of each head (all of them when it is 0) form R/2 pairs (x1, x2): elements
// (k, k + R/2) by default, (2k, 2k + 1) with interleaved = 1. With c and s the cosine
// and sine of the token's position for pair k,
//
//   y1 = c * x1 - s * x2
//   y2 = s * x1 + c * x2
//
// and the head's elements past R are copied. The caches are [max_position, R/2] and read
// at row position_ids[batch][token], or, without position_ids, [batch, sequence, R/2] and
// read at [batch][token]. The kernel computes in double and rounds once.
// Fusion kind: opaque (each output element reads its pair and a gathered cache element).
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/op.h"

namespace minic {

namespace {

enum RotaryInput : size_t { kX, kCos, kSin, kPositionIds };

// The layout of X as heads of pairs, and how far it is rotated.
struct RotaryDims {
  int64_t batch = 0;
  int64_t heads = 0;
  int64_t sequence = 0;
  int64_t head_size = 0;
  int64_t rotary = 0;  // R, even and at most head_size
  bool three_d = false;

  // The flat offset of element e of head h of token s in batch b.
  int64_t offset(int64_t b, int64_t h, int64_t s, int64_t e) const {
    if (three_d) return ((b * sequence + s) * heads + h) * head_size + e;
    return ((b * heads + h) * sequence + s) * head_size + e;
  }
};

// The dims from X's shape and the attributes; errors name what does not fit.
RotaryDims read_dims(const NodeContext& ctx, const Shape& x) {
  RotaryDims d;
  if (x.size() != 3 && x.size() != 4) {
    ctx.fail("input X must be 3-D or 4-D, not {}", shape_string(x));
  }
  d.three_d = x.size() == 3;
  d.batch = x[0];
  if (d.three_d) {
    if (!ctx.has_attr("num_heads")) ctx.fail("a 3-D input X needs the attribute num_heads");
    d.heads = ctx.get_int("num_heads");
    if (d.heads <= 0 || x[2] % d.heads != 0) {
      ctx.fail("the hidden size of X {} is not a multiple of num_heads {}", shape_string(x),
               d.heads);
    }
    d.sequence = x[1];
    d.head_size = x[2] / d.heads;
  } else {
    d.heads = x[1];
    d.sequence = x[2];
    d.head_size = x[3];
    if (ctx.has_attr("num_heads") && ctx.get_int("num_heads") != d.heads) {
      ctx.fail("num_heads {} disagrees with the 4-D X {}", ctx.get_int("num_heads"),
               shape_string(x));
    }
  }
  const int64_t rotary = ctx.get_int("rotary_embedding_dim", 0);
  d.rotary = rotary == 0 ? d.head_size : rotary;
  if (d.rotary < 0 || d.rotary > d.head_size || d.rotary % 2 != 0) {
    ctx.fail("the rotated size {} must be even and between 0 and the head size {}", d.rotary,
             d.head_size);
  }
  const int64_t interleaved = ctx.get_int("interleaved", 0);
  if (interleaved != 0 && interleaved != 1) {
    ctx.fail("interleaved must be 0 or 1, not {}", interleaved);
  }
  return d;
}

std::vector<TensorType> rotary_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(kX);
  if (x.dtype != DType::f32 && x.dtype != DType::f16 && x.dtype != DType::bf16) {
    ctx.fail("input X is {}; RotaryEmbedding takes float, float16 or bfloat16", type_string(x));
  }
  const RotaryDims d = read_dims(ctx, x.shape);
  const bool has_ids = ctx.has_input(kPositionIds);
  // With position_ids the caches are [max_position, R/2], any number of rows.
  const Shape cache = has_ids ? Shape{-1, d.rotary / 2} : Shape{d.batch, d.sequence, d.rotary / 2};
  const std::string expected = has_ids ? fmt::format("{}[max_position,{}]", dtype_name(x.dtype),
                                                     d.rotary / 2)
                                       : type_string({x.dtype, cache});
  for (size_t input : {kCos, kSin}) {
    const TensorType& type = ctx.input_type(input);
    bool fits = type.dtype == x.dtype && type.rank() == static_cast<int64_t>(cache.size());
    for (size_t i = 0; fits && i < cache.size(); ++i) {
      fits = cache[i] == -1 || type.shape[i] == cache[i];
    }
    if (!fits) {
      ctx.fail("{} is {}; it must be {}", input == kCos ? "cos_cache" : "sin_cache",
               type_string(type), expected);
    }
  }
  if (ctx.input_type(kCos).shape != ctx.input_type(kSin).shape) {
    ctx.fail("cos_cache {} and sin_cache {} differ in shape", type_string(ctx.input_type(kCos)),
             type_string(ctx.input_type(kSin)));
  }
  if (ctx.has_input(kPositionIds)) {
    const TensorType& ids = ctx.input_type(kPositionIds);
    if (ids.dtype != DType::i64 || ids.shape != Shape{d.batch, d.sequence}) {
      ctx.fail("position_ids must be i64[{}, {}], not {}", d.batch, d.sequence, type_string(ids));
    }
  }
  return {x};
}

std::vector<Tensor> rotary_kernel(const KernelContext& ctx) {
  const Tensor& x_tensor = ctx.input(kX);
  const RotaryDims d = read_dims(ctx, x_tensor.shape());
  const bool interleaved = ctx.get_int("interleaved", 0) == 1;
  const std::vector<double> x = x_tensor.to_double_vector();
  const std::vector<double> cos = ctx.input(kCos).to_double_vector();
  const std::vector<double> sin = ctx.input(kSin).to_double_vector();
  const int64_t half = d.rotary / 2;
  std::vector<int64_t> positions;
  if (ctx.has_input(kPositionIds)) {
    positions = ctx.input(kPositionIds).to_int64_vector();
    const int64_t max_position = ctx.input(kCos).shape()[0];
    for (int64_t p : positions) {
      if (p < 0 || p >= max_position) {
        ctx.fail("position id {} is outside the caches' {} rows", p, max_position);
      }
    }
  }
  std::vector<double> y = x;  // the elements past the rotated part stay as they are
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t s = 0; s < d.sequence; ++s) {
      // The cache row of this token.
      const int64_t row = positions.empty() ? b * d.sequence + s : positions[b * d.sequence + s];
      for (int64_t h = 0; h < d.heads; ++h) {
        for (int64_t k = 0; k < half; ++k) {
          const int64_t first = d.offset(b, h, s, interleaved ? 2 * k : k);
          const int64_t second = d.offset(b, h, s, interleaved ? 2 * k + 1 : k + half);
          const double c = cos[row * half + k];
          const double sn = sin[row * half + k];
          y[first] = c * x[first] - sn * x[second];
          y[second] = sn * x[first] + c * x[second];
        }
      }
    }
  }
  return single_output(Tensor::from_vector<double>(x_tensor.shape(), y).cast(x_tensor.dtype()));
}

}  // namespace

void register_rotary_embedding_ops(OpRegistry& registry) {
  registry.add({.name = "RotaryEmbedding",
                .min_opset = 23,
                .min_inputs = 3,
                .max_inputs = 4,
                .fusion = FusionKind::opaque,
                .shape_rule = rotary_shape,
                .kernel = rotary_kernel});
}

}  // namespace minic
