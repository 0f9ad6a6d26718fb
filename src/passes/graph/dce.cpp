// The `dce` pass: dead-code elimination.
//
// Course module 2. A node is dead when nothing reads any of its outputs: no node uses
// them and none is a graph output. Removing it cannot change what the graph computes,
// because minic's ops have no side effects. Removing a dead node can make its producers
// dead in turn, so the pass removes whole dead chains. Other passes rely on it: a rewrite
// leaves the nodes it bypassed in place, and `dce` clears them away.
//
// Precondition: none beyond a valid graph.
// Invariant kept: the graph computes the same outputs. A live node keeps all its outputs,
// used or not (Dropout's unused mask stays): a node is removed whole or not at all.
//
// Algorithm:
//   1. walk the nodes backwards (users before producers) and erase each node none of
//      whose outputs is used; erasing it removes its uses of its inputs, so when the walk
//      reaches a producer whose only users were dead, the producer is dead too;
//   2. do the same inside the body of every fused node that is left: the body's outputs
//      are the node's outputs, all live;
//   3. drop the values nothing uses any more, constants included (remove_unused_values).
//
// Before:
//   %w = const f32[4] splat<2.0>
//   %a = Mul(%x, %w) : f32[4]
//   %b = Relu(%a) : f32[4]      // nothing reads %b
//   %y = Neg(%x) : f32[4]
//   return %y
// After:
//   %y = Neg(%x) : f32[4]
//   return %y
//
// Chapter: docs/module2-graph-passes.md#2-cleaning-up-simplify-fold-constants-dce-cse
#include "minic/passes/graph/dce.h"
#include "minic/passes/pass_registry.h"

#include <algorithm>
#include <ranges>

namespace minic {

namespace {

bool is_dead(const Graph& graph, const Node& node) {
  return std::ranges::all_of(node.outputs(), [&](const Value* output) {
    return output->users().empty() && !graph.is_graph_output(output);
  });
}

}  // namespace

void eliminate_dead_code(Graph& graph) {
  std::vector<Node*> nodes = graph.nodes();
  for (Node* node : nodes | std::views::reverse) {
    if (is_dead(graph, *node)) graph.erase_node(node);
  }
  for (Node* node : graph.nodes()) {
    if (node->is_fused()) eliminate_dead_code(*node->body);
  }
  graph.remove_unused_values();
}

MINIC_REGISTER_GRAPH_PASS("dce", eliminate_dead_code,
                          "remove nodes and constants whose results are never used");

}  // namespace minic
