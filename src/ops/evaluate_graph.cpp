// Running a whole graph through the reference kernels: evaluate_graph. Course module 2.
//
// Algorithm: bind inputs and constants to values; run nodes in topological order, each
// through its reference kernel (a fused node through its body); free a value after its
// last use so that large models run in bounded memory; return the graph outputs.
//
// The reference interpreter (src/runtime/interpreter.cpp) is this loop behind a check of
// the inputs' types. It lives here, in the ops layer, because control-flow ops (If, Loop,
// Scan in src/ops/control_flow.cpp and scan.cpp) run their bodies with it.
//
// Chapter: docs/module2-graph-ir.md#5-the-reference-interpreter-srcruntimeinterpretercpp
#include <unordered_map>
#include <unordered_set>

#include "minic/ops/shape_inference.h"

namespace minic {

std::vector<Tensor> evaluate_graph(const Graph& graph, std::span<const Tensor* const> inputs) {
  MINIC_CHECK(inputs.size() == graph.inputs().size());
  std::unordered_map<const Value*, Tensor> live;
  for (size_t i = 0; i < inputs.size(); ++i) live.emplace(graph.inputs()[i], *inputs[i]);

  // How many uses of each value remain. A graph output is never freed: it counts one use
  // more than its nodes make (once, however many times the graph returns it).
  std::unordered_map<const Value*, int> remaining_uses;
  for (const Node* node : graph.nodes()) {
    for (const Value* input : node->inputs()) {
      if (input) ++remaining_uses[input];
    }
  }
  std::unordered_set<const Value*> returned(graph.outputs().begin(), graph.outputs().end());
  for (const Value* output : returned) ++remaining_uses[output];

  auto tensor_of = [&](const Value* value) -> const Tensor* {
    if (value->constant) return value->constant.get();
    auto it = live.find(value);
    MINIC_CHECK(it != live.end());
    return &it->second;
  };

  for (const Node* node : graph.nodes()) {
    std::vector<const Tensor*> args;
    for (const Value* input : node->inputs()) args.push_back(input ? tensor_of(input) : nullptr);
    // A fusion group computes what its body computes.
    std::vector<Tensor> results = node->is_fused() ? evaluate_graph(*node->body, args)
                                                   : evaluate_node(*node, graph.opset, args);
    for (size_t i = 0; i < results.size(); ++i) {
      // An output nobody reads (an unused optional output) is dropped at once.
      if (remaining_uses[node->output(i)] == 0) continue;
      live.insert_or_assign(node->output(i), std::move(results[i]));
    }
    for (const Value* input : node->inputs()) {
      if (input && !input->constant && --remaining_uses[input] == 0) live.erase(input);
    }
  }

  std::vector<Tensor> outputs;
  for (const Value* output : graph.outputs()) outputs.push_back(*tensor_of(output));
  return outputs;
}

}  // namespace minic
