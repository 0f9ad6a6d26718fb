// The `fold-conv-affine` pass: fold a Mul or Add by a per-channel constant into the Conv
// before it.
//
// Course module 2. Conv(x, W, b) * s becomes Conv(x, W * s, b * s), and Conv(x, W, b) + t
// (or - t) becomes Conv(x, W, b + t), when s and t are constants per output channel (a
// scalar, [C,1,1], [1,C,1,1], ...), the broadcast leaves the Conv result's shape as it is,
// the Conv's weights and bias are constants, and the Conv's result has no other reader.
//
// Chapter: docs/module2-graph-passes.md#3-folding-arithmetic-into-weights-fold-batchnorm-fold-conv-affine
#pragma once

#include "minic/ir/graph/graph.h"

namespace minic {

void fold_conv_affine(Graph& graph);

}  // namespace minic
