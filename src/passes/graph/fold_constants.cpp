// The `fold-constants` pass: compute at compile time what does not depend on the inputs.
//
// Course module 2 (constant folding). A node whose inputs are all constants computes the
// same result on every run, so the compiler can run it once, now, and keep the result as a
// constant. Exported models are full of such nodes: weights built by ConstantOfShape, the
// Shape -> Gather -> Unsqueeze -> Concat chains that compute a Reshape's target shape, a
// Transpose of a weight. Shape and Size are folded even when their input is not constant:
// under static shapes they read only the input's type.
//
// Precondition: every value has a type (shape inference has run).
// Invariant kept: the graph computes the same outputs, bit for bit -- a folded value is
// exactly what the op's reference kernel would have produced at run time.
//
// Algorithm, one forward walk over the nodes (folding a node makes its users' inputs
// constant before the walk reaches them, so chains fold in the same walk):
//   1. skip fused nodes: their bodies are kernels, not folding material;
//   2. if every input is a constant (omitted optional inputs are fine), run the op's
//      reference kernel on them (evaluate_node); a Shape or Size node instead takes the
//      value its shape rule records from the input's type;
//   3. for each output, a constant holding the result takes over the output's name and
//      all its uses (graph outputs included), and the node is erased;
//   4. drop every value that nothing uses any more (Graph::remove_unused_values): the
//      folded nodes' old outputs, and the constants that only they read.
// A kernel that fails on constant inputs is a real error in the model (a Reshape to an
// impossible shape, say): the pass reports it, naming the node, rather than skip it.
// (No op minic supports draws random numbers -- training-mode Dropout is rejected -- so
// every node with constant inputs has one result.)
//
// The results move into the new constants without a copy, and a folded tensor whose
// elements are all equal prints as `splat<v>`: folding VGG-19's 25088x4096 fc6 weight from
// ConstantOfShape costs its 400 MB once.
//
// Before:
//   %s = const i64[2] dense<[2, 3]>
//   %w = ConstantOfShape(%s) {value=tensor<f32[1] dense<[0.5]>>} : f32[2,3]
//   %n = Shape(%x) : i64[2]
//   %y = MatMul(%x, %w) : f32[4,3]
// After:
//   %w = const f32[2,3] splat<0.5>
//   %n = const i64[2] dense<[4, 2]>
//   %y = MatMul(%x, %w) : f32[4,3]
//
// Chapter: docs/module2-graph-passes.md#2-cleaning-up-simplify-fold-constants-dce-cse
#include "minic/passes/graph/fold_constants.h"
#include "minic/passes/pass_registry.h"

#include "minic/ops/shape_inference.h"

#include <optional>

namespace minic {

namespace {

// Ops whose result follows from their input's type alone: their shape rules record it.
bool is_known_from_types(const Node& node) { return node.op == "Shape" || node.op == "Size"; }

// The values of a Shape or Size node, as its shape rule records them.
std::optional<std::vector<Tensor>> values_from_types(const Node& node, int opset) {
  const OpSchema* schema = op_registry().find(node.op);
  if (!schema) fail("{}: minic does not support the op {}", node.describe(), node.op);
  ShapeContext ctx(node, opset, [](const Value* value) { return value->constant.get(); });
  schema->shape_rule(ctx);
  std::vector<std::optional<Tensor>>& recorded = ctx.output_values();
  if (recorded.size() != node.outputs().size()) return std::nullopt;
  std::vector<Tensor> results;
  for (size_t i = 0; i < recorded.size(); ++i) {
    if (!recorded[i]) return std::nullopt;
    if (recorded[i]->type() != node.output(i)->type) {
      internal_fail("{}: output {} is {} but its type is {}",
                    node.describe(), i, type_string(recorded[i]->type()),
                    type_string(node.output(i)->type));
    }
    results.push_back(std::move(*recorded[i]));
  }
  return results;
}

// The node's outputs computed now, or nullopt if they depend on the graph's inputs.
std::optional<std::vector<Tensor>> fold(const Node& node, int opset) {
  std::vector<const Tensor*> inputs;
  for (const Value* input : node.inputs()) {
    if (input && !input->is_constant()) {
      if (is_known_from_types(node)) return values_from_types(node, opset);
      return std::nullopt;
    }
    inputs.push_back(input ? input->constant.get() : nullptr);
  }
  return evaluate_node(node, opset, inputs);
}

// Replaces `node` by constants holding `results`, each under its output's name.
void replace_by_constants(Graph& graph, Node* node, std::vector<Tensor> results) {
  for (size_t i = 0; i < results.size(); ++i) {
    Value* output = node->output(i);
    std::string name = output->name();
    // The old output, dropped at the end of the pass, hands its name to the constant.
    graph.rename_value(output, graph.unique_name(name + ".folded"));
    Value* constant = graph.add_constant(name, std::move(results[i]));
    graph.replace_all_uses_with(output, constant);
  }
  graph.erase_node(node);
}

}  // namespace

void fold_constants(Graph& graph) {
  for (Node* node : graph.nodes()) {
    if (node->is_fused()) continue;
    if (std::optional<std::vector<Tensor>> results = fold(*node, graph.opset)) {
      replace_by_constants(graph, node, std::move(*results));
    }
  }
  graph.remove_unused_values();
}

MINIC_REGISTER_GRAPH_PASS("fold-constants", fold_constants,
    "evaluate nodes whose inputs are all constant, through the reference kernels");

}  // namespace minic
