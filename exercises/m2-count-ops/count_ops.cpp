// Exercise m2-count-ops: the graph pass `count-ops`, which prints how many nodes of each op
// the graph has and changes nothing. Course module 2.
//
// exercises/m2-count-ops/README.md gives the task and the exact form of the report; this
// file is where it is done. The pass is registered already (the last line), so
// `minic opt FILE --passes=count-ops` runs it: as given, it prints nothing.
//
// Chapter: docs/module2-graph-passes.md#1-the-pass-manager
#include "minic/ir/graph/graph.h"
#include "minic/passes/pass_registry.h"

#include <fmt/format.h>

namespace minic {
namespace {

// Prints, on stderr, one line per op of the graph's nodes (a fused node's body counted
// as the ops inside it), then the total.
void count_ops(Graph& graph) {
  // The counting goes here.
  (void)graph;
}

}  // namespace

MINIC_REGISTER_GRAPH_PASS("count-ops", count_ops,
                          "exercise m2-count-ops: print how many nodes of each op there are");

}  // namespace minic
