// Conversions between the storage-only element types and ordinary numbers.
//
// Course module 2 (module 7, quantisation, is about such types). ONNX has eight-, four-
// and two-bit element types that minic stores but does not compute in (see is_storage_only
// in dtype.h). In memory each element is one byte that holds the type's bits in its low
// bits, the upper bits zero:
//
//   f8e4m3fn    s eeee mmm, bias 7, no infinity; NaN is s 1111 111; max 448
//   f8e4m3fnuz  s eeee mmm, bias 8, no infinity, no -0; NaN is 0x80; max 240
//   f8e5m2      s eeeee mm, bias 15, IEEE-like: infinities and NaNs; max 57344
//   f8e5m2fnuz  s eeeee mm, bias 16, no infinity, no -0; NaN is 0x80; max 57344
//   f8e8m0      eeeeeeee, the power of two 2^(e-127); no sign, no zero; NaN is 0xff
//   f4e2m1      s ee m, bias 1, no infinity, no NaN: 0, 0.5, 1, 1.5, 2, 3, 4, 6
//   i4, u4      a 4-bit two's-complement / unsigned integer
//   i2, u2      a 2-bit two's-complement / unsigned integer
//
// These conversions are ONNX's Cast (opset 25), whose test data come from numpy with
// ml_dtypes; the comments in low_precision.cpp give each rule.
//
// Chapter: docs/module2-graph-ir.md#tensors-srctensor
#pragma once

#include "minic/tensor/dtype.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace minic {

// How a conversion to f8e8m0 picks a power of two for a value that lies between two.
enum class RoundMode : uint8_t {
  up,       // the larger (ONNX's default)
  down,     // the smaller
  nearest,  // the nearer by mantissa: 1.5 * 2^e and above go up
};

// "up", "down", "nearest": ONNX's round_mode attribute.
std::optional<RoundMode> round_mode_from_name(std::string_view name);

// The value of an element of a storage-only type from its bits; NaN for the NaN codes.
// Every such value is exact in a float.
float low_precision_to_float(DType type, uint8_t bits);

// The bits of the element of a storage-only type that `value` converts to:
//   float8:  round to nearest, ties to even. A value beyond the largest finite one (and an
//            infinity) becomes +-max with `saturate`; without it, NaN (FN, FNUZ types) or
//            infinity (f8e5m2). NaN stays NaN. The FNUZ types turn -0 into 0.
//   f8e8m0:  as ONNX's reference (numpy_helper.to_float8e8m0): the value, rounded to float,
//            gives its exponent, rounded by `round_mode`; NaN and infinity give NaN.
//   f4e2m1:  round to nearest even, always saturating.
//   int:     truncate toward zero, then keep the low bits (wrap), as ml_dtypes does; NaN,
//            infinities and values beyond int32's range give 0.
// `saturate` and `round_mode` matter only where said.
uint8_t float_to_low_precision(DType type, double value, bool saturate = true,
                               RoundMode round_mode = RoundMode::up);

// The bits of i4, u4, i2 or u2 for an integer: its low 4 or 2 bits (it wraps modulo 2^bits,
// so -9 becomes 7 in i4, as ONNX's Cast from a wider integer does).
uint8_t int_to_low_precision(DType type, int64_t value);

// The value of an i4, u4, i2 or u2 element (sign-extended for the signed ones).
int64_t low_precision_to_int(DType type, uint8_t bits);

// True for the storage-only integer types i4, u4, i2, u2.
bool is_low_precision_int(DType type);

// How many elements ONNX's TensorProto format packs into one byte: 2 for i4, u4 and f4e2m1,
// 4 for i2 and u2, 1 for every other type. Packed elements fill each byte from its lowest
// bits up; minic's memory never packs.
int packed_per_byte(DType type);

}  // namespace minic
