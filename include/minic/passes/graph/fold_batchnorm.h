// The `fold-batchnorm` pass: fold inference BatchNormalization into the Conv, Gemm or MatMul
// before it.
//
// Course module 2. BatchNormalization at inference is y = x * s[c] + t[c] with
// s = scale / sqrt(var + epsilon) and t = B - mean * s. When x is the result of a Conv (a
// Gemm; a MatMul by a 2-D constant, with or without an Add of a constant bias) read by
// nothing else, the pass scales that node's constant weights per output channel by s and
// makes its bias b * s + t, and the BatchNormalization disappears. A BatchNormalization
// with constant parameters that cannot fold becomes x * s + t (a Mul and an Add by
// per-channel constants). Every parameter must be a constant (run fold-constants first when
// an exporter computes them); new constants are computed in double and stored in the
// weights' element type.
//
// Chapter: docs/module2-graph-passes.md#3-folding-arithmetic-into-weights-fold-batchnorm-fold-conv-affine
#pragma once

#include "minic/ir/graph/graph.h"

namespace minic {

void fold_batchnorm(Graph& graph);

}  // namespace minic
