// The `pack-matmul-weights` pass. Course module 4; see the header for what and why.
//
// Algorithm: for each MatMul or Gemm the header's conditions admit, ask gemm_tile for the
// tile of its extents (M rows of A's last matrix, N columns of B, K), pack B into panels
// of the tile's columns (pack_panels, include/minic/ops/matmul_panels.h), add them as a
// constant, and replace the node by minic.MatMulPanels on A and the panels, followed by an
// Add of a Gemm's C. Products of one B and one panel width share the panels; B itself is
// left for dce when nothing else reads it.
//
// Chapter: docs/module4-schedules.md#4-the-default-cpu-schedule
#include "minic/passes/graph/pack_matmul_weights.h"
#include "minic/passes/pass_registry.h"

#include "minic/ops/matmul_panels.h"
#include "minic/target/gemm_tile.h"

#include "graph_edit.h"

#include <map>
#include <utility>

namespace minic {
namespace {

// True if `node` is a MatMul, or a Gemm that is one plus a bias, of float32 A with two
// dimensions or more and a constant float32 matrix B.
bool packable_product(const Node& node) {
  if (node.op == "Gemm") {
    const bool plain = edit::int_attribute(node, "transA", 0) == 0 &&
                       edit::int_attribute(node, "transB", 0) == 0 &&
                       edit::float_attribute(node, "alpha", 1.0) == 1.0 &&
                       edit::float_attribute(node, "beta", 1.0) == 1.0;
    if (!plain) return false;
  } else if (node.op != "MatMul") {
    return false;
  }
  const Value* a = node.input(0);
  const Value* b = node.input(1);
  return a->type.dtype == DType::f32 && a->type.rank() >= 2 && b->is_constant() &&
         b->type.dtype == DType::f32 && b->type.rank() == 2;
}

}  // namespace

void pack_matmul_weights(Graph& graph, const Target& target) {
  if (target.is_cuda()) return;
  bool changed = false;
  std::map<std::pair<const Value*, int64_t>, Value*> packed;  // (B, panel width) -> panels
  for (Node* node : graph.nodes()) {
    if (!packable_product(*node)) continue;
    const Shape& a = node->input(0)->type.shape;
    const Shape& b = node->input(1)->type.shape;
    const GemmTile tile = gemm_tile(a[a.size() - 2], b[1], b[0], target);
    if (tile.columns == 0 || tile.rows < 2) continue;  // not the GEMM rule's
    // Products of one B with the same tile share its panels.
    Value*& panels = packed[{node->input(1), tile.columns}];
    if (!panels) {
      panels = graph.add_constant(graph.unique_name(node->input(1)->name() + "_panels"),
                                  pack_panels(*node->input(1)->constant, tile.columns));
    }
    Value* result = node->output(0);
    const bool bias = node->op == "Gemm" && node->has_input(2);
    Value* y = edit::add_node_of_type(graph, kMatMulPanelsOp, {node->input(0), panels},
                                      result->name() + (bias ? "_product" : "_panels"),
                                      result->type, {{"columns", b[1]}});
    if (bias) {
      y = edit::add_node_of_type(graph, "Add", {y, node->input(2)}, result->name() + "_bias",
                                 result->type, {});
    }
    edit::replace_node(graph, node, result, y, /*take_name=*/true);
    changed = true;
  }
  if (!changed) return;
  graph.sort_topologically();
  graph.remove_unused_values();
}

MINIC_REGISTER_GRAPH_PASS("pack-matmul-weights", pack_matmul_weights,
                          "CPU: the constant float32 B of a MatMul or Gemm stored in the "
                          "panels of columns the GEMM tile reads, packed at compile time");

}  // namespace minic
