// What the quantisation ops share: affine quantisation of one value, and the granularity of
// a scale and zero point. Course module 7.
//
// Affine quantisation maps a real value x to an integer q of a narrow type:
//   q = saturate(round(x / scale) + zero_point)        x ~ (q - zero_point) * scale
// where round goes to the nearest integer, halves to the even one, and saturate clamps to
// the type's range (int8: [-128, 127], uint8: [0, 255], ...). The scale and zero point come
// at one of three granularities, chosen by the scale's shape (QuantizeLinear's and
// DequantizeLinear's `axis` and `block_size` attributes):
//   per tensor   one scale for every element (a scalar or a one-element vector);
//   per axis     one scale per index along `axis` (a vector of that axis's length);
//   blocked      one scale per `block_size` consecutive elements along `axis` (the scale has
//                x's shape with that axis shortened to ceil(D / block_size)).
//
// Chapter: docs/module7-quantisation.md#1-affine-quantisation-and-the-onnx-ops
#pragma once

#include "minic/ops/compute.h"
#include "minic/ops/op.h"

#include <cmath>

namespace minic {

// The range of an integer type quantised values saturate to: [-128, 127] for i8, [0, 15]
// for u4, ... Only for the integer types of quantisation (8- and 16-bit, i4, u4, i2, u2).
struct QuantRange {
  int64_t min = 0;
  int64_t max = 0;
};
QuantRange quant_range(DType type);

// True for the integer types QuantizeLinear produces and DequantizeLinear reads.
bool is_quant_int(DType type);

// round(value) (halves to even) clamped to `range`.
inline int64_t round_and_saturate(double value, QuantRange range) {
  double rounded = std::nearbyint(value);  // the default rounding mode: halves to even
  if (std::isnan(rounded)) return std::clamp<int64_t>(0, range.min, range.max);
  return static_cast<int64_t>(
      std::clamp(rounded, static_cast<double>(range.min), static_cast<double>(range.max)));
}

// The same in loop IR for a float expression already rounded: `value` clamped to the
// range of `type` (an 8- or 16-bit integer) and converted to it. For a float `value` and a
// range that is the whole type's, the cast alone (it saturates, and sends NaN to 0).
loop::Expr saturate_to(DType type, const loop::Expr& value);

// `value` rounded to the precision of `type`: a float32, float16 or bfloat16 division or
// product computed in double and rounded once gives the result of computing it in that
// type (double has more than twice their precision). Other types: unchanged.
double round_to_precision(double value, DType type);

// Where the scale and zero point of a QuantizeLinear or DequantizeLinear apply.
class QuantGranularity {
 public:
  // Checks the scale's shape (and the zero point's, which must match) against x's, with
  // the node's `axis` and `block_size`; errors name the node.
  static QuantGranularity read(const NodeContext& ctx, const Shape& x, const TensorType& scale,
                               const TensorType* zero_point);

  // The position in the scale (and zero point) of x's element at `index`.
  int64_t parameter_offset(const Shape& index) const;
  // The same in loop IR: the indices into the scale of x's element at `indices`.
  Indices parameter_indices(const Indices& indices) const;

 private:
  enum class Kind { per_tensor, per_axis, blocked };
  Kind kind_ = Kind::per_tensor;
  int64_t axis_ = 0;
  int64_t block_size_ = 0;
  Shape scale_shape_;
};

}  // namespace minic
