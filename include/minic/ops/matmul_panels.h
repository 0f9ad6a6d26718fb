// A matrix product's B stored in panels of columns, the order the CPU's GEMM tile reads it,
// and the op that takes B in that form. Course module 4 (and module 2: layouts chosen at
// graph level).
//
// The GEMM rule (src/schedule/rules/cpu_default.cpp) computes C in register tiles of nr
// columns; every step of the reduction reads nr consecutive elements of one row of B. B
// [K, N] row-major has those rows N elements apart, so the rule copies the K x nr panel
// each column tile reads into a contiguous buffer first -- on every run, though a layer's
// weights never change. The `pack-matmul-weights` pass
// (src/passes/graph/pack_matmul_weights.cpp) stores a constant B in that order once, at
// compile time, and rewrites
//
//   MatMul(A, B)  ->  minic.MatMulPanels(A, B_panels) {columns = N}
//
// which computes the same product, reading B through its panels:
//
//   Y[..., i, j] = sum over k of A[..., i, k] * B[k, j]
//   B[k, j] = B_panels[j / P, k, j % P]          (j < N; P is B_panels' last dimension)
//
// A is [..., M, K] (two dimensions or more, batch dimensions as MatMul's); B_panels
// [ceil(N / P), K, P] of A's element type, zero past column N; Y [..., M, N].
//
// Chapter: docs/module4-schedules.md#4-the-default-cpu-schedule
#pragma once

#include "minic/tensor/tensor.h"

#include <cstdint>

namespace minic {

inline constexpr const char* kMatMulPanelsOp = "minic.MatMulPanels";

// `b` [K, N] in panels of `width` columns: [ceil(N / width), K, width], zero past column N.
Tensor pack_panels(const Tensor& b, int64_t width);

// The inverse: the first `columns` columns of `panels`, [K, columns].
Tensor unpack_panels(const Tensor& panels, int64_t columns);

}  // namespace minic
