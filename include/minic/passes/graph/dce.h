// The `dce` pass: remove nodes and constants whose results are never used.
//
// Course module 2. Removes every node none of whose outputs is read by a node or is a graph
// output, transitively (a dead node's producers may die with it), inside the bodies of
// fused nodes too, then every value nothing uses. A live node keeps all its outputs.
//
// Chapter: docs/module2-graph-passes.md#2-cleaning-up-simplify-fold-constants-dce-cse
#pragma once

#include "minic/ir/graph/graph.h"

namespace minic {

void eliminate_dead_code(Graph& graph);

}  // namespace minic
