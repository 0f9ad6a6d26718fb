// The `pretranspose-weights` pass. Course module 2; see the header for what and why.
//
// Algorithm: for each Gemm with transB = 1 whose B is a 2-d constant, build the transposed
// constant element by element (any element type: bytes are moved, not converted), make
// the Gemm read it, and drop the attribute (transB = 0 is the default).
//
// Chapter: docs/module2-graph-passes.md#4-recognising-decomposed-ops-fuse-gelu-fuse-layernorm-fuse-matmul-bias
#include "minic/passes/graph/pretranspose_weights.h"
#include "minic/passes/pass_registry.h"

#include "graph_edit.h"


namespace minic {
namespace {

bool transposes_b(const Node& node) { return edit::int_attribute(node, "transB", 0) != 0; }

}  // namespace

void pretranspose_weights(Graph& graph) {
  for (Node* node : graph.nodes()) {
    if (node->op != "Gemm" || !transposes_b(*node) || !node->has_input(1)) continue;
    const Value* b = node->input(1);
    if (!b->is_constant() || b->constant->rank() != 2) continue;
    Value* b_t =
        graph.add_constant(graph.unique_name(b->name() + "_t"), edit::transposed(*b->constant));
    graph.set_input(node, 1, b_t);
    node->attributes.erase("transB");
  }
  graph.remove_unused_values();
}

MINIC_REGISTER_GRAPH_PASS("pretranspose-weights", pretranspose_weights,
                          "store a Gemm's constant B transposed once, so that transB = 0");

}  // namespace minic
