// Exercise m2-transpose-pair, solved: the graph pass `transpose-pair`, which makes a
// Transpose of a Transpose one Transpose, or none where the two cancel. Course module 2.
//
// Output axis i of Transpose(x, p) is input axis p[i]. So in Transpose(Transpose(x, p), q)
// output axis i is axis q[i] of the inner result, which is axis p[q[i]] of x: the pair is
// Transpose(x, r) with r[i] = p[q[i]]. A Transpose without `perm` reverses the axes. The
// outer node is rewritten in place (its input and perm change), so its output keeps its
// name and type, and the inner node goes once nothing reads it. Then any Transpose whose
// perm is the identity, composed or given so, is bypassed: its users read its input,
// unless it is a graph output (whose name is the model's). One walk in order suffices: a
// chain's second node absorbs the first, the third absorbs that, and so on.
//
// Chapter: docs/module2-graph-passes.md#2-cleaning-up-simplify-fold-constants-dce-cse
#include "minic/ir/graph/graph.h"
#include "minic/passes/pass_registry.h"

#include <numeric>

namespace minic {
namespace {

std::vector<int64_t> permutation(const Node& transpose) {
  auto perm = transpose.attributes.find("perm");
  if (perm != transpose.attributes.end()) return std::get<std::vector<int64_t>>(perm->second);
  std::vector<int64_t> reversed(static_cast<size_t>(transpose.input(0)->type.rank()));
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  return reversed;
}

bool is_identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

void merge_transposes(Graph& graph) {
  for (Node* outer : graph.nodes()) {
    if (outer->op != "Transpose") continue;
    Node* inner = outer->input(0)->producer();
    if (inner != nullptr && inner->op == "Transpose") {
      const std::vector<int64_t> p = permutation(*inner), q = permutation(*outer);
      std::vector<int64_t> r;
      for (int64_t axis : q) r.push_back(p[static_cast<size_t>(axis)]);
      graph.set_input(outer, 0, inner->input(0));
      outer->attributes["perm"] = r;
      if (inner->output(0)->users().empty() && !graph.is_graph_output(inner->output(0))) {
        graph.erase_node(inner);
      }
    }
    if (is_identity(permutation(*outer)) && !graph.is_graph_output(outer->output(0))) {
      graph.replace_all_uses_with(outer->output(0), outer->input(0));
      graph.erase_node(outer);
    }
  }
  graph.remove_unused_values();
}

}  // namespace

MINIC_REGISTER_GRAPH_PASS("transpose-pair", merge_transposes,
                          "exercise m2-transpose-pair: Transpose(Transpose(x)) -> one or none");

}  // namespace minic
