// Exercise m2-neg-neg, solved: the graph pass `neg-neg`, Neg(Neg(x)) -> x. Course module 2.
//
// One walk over the nodes in order. A Neg whose input another Neg produced is bypassed:
// its users read the inner Neg's input instead, and it is erased; the inner Neg goes too
// once nothing reads it. In Neg(Neg(Neg(Neg(x)))) the second Neg is bypassed first, which
// makes the third a Neg of x and the fourth a Neg of that, bypassed in turn: an even chain
// vanishes and an odd one leaves one Neg. A Neg that is a graph output stays: bypassing it
// would give the model's output another value's name.
//
// Chapter: docs/module2-graph-passes.md#2-cleaning-up-simplify-fold-constants-dce-cse
#include "minic/ir/graph/graph.h"
#include "minic/passes/pass_registry.h"

namespace minic {
namespace {

bool is_unused(const Graph& graph, const Value* value) {
  return value->users().empty() && !graph.is_graph_output(value);
}

void remove_double_negation(Graph& graph) {
  for (Node* outer : graph.nodes()) {
    if (outer->op != "Neg") continue;
    Node* inner = outer->input(0)->producer();
    if (inner == nullptr || inner->op != "Neg") continue;
    if (graph.is_graph_output(outer->output(0))) continue;
    graph.replace_all_uses_with(outer->output(0), inner->input(0));
    graph.erase_node(outer);
    if (is_unused(graph, inner->output(0))) graph.erase_node(inner);
  }
  graph.remove_unused_values();
}

}  // namespace

MINIC_REGISTER_GRAPH_PASS("neg-neg", remove_double_negation,
                          "exercise m2-neg-neg: Neg(Neg(x)) -> x");

}  // namespace minic
