// Conversions between the storage-only element types and ordinary numbers. Course module 2.
//
// The float8 and float4 types share one description (FloatFormat): mantissa bits, exponent
// bias, largest finite value, and how the format spells its special values. Decoding reads
// the sign, exponent and mantissa fields. Encoding a number takes three steps:
//   1. round its magnitude to the format's grid with ties to even: the grid step in the
//      binade of the number is 2^(e - mantissa_bits), with e never below the smallest normal
//      exponent, so that the subnormals share the step of the smallest binade;
//   2. a rounded magnitude above the largest finite value overflows: to +-max (saturating),
//      or to infinity or NaN, as the format allows;
//   3. write the exponent and mantissa fields of the rounded magnitude, and the sign.
// Every division and multiplication is by a power of two, so steps 1 and 3 are exact in
// double arithmetic. The rules and their odd corners (NaN to f4e2m1, e8m0 rounding, floats to
// int4 beyond the int32 range) reproduce numpy with ml_dtypes and ONNX's reference
// implementation, which made the ONNX test data.
//
// Chapter: docs/module2-graph-ir.md#tensors-srctensor
#include "minic/tensor/low_precision.h"

#include <bit>
#include <cmath>
#include <limits>

namespace minic {

namespace {

// How a small float format spells the values that are not finite numbers.
enum class Specials : uint8_t {
  ieee,          // exponent all ones: infinity with mantissa 0, else NaN (f8e5m2)
  all_ones_nan,  // no infinity; exponent and mantissa all ones is NaN (f8e4m3fn)
  fnuz,          // no infinity and no -0: the code of -0, 0x80, is the one NaN
  none,          // no infinity and no NaN (f4e2m1)
};

struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  double max;  // the largest finite value
  Specials specials;

  uint8_t sign_mask() const { return static_cast<uint8_t>(1u << (exponent_bits + mantissa_bits)); }
  int exponent_max() const { return (1 << exponent_bits) - 1; }  // the field all ones
  int mantissa_max() const { return (1 << mantissa_bits) - 1; }
  int min_exponent() const { return 1 - bias; }  // of the normal numbers
};

constexpr FloatFormat kF8E4M3FN{4, 3, 7, 448.0, Specials::all_ones_nan};
constexpr FloatFormat kF8E4M3FNUZ{4, 3, 8, 240.0, Specials::fnuz};
constexpr FloatFormat kF8E5M2{5, 2, 15, 57344.0, Specials::ieee};
constexpr FloatFormat kF8E5M2FNUZ{5, 2, 16, 57344.0, Specials::fnuz};
constexpr FloatFormat kF4E2M1{2, 1, 1, 6.0, Specials::none};

const FloatFormat& float_format(DType type) {
  switch (type) {
    case DType::f8e4m3fn: return kF8E4M3FN;
    case DType::f8e4m3fnuz: return kF8E4M3FNUZ;
    case DType::f8e5m2: return kF8E5M2;
    case DType::f8e5m2fnuz: return kF8E5M2FNUZ;
    case DType::f4e2m1: return kF4E2M1;
    default: break;
  }
  internal_error("float_format: not a float8 or float4 type", __FILE__, __LINE__);
}

float decode_float(const FloatFormat& format, uint8_t bits) {
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  constexpr float kInfinity = std::numeric_limits<float>::infinity();
  const int mantissa_max = format.mantissa_max();
  const int exponent_max = format.exponent_max();
  const bool negative = (bits & format.sign_mask()) != 0;
  const int exponent = (bits >> format.mantissa_bits) & exponent_max;
  const int mantissa = bits & mantissa_max;
  if (format.specials == Specials::fnuz && bits == format.sign_mask()) return kNaN;
  if (format.specials == Specials::all_ones_nan && exponent == exponent_max &&
      mantissa == mantissa_max) {
    return negative ? -kNaN : kNaN;
  }
  if (format.specials == Specials::ieee && exponent == exponent_max) {
    if (mantissa != 0) return negative ? -kNaN : kNaN;
    return negative ? -kInfinity : kInfinity;
  }
  // Subnormal: 0.mantissa * 2^min_exponent; normal: 1.mantissa * 2^(exponent - bias).
  float magnitude =
      exponent == 0
          ? std::ldexp(static_cast<float>(mantissa), format.min_exponent() - format.mantissa_bits)
          : std::ldexp(static_cast<float>(mantissa + mantissa_max + 1),
                       exponent - format.bias - format.mantissa_bits);
  return negative ? -magnitude : magnitude;
}

// Step 1: a positive finite magnitude rounded to the format's grid, ties to even.
double round_to_grid(const FloatFormat& format, double magnitude) {
  int exponent = 0;
  std::frexp(magnitude, &exponent);  // magnitude = fraction * 2^exponent, fraction in [0.5, 1)
  int binade = std::max(exponent - 1, format.min_exponent());
  double step = std::ldexp(1.0, binade - format.mantissa_bits);
  double steps = magnitude / step;
  double whole = std::floor(steps);
  double rest = steps - whole;
  if (rest > 0.5 || (rest == 0.5 && std::fmod(whole, 2.0) != 0)) whole += 1;
  return whole * step;
}

// Step 3: the exponent and mantissa fields of a magnitude that lies on the grid.
uint8_t magnitude_bits(const FloatFormat& format, double magnitude) {
  if (magnitude == 0) return 0;
  int exponent = 0;
  std::frexp(magnitude, &exponent);
  int binade = exponent - 1;
  if (binade < format.min_exponent()) {  // subnormal: the mantissa counts grid steps
    return static_cast<uint8_t>(
        std::ldexp(magnitude, format.mantissa_bits - format.min_exponent()));
  }
  double fraction = std::ldexp(magnitude, -binade) - 1;  // in [0, 1)
  int mantissa = static_cast<int>(std::ldexp(fraction, format.mantissa_bits));
  return static_cast<uint8_t>(((binade + format.bias) << format.mantissa_bits) | mantissa);
}

uint8_t nan_bits(const FloatFormat& format, uint8_t sign) {
  switch (format.specials) {
    case Specials::ieee:  // the quiet NaN: exponent all ones, the top mantissa bit set
      return static_cast<uint8_t>(sign | (format.exponent_max() << format.mantissa_bits) |
                                  (1 << (format.mantissa_bits - 1)));
    case Specials::all_ones_nan:
      return static_cast<uint8_t>(sign | (format.exponent_max() << format.mantissa_bits) |
                                  format.mantissa_max());
    case Specials::fnuz:
      return format.sign_mask();
    case Specials::none:
      // f4e2m1 has no NaN. ml_dtypes gives a zero of the opposite sign (NaN gives -0 and
      // -NaN gives 0); ONNX's test data expect the same.
      return static_cast<uint8_t>(sign ^ format.sign_mask());
  }
  return 0;
}

uint8_t encode_float(const FloatFormat& format, double value, bool saturate) {
  const uint8_t sign = std::signbit(value) ? format.sign_mask() : uint8_t{0};
  if (std::isnan(value)) return nan_bits(format, sign);
  double magnitude = std::fabs(value);
  double rounded = std::isinf(magnitude) ? magnitude : round_to_grid(format, magnitude);
  if (rounded > format.max) {  // step 2: overflow
    if (saturate || format.specials == Specials::none) {
      return static_cast<uint8_t>(sign | magnitude_bits(format, format.max));
    }
    if (format.specials == Specials::ieee) {  // infinity: exponent all ones, mantissa 0
      return static_cast<uint8_t>(sign | (format.exponent_max() << format.mantissa_bits));
    }
    return nan_bits(format, sign);
  }
  if (rounded == 0 && format.specials == Specials::fnuz) return 0;  // no -0
  return static_cast<uint8_t>(sign | magnitude_bits(format, rounded));
}

// f8e8m0, as ONNX's numpy_helper.to_float8e8m0: the float's biased exponent is the code,
// moved up by one when the mantissa calls for it. The sign is ignored (ONNX leaves negative
// inputs unspecified).
uint8_t encode_e8m0(double value, bool saturate, RoundMode round_mode) {
  uint32_t bits = std::bit_cast<uint32_t>(static_cast<float>(value));
  uint32_t exponent = (bits >> 23) & 0xffu;
  uint32_t mantissa = bits & 0x7fffffu;
  if (exponent == 0xffu) return 0xff;  // NaN and infinity
  bool round_up = false;
  switch (round_mode) {
    case RoundMode::up:
      round_up = mantissa != 0;
      break;
    case RoundMode::down:
      break;
    case RoundMode::nearest: {
      // The top mantissa bit (one half) decides; an exact half goes up for normal numbers
      // and stays down for subnormal ones, where it is 2^-127 itself.
      bool half = (mantissa & 0x400000u) != 0;
      bool below_half = (mantissa & 0x3fffffu) != 0;
      round_up = half && (below_half || exponent > 0);
      break;
    }
  }
  if (round_up && saturate && exponent == 0xfeu) round_up = false;  // stay at 2^127
  return static_cast<uint8_t>(exponent + (round_up ? 1 : 0));  // 0xfe + 1 is NaN
}

int int_bits(DType type) {
  MINIC_CHECK(is_low_precision_int(type));
  return type == DType::i4 || type == DType::u4 ? 4 : 2;
}

}  // namespace

std::optional<RoundMode> round_mode_from_name(std::string_view name) {
  if (name == "up") return RoundMode::up;
  if (name == "down") return RoundMode::down;
  if (name == "nearest") return RoundMode::nearest;
  return std::nullopt;
}

bool is_low_precision_int(DType type) {
  return type == DType::i4 || type == DType::u4 || type == DType::i2 || type == DType::u2;
}

int packed_per_byte(DType type) {
  if (type == DType::f4e2m1) return 2;
  if (is_low_precision_int(type)) return 8 / int_bits(type);
  return 1;
}

float low_precision_to_float(DType type, uint8_t bits) {
  if (is_low_precision_int(type)) return static_cast<float>(low_precision_to_int(type, bits));
  if (type == DType::f8e8m0) {
    if (bits == 0xff) return std::numeric_limits<float>::quiet_NaN();
    return std::ldexp(1.0f, static_cast<int>(bits) - 127);
  }
  return decode_float(float_format(type), bits);
}

uint8_t float_to_low_precision(DType type, double value, bool saturate, RoundMode round_mode) {
  if (is_low_precision_int(type)) {
    // ml_dtypes converts through int32: NaN, infinities and values outside int32's range
    // give 0 (x86's INT32_MIN, whose low bits are 0).
    if (std::isnan(value) || value < -2147483648.0 || value > 2147483647.0) return 0;
    return int_to_low_precision(type, static_cast<int64_t>(value));  // truncates toward zero
  }
  if (type == DType::f8e8m0) return encode_e8m0(value, saturate, round_mode);
  return encode_float(float_format(type), value, saturate);
}

uint8_t int_to_low_precision(DType type, int64_t value) {
  uint64_t mask = (uint64_t{1} << int_bits(type)) - 1;
  return static_cast<uint8_t>(static_cast<uint64_t>(value) & mask);
}

int64_t low_precision_to_int(DType type, uint8_t bits) {
  int width = int_bits(type);
  int64_t value = bits & ((1 << width) - 1);
  bool is_signed = type == DType::i4 || type == DType::i2;
  if (is_signed && value >= (int64_t{1} << (width - 1))) value -= int64_t{1} << width;
  return value;
}

}  // namespace minic
