// The `fuse-layernorm` pass: replace ReduceMean/Sub/Pow/Sqrt/Div chains by one LayerNormalization.
//
// Course module 2. Finds (x - mean(x)) / Sqrt(mean((x - mean(x))^2) + eps), optionally
// followed by * gamma and + beta (constants over the normalised axes), where both means
// reduce the same trailing axes of x with keepdims = 1, and replaces it by
// LayerNormalization(x, gamma, beta) {axis = -(number of axes), epsilon = eps}. Without
// gamma the Scale is a constant of ones; without beta there is no B. Reduce axes are read
// from the attribute (before opset 18) or a constant input (opset 18 on).
//
// Chapter: docs/module2-graph-passes.md#4-recognising-decomposed-ops-fuse-gelu-fuse-layernorm-fuse-matmul-bias
#pragma once

#include "minic/ir/graph/graph.h"

namespace minic {

void fuse_layernorm(Graph& graph);

}  // namespace minic
