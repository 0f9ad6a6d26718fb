// Exercise m2-count-ops, solved: the graph pass `count-ops`, which prints how many nodes of
// each op the graph has and changes nothing. Course module 2.
//
// A std::map from op to count keeps the ops sorted by name, so the report reads the same
// on every run. A fused node is not an op of its own: its body's nodes are counted, by
// recursion, as the ops they are.
//
// Chapter: docs/module2-graph-passes.md#1-the-pass-manager
#include "minic/ir/graph/graph.h"
#include "minic/passes/pass_registry.h"

#include <fmt/format.h>

#include <map>

namespace minic {
namespace {

void add_counts(const Graph& graph, std::map<std::string, int>& counts) {
  for (const Node* node : graph.nodes()) {
    if (node->is_fused()) {
      add_counts(*node->body, counts);
    } else {
      ++counts[node->op];
    }
  }
}

void count_ops(Graph& graph) {
  std::map<std::string, int> counts;
  add_counts(graph, counts);
  int total = 0;
  for (const auto& [op, count] : counts) {
    fmt::print(stderr, "count-ops: {} {}\n", op, count);
    total += count;
  }
  fmt::print(stderr, "count-ops: {} nodes\n", total);
}

}  // namespace

MINIC_REGISTER_GRAPH_PASS("count-ops", count_ops,
                          "exercise m2-count-ops: print how many nodes of each op there are");

}  // namespace minic
