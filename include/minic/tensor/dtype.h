// Element types of tensors.
//
// Course module 2. minic computes in float32 first; integer and boolean types serve shape
// and index computations; float16, bfloat16 and float64 are stored natively and computed
// through float or double by the reference kernels. The 8-, 4- and 2-bit types of ONNX
// (float8, float4, int4, int2) are storage-only: minic holds them, one element a byte, and
// converts them (Cast, CastLike, file I/O; see low_precision.h), but no kernel computes in them.
//
// Chapter: docs/module2-graph-ir.md#tensors-srctensor
#pragma once

#include "minic/support/error.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace minic {

enum class DType : uint8_t {
  f32, f64, f16, bf16,
  i8, i16, i32, i64,
  u8, u16, u32, u64,
  boolean,
  // Storage-only: each element is one byte holding the type's bits in its low bits.
  f8e4m3fn, f8e4m3fnuz, f8e5m2, f8e5m2fnuz, f8e8m0,
  f4e2m1,
  i4, u4, i2, u2,
};

// The short name used in the text IR: "f32", "i64", "bool", ...
std::string_view dtype_name(DType type);
std::optional<DType> dtype_from_name(std::string_view name);
// Size of one element in bytes.
int dtype_size(DType type);
// is_float and is_int cover the types kernels compute in: f32, f64, f16, bf16 and the 8- to
// 64-bit integers. The storage-only types are neither.
bool is_float(DType type);
bool is_signed_int(DType type);
bool is_unsigned_int(DType type);
inline bool is_int(DType type) { return is_signed_int(type) || is_unsigned_int(type); }
// True for the float8, float4, int4 and int2 types, which no kernel computes in.
bool is_storage_only(DType type);
// Throws Error: `type` is storage-only, so an operation that needs its C++ type cannot take it.
[[noreturn]] void fail_storage_only(DType type);

// IEEE half precision, stored as its bits. Arithmetic goes through float.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  explicit Half(float value);
  explicit operator float() const;
};

// bfloat16: the upper half of a float32. Rounds to nearest even when narrowing.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float value);
  explicit operator float() const;
};

// The C++ type that holds one element of each DType.
template <DType T> struct CType;
template <> struct CType<DType::f32> { using type = float; };
template <> struct CType<DType::f64> { using type = double; };
template <> struct CType<DType::f16> { using type = Half; };
template <> struct CType<DType::bf16> { using type = BFloat16; };
template <> struct CType<DType::i8> { using type = int8_t; };
template <> struct CType<DType::i16> { using type = int16_t; };
template <> struct CType<DType::i32> { using type = int32_t; };
template <> struct CType<DType::i64> { using type = int64_t; };
template <> struct CType<DType::u8> { using type = uint8_t; };
template <> struct CType<DType::u16> { using type = uint16_t; };
template <> struct CType<DType::u32> { using type = uint32_t; };
template <> struct CType<DType::u64> { using type = uint64_t; };
template <> struct CType<DType::boolean> { using type = bool; };

template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<double>() { return DType::f64; }
template <> constexpr DType dtype_of<Half>() { return DType::f16; }
template <> constexpr DType dtype_of<BFloat16>() { return DType::bf16; }
template <> constexpr DType dtype_of<int8_t>() { return DType::i8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::i16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::i32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::i64; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::u8; }
template <> constexpr DType dtype_of<uint16_t>() { return DType::u16; }
template <> constexpr DType dtype_of<uint32_t>() { return DType::u32; }
template <> constexpr DType dtype_of<uint64_t>() { return DType::u64; }
template <> constexpr DType dtype_of<bool>() { return DType::boolean; }

// Calls fn.template operator()<T>() with T the C++ element type of `type`:
//   visit_dtype(t, [&]<typename T>() { ... });
// The storage-only types have no C++ element type: for them it throws Error.
template <typename Fn>
decltype(auto) visit_dtype(DType type, Fn&& fn) {
  switch (type) {
    case DType::f32: return fn.template operator()<float>();
    case DType::f64: return fn.template operator()<double>();
    case DType::f16: return fn.template operator()<Half>();
    case DType::bf16: return fn.template operator()<BFloat16>();
    case DType::i8: return fn.template operator()<int8_t>();
    case DType::i16: return fn.template operator()<int16_t>();
    case DType::i32: return fn.template operator()<int32_t>();
    case DType::i64: return fn.template operator()<int64_t>();
    case DType::u8: return fn.template operator()<uint8_t>();
    case DType::u16: return fn.template operator()<uint16_t>();
    case DType::u32: return fn.template operator()<uint32_t>();
    case DType::u64: return fn.template operator()<uint64_t>();
    case DType::boolean: return fn.template operator()<bool>();
    case DType::f8e4m3fn:
    case DType::f8e4m3fnuz:
    case DType::f8e5m2:
    case DType::f8e5m2fnuz:
    case DType::f8e8m0:
    case DType::f4e2m1:
    case DType::i4:
    case DType::u4:
    case DType::i2:
    case DType::u2:
      break;
  }
  fail_storage_only(type);
}

// The type a reference kernel computes in for elements of type T: float for the 16-bit
// floats, T itself otherwise.
template <typename T> struct ComputeType { using type = T; };
template <> struct ComputeType<Half> { using type = float; };
template <> struct ComputeType<BFloat16> { using type = float; };
template <typename T> using compute_t = typename ComputeType<T>::type;

}  // namespace minic
