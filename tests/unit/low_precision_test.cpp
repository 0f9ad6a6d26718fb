// Unit tests for the storage-only element types: conversions (low_precision.h), Tensor casts,
// and their TensorProto form, packed for the 4- and 2-bit types. Course module 7.
//
// Every expected code below is worked out by hand from the formats' layouts (sign, exponent,
// mantissa, bias) in low_precision.h; the rules for the odd corners (NaN to f4e2m1, e8m0
// rounding, floats to int4) are the ones of ONNX's test data, made with numpy and ml_dtypes.
#include "minic/frontend/onnx.h"
#include "minic/tensor/low_precision.h"
#include "minic/tensor/tensor.h"
#include "minic/support/file.h"

#include "onnx_test_util.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

using namespace minic;
using namespace minic::testing;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr float kInfFloat = std::numeric_limits<float>::infinity();

// A tensor of a storage-only type from the bits of its elements.
Tensor from_bits(DType type, Shape shape, const std::vector<uint8_t>& bits) {
  Tensor tensor(type, std::move(shape));
  REQUIRE(static_cast<int64_t>(bits.size()) == tensor.num_elements());
  if (!bits.empty()) std::memcpy(tensor.bytes().data(), bits.data(), bits.size());
  return tensor;
}

std::vector<uint8_t> bits_of(const Tensor& tensor) {
  std::vector<uint8_t> bits(tensor.bytes().size());
  if (!bits.empty()) std::memcpy(bits.data(), tensor.bytes().data(), bits.size());
  return bits;
}

struct Decoding {
  DType type;
  uint8_t bits;
  double value;  // NaN for a NaN code
};

struct Encoding {
  DType type;
  double value;
  bool saturate;
  uint8_t bits;
};

}  // namespace

TEST_CASE("storage-only codes decode to their values", "[low_precision]") {
  const std::vector<Decoding> table = {
      // f8e4m3fn: bias 7; subnormals step 2^-9; s.1111.111 is NaN.
      {DType::f8e4m3fn, 0x38, 1.0},           {DType::f8e4m3fn, 0x01, std::ldexp(1, -9)},
      {DType::f8e4m3fn, 0x08, std::ldexp(1, -6)}, {DType::f8e4m3fn, 0x7e, 448},
      {DType::f8e4m3fn, 0xfe, -448},          {DType::f8e4m3fn, 0x7f, kNaN},
      {DType::f8e4m3fn, 0xff, kNaN},
      // f8e4m3fnuz: bias 8; 0x80 is the NaN.
      {DType::f8e4m3fnuz, 0x40, 1.0},         {DType::f8e4m3fnuz, 0x7f, 240},
      {DType::f8e4m3fnuz, 0x01, std::ldexp(1, -10)}, {DType::f8e4m3fnuz, 0x80, kNaN},
      // f8e5m2: bias 15, IEEE specials.
      {DType::f8e5m2, 0x3c, 1.0},             {DType::f8e5m2, 0x7b, 57344},
      {DType::f8e5m2, 0x7c, kInf},            {DType::f8e5m2, 0xfc, -kInf},
      {DType::f8e5m2, 0x7d, kNaN},            {DType::f8e5m2, 0x01, std::ldexp(1, -16)},
      // f8e5m2fnuz: bias 16.
      {DType::f8e5m2fnuz, 0x40, 1.0},         {DType::f8e5m2fnuz, 0x7f, 57344},
      {DType::f8e5m2fnuz, 0x80, kNaN},        {DType::f8e5m2fnuz, 0x01, std::ldexp(1, -17)},
      // f8e8m0: 2^(e-127).
      {DType::f8e8m0, 0x7f, 1.0},             {DType::f8e8m0, 0x00, std::ldexp(1, -127)},
      {DType::f8e8m0, 0xfe, std::ldexp(1, 127)}, {DType::f8e8m0, 0xff, kNaN},
      // f4e2m1: the eight magnitudes, and the sign.
      {DType::f4e2m1, 0x1, 0.5},              {DType::f4e2m1, 0x3, 1.5},
      {DType::f4e2m1, 0x5, 3},                {DType::f4e2m1, 0x7, 6},
      {DType::f4e2m1, 0xf, -6},
      // integers: two's complement in 4 or 2 bits.
      {DType::i4, 0x7, 7},                    {DType::i4, 0x8, -8},
      {DType::i4, 0xf, -1},                   {DType::u4, 0xf, 15},
      {DType::i2, 0x2, -2},                   {DType::i2, 0x1, 1},
      {DType::u2, 0x3, 3},
  };
  for (const Decoding& entry : table) {
    INFO(dtype_name(entry.type) << " code " << int(entry.bits));
    double value = low_precision_to_float(entry.type, entry.bits);
    if (std::isnan(entry.value)) {
      REQUIRE(std::isnan(value));
    } else {
      REQUIRE(value == entry.value);
    }
  }
  // The zeros keep their sign, but for the FNUZ types, whose 0x80 is NaN.
  REQUIRE(std::signbit(low_precision_to_float(DType::f8e4m3fn, 0x80)));
  REQUIRE(low_precision_to_float(DType::f8e4m3fn, 0x80) == 0);
  REQUIRE(std::signbit(low_precision_to_float(DType::f4e2m1, 0x8)));
  REQUIRE(low_precision_to_int(DType::i4, 0x8) == -8);
}

TEST_CASE("floats round to nearest even and saturate as ONNX's Cast", "[low_precision]") {
  const std::vector<Encoding> table = {
      // f8e4m3fn. 1 + 1/16 lies halfway between 1 (mantissa 000) and 1.125 (001): even is 1.
      {DType::f8e4m3fn, 1.0625, true, 0x38},
      // 1.1875 lies halfway between 1.125 (001) and 1.25 (010): even is 1.25.
      {DType::f8e4m3fn, 1.1875, true, 0x3a},
      // Subnormals step 2^-9: 2^-10 is halfway to 0 (even), 3 * 2^-10 halfway to 2 * 2^-9.
      {DType::f8e4m3fn, std::ldexp(1, -10), true, 0x00},
      {DType::f8e4m3fn, 3 * std::ldexp(1, -10), true, 0x02},
      {DType::f8e4m3fn, -1e-7, true, 0x80},  // rounds to -0
      {DType::f8e4m3fn, -0.0, true, 0x80},
      // 464 is halfway between 448 (mantissa 110) and 480 (beyond max): even is 448.
      {DType::f8e4m3fn, 464, false, 0x7e},
      {DType::f8e4m3fn, 465, false, 0x7f},  // rounds to 480: overflow is NaN
      {DType::f8e4m3fn, 465, true, 0x7e},
      {DType::f8e4m3fn, 1e6, true, 0x7e},
      {DType::f8e4m3fn, -1e6, true, 0xfe},
      {DType::f8e4m3fn, kInf, true, 0x7e},
      {DType::f8e4m3fn, -kInf, true, 0xfe},
      {DType::f8e4m3fn, kInf, false, 0x7f},
      {DType::f8e4m3fn, -kInf, false, 0xff},
      {DType::f8e4m3fn, kNaN, true, 0x7f},
      {DType::f8e4m3fn, -kNaN, false, 0xff},
      // f8e4m3fnuz: no -0; every NaN and non-saturated overflow is 0x80.
      {DType::f8e4m3fnuz, 1.0, true, 0x40},
      {DType::f8e4m3fnuz, -0.0, true, 0x00},
      {DType::f8e4m3fnuz, -1e-7, false, 0x00},
      {DType::f8e4m3fnuz, 240, false, 0x7f},
      // 248 is halfway between 240 (mantissa 111, odd) and 256: even is 256, beyond max.
      {DType::f8e4m3fnuz, 248, false, 0x80},
      {DType::f8e4m3fnuz, 248, true, 0x7f},
      {DType::f8e4m3fnuz, -kInf, false, 0x80},
      {DType::f8e4m3fnuz, -kInf, true, 0xff},
      {DType::f8e4m3fnuz, kNaN, true, 0x80},
      // f8e5m2: overflow without saturation is infinity. 61440 is halfway between 57344
      // (mantissa 11, odd) and 65536: even is 65536, which overflows.
      {DType::f8e5m2, 1.0, true, 0x3c},
      {DType::f8e5m2, 61440, false, 0x7c},
      {DType::f8e5m2, 61440, true, 0x7b},
      {DType::f8e5m2, -kInf, false, 0xfc},
      {DType::f8e5m2, -kInf, true, 0xfb},
      {DType::f8e5m2, kNaN, false, 0x7e},
      {DType::f8e5m2, -0.0, false, 0x80},
      // f8e5m2fnuz.
      {DType::f8e5m2fnuz, 1.0, true, 0x40},
      {DType::f8e5m2fnuz, -0.0, true, 0x00},
      {DType::f8e5m2fnuz, kInf, false, 0x80},
      {DType::f8e5m2fnuz, kInf, true, 0x7f},
      // f4e2m1 always saturates. Ties: 0.25 → 0, 0.75 → 1, 2.5 → 2, 5 → 4.
      {DType::f4e2m1, 0.25, true, 0x0},
      {DType::f4e2m1, 0.75, true, 0x2},
      {DType::f4e2m1, 2.5, true, 0x4},
      {DType::f4e2m1, 5, true, 0x6},
      {DType::f4e2m1, -3.5, false, 0xe},  // halfway between 3 (odd) and 4: -4
      {DType::f4e2m1, 9, false, 0x7},
      {DType::f4e2m1, -kInf, false, 0xf},
      {DType::f4e2m1, -0.0, true, 0x8},
      // f4e2m1 has no NaN: ml_dtypes (and so ONNX's test data) gives a zero of the other sign.
      {DType::f4e2m1, kNaN, true, 0x8},
      {DType::f4e2m1, -kNaN, true, 0x0},
      // Floats to int4 and int2 truncate toward zero, then wrap.
      {DType::i4, 2.7, true, 0x2},
      {DType::i4, -2.7, true, 0xe},
      {DType::i4, 8.5, true, 0x8},   // 8 wraps to -8
      {DType::i4, -9.2, true, 0x7},  // -9 wraps to 7
      {DType::u4, 100.3, true, 0x4},
      {DType::i4, kNaN, true, 0x0},
      {DType::i4, 3e9, true, 0x0},  // beyond int32: 0, as ml_dtypes
      {DType::i2, -3, true, 0x1},
      {DType::u2, 2.9, true, 0x2},
  };
  for (const Encoding& entry : table) {
    INFO(dtype_name(entry.type) << " from " << entry.value << " saturate " << entry.saturate);
    REQUIRE(int(float_to_low_precision(entry.type, entry.value, entry.saturate)) ==
            int(entry.bits));
  }
}

TEST_CASE("float8e8m0 rounds by round_mode", "[low_precision]") {
  auto e8m0 = [](double value, RoundMode mode, bool saturate = true) {
    return int(float_to_low_precision(DType::f8e8m0, value, saturate, mode));
  };
  // ONNX's test: 0.124 and 1.1 round up to 0.125 (0x7c) and 2 (0x80); 0 stays 2^-127.
  REQUIRE(e8m0(0.124, RoundMode::up) == 0x7c);
  REQUIRE(e8m0(1.1, RoundMode::up) == 0x80);
  REQUIRE(e8m0(1.0, RoundMode::up) == 0x7f);
  REQUIRE(e8m0(0.0, RoundMode::up) == 0x00);
  REQUIRE(e8m0(1.9, RoundMode::down) == 0x7f);
  REQUIRE(e8m0(3.0, RoundMode::down) == 0x80);
  // nearest: a mantissa of 1.5 and more goes up.
  REQUIRE(e8m0(1.4, RoundMode::nearest) == 0x7f);
  REQUIRE(e8m0(1.5, RoundMode::nearest) == 0x80);
  REQUIRE(e8m0(3.0, RoundMode::nearest) == 0x81);
  // At the top: 1.5 * 2^127 stays at 2^127 when saturating, else becomes NaN.
  REQUIRE(e8m0(1.5 * std::ldexp(1, 127), RoundMode::up) == 0xfe);
  REQUIRE(e8m0(1.5 * std::ldexp(1, 127), RoundMode::up, false) == 0xff);
  REQUIRE(e8m0(kInf, RoundMode::up) == 0xff);
  REQUIRE(e8m0(kNaN, RoundMode::down) == 0xff);

  REQUIRE(round_mode_from_name("nearest") == RoundMode::nearest);
  REQUIRE_FALSE(round_mode_from_name("even").has_value());
}

TEST_CASE("integers wrap into int4 and int2", "[low_precision]") {
  REQUIRE(int(int_to_low_precision(DType::i4, -9)) == 0x7);
  REQUIRE(int(int_to_low_precision(DType::i4, 8)) == 0x8);
  REQUIRE(int(int_to_low_precision(DType::u4, 255)) == 0xf);
  REQUIRE(int(int_to_low_precision(DType::u2, 5)) == 0x1);
  REQUIRE(int(int_to_low_precision(DType::i2, -3)) == 0x1);
  REQUIRE(packed_per_byte(DType::i4) == 2);
  REQUIRE(packed_per_byte(DType::u2) == 4);
  REQUIRE(packed_per_byte(DType::f8e5m2) == 1);
}

TEST_CASE("Tensor casts to and from the storage-only types", "[low_precision][tensor]") {
  // ONNX's test_cast_FLOAT_to_INT4: -9..15 wrap into [-8, 7].
  Tensor ints = Tensor::from_vector<int64_t>({5}, {-9, -8, 7, 8, 15});
  Tensor i4 = ints.cast(DType::i4);
  REQUIRE(i4.dtype() == DType::i4);
  REQUIRE(bits_of(i4) == std::vector<uint8_t>{0x7, 0x8, 0x7, 0x8, 0xf});
  REQUIRE(i4.to_int64_vector() == std::vector<int64_t>{7, -8, 7, -8, -1});
  Tensor i8 = i4.cast(DType::i8);  // sign-extends
  REQUIRE(std::vector<int8_t>(i8.values<int8_t>().begin(), i8.values<int8_t>().end()) ==
          std::vector<int8_t>{7, -8, 7, -8, -1});

  Tensor floats = Tensor::from_vector<float>({4}, {1.0625f, 500.0f, -kInfFloat, 0.3f});
  REQUIRE(bits_of(floats.cast(DType::f8e4m3fn)) == std::vector<uint8_t>{0x38, 0x7e, 0xfe, 0x2a});
  Tensor unsaturated = floats.cast(DType::f8e4m3fn, CastOptions{.saturate = false});
  REQUIRE(bits_of(unsaturated) == std::vector<uint8_t>{0x38, 0x7f, 0xff, 0x2a});
  // Back to float: 0x2a is 1.25 * 2^-2 = 0.3125; NaN stays NaN.
  std::vector<double> back = unsaturated.cast(DType::f32).to_double_vector();
  REQUIRE(back[0] == 1.0);
  REQUIRE(std::isnan(back[1]));
  REQUIRE(back[3] == 0.3125);
  REQUIRE(unsaturated.as_double(3) == 0.3125);
  REQUIRE(unsaturated.as_int64(1) == 0);  // NaN

  Tensor e8m0 = Tensor::from_vector<float>({2}, {3.0f, 5.0f})
                    .cast(DType::f8e8m0, CastOptions{.round_mode = RoundMode::down});
  REQUIRE(e8m0.to_double_vector() == std::vector<double>{2.0, 4.0});

  // Between storage-only types, through the value: f8e5m2 -2.5 → f4e2m1 -2 (a tie to even);
  // f8e5m2 1.75 truncates to int4 1.
  Tensor e5m2 = from_bits(DType::f8e5m2, {2}, {0xc1, 0x3f});
  REQUIRE(bits_of(e5m2.cast(DType::f4e2m1)) == std::vector<uint8_t>{0xc, 0x4});
  REQUIRE(e5m2.cast(DType::i4).to_int64_vector() == std::vector<int64_t>{-2, 1});
  // To float16 exactly, and to bool: NaN is true.
  Tensor half = e5m2.cast(DType::f16);
  REQUIRE(half.to_double_vector() == std::vector<double>{-2.5, 1.75});
  Tensor nan = from_bits(DType::f8e4m3fn, {2}, {0x7f, 0x00});
  REQUIRE(nan.cast(DType::boolean).to_int64_vector() == std::vector<int64_t>{1, 0});
}

TEST_CASE("kernels refuse storage-only element types clearly", "[low_precision]") {
  REQUIRE(is_storage_only(DType::f8e4m3fn));
  REQUIRE_FALSE(is_storage_only(DType::bf16));
  REQUIRE_FALSE(is_int(DType::i4));
  REQUIRE_FALSE(is_float(DType::f8e5m2));
  REQUIRE(dtype_from_name("f8e5m2fnuz") == DType::f8e5m2fnuz);
  REQUIRE(dtype_size(DType::u2) == 1);
  REQUIRE_THROWS_WITH(visit_dtype(DType::f8e4m3fn, []<typename T>() { return sizeof(T); }),
                      Catch::Contains("element type f8e4m3fn is storage-only"));
}

TEST_CASE("4- and 2-bit tensors are packed in TensorProto files", "[low_precision][frontend]") {
  TempDir dir;
  // Five int4 elements 7, -8, -1, 0, 1 pack two to a byte, the first in the low bits:
  // 0x87, 0x0f, 0x01 (the last high half is padding).
  Tensor i4 = from_bits(DType::i4, {5}, {0x7, 0x8, 0xf, 0x0, 0x1});
  std::string path = dir.file("i4.pb");
  write_tensor_proto(path, i4, "x");
  onnx::TensorProto proto;
  REQUIRE(proto.ParseFromString(read_file(path)));
  REQUIRE(proto.data_type() == 22);  // INT4
  REQUIRE(proto.raw_data() == std::string("\x87\x0f\x01", 3));
  REQUIRE(read_tensor_proto(path).identical(i4));

  // Seven uint2 elements pack four to a byte: 3,0,1,2 → 0b10'01'00'11; 1,1,3 → 0b11'01'01.
  Tensor u2 = from_bits(DType::u2, {7, 1}, {3, 0, 1, 2, 1, 1, 3});
  write_tensor_proto(path, u2, "x");
  REQUIRE(proto.ParseFromString(read_file(path)));
  REQUIRE(proto.raw_data() == std::string("\x93\x35", 2));
  REQUIRE(read_tensor_proto(path).identical(u2));

  // float4 packs like int4; float8 takes a byte each.
  for (DType type : {DType::f4e2m1, DType::f8e4m3fn, DType::f8e8m0, DType::i2}) {
    Tensor tensor = Tensor::from_vector<float>({2, 3}, {0.5f, -1, 1, 0, 1, -1}).cast(type);
    write_tensor_proto(path, tensor, "x");
    REQUIRE(read_tensor_proto(path).identical(tensor));
  }

  // The typed form: int32_data holds one stored byte an entry, packed for 4 bits.
  onnx::TensorProto typed;
  typed.set_data_type(21);  // UINT4
  typed.add_dims(3);
  typed.add_int32_data(0x5a);
  typed.add_int32_data(0x0c);
  Tensor u4 = read_tensor_proto(dir.write("u4.pb", typed.SerializeAsString()));
  REQUIRE(u4.to_int64_vector() == std::vector<int64_t>{10, 5, 12});
  // FLOAT8E5M2: three entries, one element each. 0x5a is 1.5 * 2^(22-15), 0x0c is 2^(3-15).
  typed.set_data_type(19);
  typed.add_int32_data(0x7c);
  Tensor e5m2 = read_tensor_proto(dir.write("e5m2.pb", typed.SerializeAsString()));
  REQUIRE(e5m2.to_double_vector() == std::vector<double>{192, std::ldexp(1, -12), kInf});
  typed.add_int32_data(0);  // four entries for three elements
  REQUIRE_THROWS_WITH(read_tensor_proto(dir.write("bad.pb", typed.SerializeAsString())),
                      Catch::Contains("has 4 values in int32_data but its type "
                                      "f8e5m2[3] needs 3"));
}
