// The reference interpreter: runs a graph node by node with the ops' reference kernels.
//
// Course module 2. Slow and plain on purpose: it is the oracle that every graph pass,
// lowering and compiled kernel is checked against.
//
// Chapter: docs/module2-graph-ir.md#5-the-reference-interpreter-srcruntimeinterpretercpp
#pragma once

#include "minic/ir/graph/graph.h"

#include <vector>

namespace minic {

// Runs `graph` on `inputs` (one per graph input, in order, of the inputs' types) and
// returns its outputs in order. Throws Error on a type mismatch or a failing kernel.
std::vector<Tensor> interpret(const Graph& graph, const std::vector<Tensor>& inputs);

}  // namespace minic
