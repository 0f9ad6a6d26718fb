// The `fuse-gelu` pass: replace the Erf- and Tanh-based GELU subgraphs by one Gelu.
//
// Course module 2. Finds x * 0.5 * (1 + Erf(x / sqrt(2))) and
// x * 0.5 * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) in the orderings and associations
// exporters write, with constants matched to a relative 1e-4, and replaces each by
// Gelu(x) (approximate = "tanh" for the second). A formula whose intermediate values have
// other users is left alone. See src/passes/graph/fuse_gelu.cpp for the forms recognised.
//
// Chapter: docs/module2-graph-passes.md#4-recognising-decomposed-ops-fuse-gelu-fuse-layernorm-fuse-matmul-bias
#pragma once

#include "minic/ir/graph/graph.h"

namespace minic {

void fuse_gelu(Graph& graph);

}  // namespace minic
