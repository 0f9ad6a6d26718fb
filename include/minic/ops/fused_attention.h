// Attention as one op: the scaled dot-product attention that models write out as five
// nodes, which the `fuse-attention` pass (src/passes/graph/fuse_attention.cpp) recognises.
// Course module 4.
//
//   minic.FusedAttention(Q, K_t, V[, mask]) {scale}
//
//   scores[..., i, j] = scale * sum over d of Q[..., i, d] * K_t[..., d, j] + mask[..., i, j]
//   P[..., i, j]      = exp(scores[..., i, j]) / sum over j' of exp(scores[..., i, j'])
//   Y[..., i, e]      = sum over j of P[..., i, j] * V[..., j, e]
//
// Q is [..., S, D], K_t [..., D, T] (the keys already transposed, as the MatMul it replaces
// read them), V [..., T, E], all float32 with the same leading dimensions; the mask is
// float32 and broadcasts (numpy's rules) to the scores' shape [..., S, T]; Y is [..., S, E].
//
// One op, one kernel: the CPU's attention rule (src/schedule/rules/cpu_attention.cpp)
// computes a tile of rows at a time -- their scores, their softmax and their share of Y --
// so the S x T scores of a head never leave the L1 cache.
//
// Chapter: docs/module4-schedules.md#9-fused-attention
#pragma once

namespace minic {

inline constexpr const char* kFusedAttentionOp = "minic.FusedAttention";

}  // namespace minic
