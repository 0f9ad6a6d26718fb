// The reference interpreter. Course module 2.
//
// Algorithm: bind inputs and constants to values; run nodes in topological order, each
// through its reference kernel; free a value after its last use so that large models run
// in bounded memory; return the graph outputs.
//
// Chapter: docs/module2-graph-ir.md#5-the-reference-interpreter-srcruntimeinterpretercpp
#include "minic/runtime/interpreter.h"

#include "minic/ops/shape_inference.h"

#include <unordered_map>

namespace minic {

std::vector<Tensor> interpret(const Graph& graph, const std::vector<Tensor>& inputs) {
  if (inputs.size() != graph.inputs().size()) {
    fail("graph '{}' takes {} inputs, {} were given", graph.name, graph.inputs().size(),
         inputs.size());
  }
  std::unordered_map<const Value*, Tensor> live;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value* input = graph.inputs()[i];
    if (inputs[i].type() != input->type) {
      fail("input {} (%{}) should be {}, got {}", i, input->name(), type_string(input->type),
           type_string(inputs[i].type()));
    }
    live.emplace(input, inputs[i]);
  }

  // How many uses of each value remain; a graph output is never freed.
  std::unordered_map<const Value*, int> remaining_uses;
  for (const Node* node : graph.nodes()) {
    for (const Value* input : node->inputs()) {
      if (input) ++remaining_uses[input];
    }
  }
  for (const Value* output : graph.outputs()) remaining_uses[output] += 1 << 30;

  auto tensor_of = [&](const Value* value) -> const Tensor* {
    if (value->constant) return value->constant.get();
    auto it = live.find(value);
    MINIC_CHECK(it != live.end());
    return &it->second;
  };

  for (const Node* node : graph.nodes()) {
    std::vector<const Tensor*> args;
    for (const Value* input : node->inputs()) args.push_back(input ? tensor_of(input) : nullptr);
    std::vector<Tensor> results;
    if (node->is_fused()) {
      // A fusion group computes what its body computes.
      std::vector<Tensor> body_inputs;
      for (const Tensor* arg : args) body_inputs.push_back(*arg);
      results = interpret(*node->body, body_inputs);
    } else {
      results = evaluate_node(*node, graph.opset, args);
    }
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
