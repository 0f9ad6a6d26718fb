// Winograd's minimal filtering: a 3x3 convolution with fewer multiplications.
//
// Course module 4 (algorithmic rewrites of a convolution). Computing m x m outputs of a
// 3x3 convolution directly takes 9 m^2 multiplications per input channel. Winograd's
// F(m x m, 3 x 3) takes (m + 2)^2: the input tile d of a = m + 2 rows and columns and the
// filter g are each carried to a "transform space" by constant matrices, multiplied there
// element by element, and carried back:
//
//   Y = AT [ (G g G^T) .* (BT d B) ] A          (A = AT^T, B = BT^T)
//
// BT is a x a, G is a x 3 and AT is m x a. The filter's transform G g G^T is computed once,
// when the weights are known; what remains per inference is the input's transform, one
// product per point of transform space, and the output's transform. Summed over input
// channels, the products are a x a independent matrix products -- a batched GEMM, one
// matrix per point (xi, nu) of transform space, stored at e = xi * a + nu:
//
//   V[e, t, c] = (BT d(t, c) B)[xi, nu]          the input, tile t, channel c
//   U[e, c, k] = (G g(k, c) G^T)[xi, nu]         the weights, in the graph as a constant
//   M[e, t, k] = sum over c of V[e, t, c] * U[e, c, k]                 (MatMul)
//   Y(t, k)    = AT M(t, k) A                    M(t, k) the a x a matrix of M[., t, k]
//
// F(2x2, 3x3) saves 2.25x the multiplications, F(4x4, 3x3) 4x; the larger tile's
// matrices hold larger numbers (the points 0, +-1, +-2 and infinity), which costs some
// float accuracy, and U is a^2 / 9 times the size of the weights.
//
// The ops (src/ops/winograd.cpp) work on tensors in the blocked layout NCHWc
// (include/minic/ops/nchwc.h); the `winograd` graph pass (src/passes/graph/winograd.cpp)
// rewrites minic.NchwcConv into them.
//
// Chapter: docs/module4-schedules.md#8-winograd-convolution
#pragma once

#include "minic/tensor/tensor.h"

#include <cstdint>

namespace minic {

// The ops, by their names in the graph (the `minic` domain):
//   minic.WinogradInput(X, BT) {pads = [top, left], tiles = [TH, TW]}
//       X [N, Cb, H, W, b] blocked, BT [a, a]  ->  V [a * a, N * TH * TW, Cb * b]
//   minic.WinogradOutput(M, AT[, B]) {output_shape = [N, OH, OW]}
//       M [a * a, T, Kb * b], AT [m, a], B [Kb, b]  ->  Y [N, Kb, OH, OW, b]
// Tile t = (n * TH + ty) * TW + tx reads the input rows ty * m - top ... ty * m - top + a - 1
// (0 outside X) and writes the output rows ty * m ... ty * m + m - 1 (those below OH).
inline constexpr const char* kWinogradInputOp = "minic.WinogradInput";
inline constexpr const char* kWinogradOutputOp = "minic.WinogradOutput";

// The three matrices of F(m x m, 3 x 3), as f32 tensors: BT [a, a], G [a, 3], AT [m, a]
// with a = m + 2. m is 2 or 4.
struct WinogradMatrices {
  Tensor bt;
  Tensor g;
  Tensor at;
};
WinogradMatrices winograd_matrices(int64_t m);

// The weights of a 3x3 convolution [K, C, 3, 3] carried to transform space as the MatMul
// of the rewrite reads them: U [a * a, C, K], U[xi * a + nu, c, k] = (G W[k, c] G^T)[xi, nu]
// (computed in double, rounded once).
Tensor winograd_weights(const Tensor& w, const WinogradMatrices& matrices);

}  // namespace minic
