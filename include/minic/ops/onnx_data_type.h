// ONNX TensorProto.DataType numbers, as attributes (`to`, `output_datatype`) and tensor
// files carry them, as minic's element types. Course module 2. One table for the ops of
// src/ops/ and for the frontend, which reads the numbers of TensorProto files through it.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#pragma once

#include "minic/tensor/dtype.h"

#include <cstdint>
#include <optional>

namespace minic {

// The DType of an ONNX data type number, or nullopt for the ones minic has no DType for
// (UNDEFINED, STRING, COMPLEX64, COMPLEX128, and numbers ONNX does not define).
inline std::optional<DType> dtype_of_onnx_code(int64_t code) {
  switch (code) {
    case 1: return DType::f32;          // FLOAT
    case 2: return DType::u8;           // UINT8
    case 3: return DType::i8;           // INT8
    case 4: return DType::u16;          // UINT16
    case 5: return DType::i16;          // INT16
    case 6: return DType::i32;          // INT32
    case 7: return DType::i64;          // INT64
    case 9: return DType::boolean;      // BOOL
    case 10: return DType::f16;         // FLOAT16
    case 11: return DType::f64;         // DOUBLE
    case 12: return DType::u32;         // UINT32
    case 13: return DType::u64;         // UINT64
    case 16: return DType::bf16;        // BFLOAT16
    case 17: return DType::f8e4m3fn;    // FLOAT8E4M3FN
    case 18: return DType::f8e4m3fnuz;  // FLOAT8E4M3FNUZ
    case 19: return DType::f8e5m2;      // FLOAT8E5M2
    case 20: return DType::f8e5m2fnuz;  // FLOAT8E5M2FNUZ
    case 21: return DType::u4;          // UINT4
    case 22: return DType::i4;          // INT4
    case 23: return DType::f4e2m1;      // FLOAT4E2M1
    case 24: return DType::f8e8m0;      // FLOAT8E8M0
    case 25: return DType::u2;          // UINT2
    case 26: return DType::i2;          // INT2
    default: return std::nullopt;
  }
}

}  // namespace minic
