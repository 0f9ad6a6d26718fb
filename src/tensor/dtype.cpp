// Element types: the table of names and sizes, and the 16-bit float formats' conversions
// (include/minic/tensor/dtype.h). Course module 2.
//
// Chapter: docs/module2-graph-ir.md#tensors-srctensor
#include "minic/tensor/dtype.h"

#include <array>
#include <bit>
#include <cmath>

namespace minic {

namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;
  int size;
};

// Indexed by the enumerator's value, so the order follows the enum. The storage-only types
// take one byte an element in memory (only the TensorProto format packs the 4- and 2-bit ones).
constexpr std::array<DTypeInfo, 23> kDTypes = {{
    {DType::f32, "f32", 4},  {DType::f64, "f64", 8},  {DType::f16, "f16", 2},
    {DType::bf16, "bf16", 2}, {DType::i8, "i8", 1},    {DType::i16, "i16", 2},
    {DType::i32, "i32", 4},  {DType::i64, "i64", 8},  {DType::u8, "u8", 1},
    {DType::u16, "u16", 2},  {DType::u32, "u32", 4},  {DType::u64, "u64", 8},
    {DType::boolean, "bool", 1},
    {DType::f8e4m3fn, "f8e4m3fn", 1}, {DType::f8e4m3fnuz, "f8e4m3fnuz", 1},
    {DType::f8e5m2, "f8e5m2", 1},     {DType::f8e5m2fnuz, "f8e5m2fnuz", 1},
    {DType::f8e8m0, "f8e8m0", 1},     {DType::f4e2m1, "f4e2m1", 1},
    {DType::i4, "i4", 1},  {DType::u4, "u4", 1},  {DType::i2, "i2", 1},  {DType::u2, "u2", 1},
}};

const DTypeInfo& info(DType type) {
  size_t index = static_cast<size_t>(type);
  MINIC_CHECK(index < kDTypes.size() && kDTypes[index].type == type);
  return kDTypes[index];
}

}  // namespace

std::string_view dtype_name(DType type) { return info(type).name; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const DTypeInfo& entry : kDTypes) {
    if (entry.name == name) return entry.type;
  }
  return std::nullopt;
}

int dtype_size(DType type) { return info(type).size; }

bool is_float(DType type) {
  return type == DType::f32 || type == DType::f64 || type == DType::f16 || type == DType::bf16;
}

bool is_signed_int(DType type) {
  return type == DType::i8 || type == DType::i16 || type == DType::i32 || type == DType::i64;
}

bool is_unsigned_int(DType type) {
  return type == DType::u8 || type == DType::u16 || type == DType::u32 || type == DType::u64;
}

bool is_storage_only(DType type) {
  return type == DType::f8e4m3fn || type == DType::f8e4m3fnuz || type == DType::f8e5m2 ||
         type == DType::f8e5m2fnuz || type == DType::f8e8m0 || type == DType::f4e2m1 ||
         type == DType::i4 || type == DType::u4 || type == DType::i2 || type == DType::u2;
}

void fail_storage_only(DType type) {
  fail("element type {} is storage-only in minic: only Cast, CastLike and data movement "
       "(Reshape, Transpose, Gather, ...) take it; Cast it to f32 to compute with it",
       dtype_name(type));
}

// float32 → float16 with round-to-nearest-even, handling subnormals, infinities and NaN.
Half::Half(float value) {
  uint32_t f = std::bit_cast<uint32_t>(value);
  uint32_t sign = (f >> 16) & 0x8000u;
  uint32_t exponent = (f >> 23) & 0xffu;
  uint32_t mantissa = f & 0x7fffffu;
  if (exponent == 0xff) {  // infinity or NaN
    bits = static_cast<uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
    return;
  }
  int e = static_cast<int>(exponent) - 127 + 15;
  if (e >= 31) {  // overflow: infinity
    bits = static_cast<uint16_t>(sign | 0x7c00u);
    return;
  }
  if (e <= 0) {  // subnormal half (or zero)
    if (e < -10) {
      bits = static_cast<uint16_t>(sign);
      return;
    }
    mantissa |= 0x800000u;  // the implicit leading one
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half_mantissa = mantissa >> shift;
    uint32_t remainder = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (half_mantissa & 1u))) ++half_mantissa;
    bits = static_cast<uint16_t>(sign | half_mantissa);
    return;
  }
  uint32_t half = sign | (static_cast<uint32_t>(e) << 10) | (mantissa >> 13);
  uint32_t remainder = mantissa & 0x1fffu;
  if (remainder > 0x1000u || (remainder == 0x1000u && (half & 1u))) ++half;  // may carry into exponent: correct
  bits = static_cast<uint16_t>(half);
}

Half::operator float() const {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

BFloat16::BFloat16(float value) {
  uint32_t f = std::bit_cast<uint32_t>(value);
  if ((f & 0x7fffffffu) > 0x7f800000u) {  // NaN stays a quiet NaN
    bits = static_cast<uint16_t>((f >> 16) | 0x40u);
    return;
  }
  uint32_t rounding = 0x7fffu + ((f >> 16) & 1u);
  bits = static_cast<uint16_t>((f + rounding) >> 16);
}

BFloat16::operator float() const { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

}  // namespace minic
