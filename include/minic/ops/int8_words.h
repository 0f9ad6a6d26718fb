// Int8 weights in words of four bytes, the form AVX-512 VNNI's vpdpbusd reads, and the op
// that takes a matrix product's weights already in it. Course module 7.
//
// The word form of an int8 matrix product (src/ops/quantized_linear_compute.cpp) packs A
// and B into int32 words of four consecutive bytes along k, sums dot4_u8i8 of the words,
// and takes A's zero point out with B's column sums. When B is a constant, a layer's
// weights, its words and column sums are the same on every run: the `pack-int8-weights`
// pass (src/passes/graph/pack_int8_weights.cpp) computes them once, at compile time, and
// rewrites
//
//   MatMulInteger(A, B, za)  ->  minic.MatMulIntegerWords(A, B_words, B_column_sums, za)
//
// which computes the same int32 product from them:
//
//   Y[..., i, j] = sum over k of (A[..., i, k] - za[i]) * B[k, j]
//   B[k, j] = byte k % 4 of B_words[k / 4, j], read as int8     (k < K, A's last dimension)
//   B_column_sums[j] = sum over k of B[k, j]
//
// A is int8 or uint8 [..., M, K]; B_words int32 [ceil(K / 4), N]; B_column_sums int32
// [N]; a_zero_point (optional) A's type, per tensor or per row of A, as MatMulInteger's.
// The same for a convolution's weights, packed along the input channels:
//
//   ConvInteger(X, W, zx)  ->  minic.ConvIntegerWords(X, W_words, W_sums, zx) {Conv's attributes}
//
//   W[m, c, kh, kw] = byte c % 4 of W_words[m, c / 4, kh, kw], read as int8   (c < C, X's)
//   W_sums[m] = sum over c, kh, kw of W[m, c, kh, kw]
//
// X is int8 or uint8 [N, C, H, W]; W_words int32 [M, ceil(C / 4), KH, KW]; W_sums int32
// [M]; x_zero_point (optional) per tensor; one group.
//
// Chapter: docs/module7-quantisation.md#3-int8-kernels-on-vnni
#pragma once

#include "minic/tensor/tensor.h"

#include <cstdint>

namespace minic {

inline constexpr const char* kMatMulIntegerWordsOp = "minic.MatMulIntegerWords";
inline constexpr const char* kConvIntegerWordsOp = "minic.ConvIntegerWords";

// `q` (int8 or uint8) packed into int32 words of four consecutive elements along `axis`,
// the first in the lowest byte, zero bytes past the end: the axis's length becomes
// ceil(length / 4).
Tensor pack_words(const Tensor& q, int64_t axis);

// The inverse: the first `length` elements along `axis`, of `type` (int8 or uint8).
Tensor unpack_words(const Tensor& words, int64_t axis, int64_t length, DType type);

// The sums of int8 or uint8 `q` [K, N] over its first axis, int32 [N].
Tensor column_sums(const Tensor& q);

// The sums of int8 or uint8 convolution weights `w` [M, C, KH, KW] over all but the first
// axis, int32 [M].
Tensor weight_sums(const Tensor& w);

}  // namespace minic
