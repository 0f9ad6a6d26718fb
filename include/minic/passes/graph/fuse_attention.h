// The `fuse-attention` pass: scaled dot-product attention written out as MatMul, scale,
// mask, Softmax and MatMul, replaced by one minic.FusedAttention node.
// Course module 4 (and module 2: recognising a decomposed op).
//
//   %s = MatMul(%q, %k_t)                      %y = minic.FusedAttention(%q, %k_t, %v, %m)
//   %x = Div(%s, %c)          (or Mul by c)          {scale = 1 / c}
//   %a = Add(%x, %m)          (optional)
//   %p = Softmax(%a)          (the last axis)
//   %y = MatMul(%p, %v)
//
// with the scale in any of the forms exporters write: s / c or s * c after the product,
// or Q and K_t each times a constant before it (PyTorch's scaled_dot_product_attention:
// both times sqrt(scale)), or none.
//
// Precondition: the graph verifies and its values have types. Applies on CPU targets (the
// attention rule is the CPU's); float32 only; Q, K_t and V of one rank with the same
// leading dimensions, a mask that broadcasts to the scores' shape, a scalar constant scale,
// and every intermediate value used by the next step alone. Anything else is left as it
// is, and `minic explain` says why where the chain is there but cannot fuse.
// Invariant: the graph computes the same outputs, up to rounding: Div by c becomes a
// product with 1 / c, and the quotient by the softmax's sum is taken after the product
// with V (the op's header has the formula).
//
// Chapter: docs/module4-schedules.md#9-fused-attention
#pragma once

#include "minic/ir/graph/graph.h"
#include "minic/target/target.h"

namespace minic {

void fuse_attention(Graph& graph, const Target& target);

}  // namespace minic
