// The reference interpreter. Course module 2.
//
// `interpret` checks that the inputs have the graph inputs' types, then runs the graph
// node by node through the reference kernels with evaluate_graph
// (src/ops/evaluate_graph.cpp), which frees each value after its last use.
//
// Chapter: docs/module2-graph-ir.md#5-the-reference-interpreter-srcruntimeinterpretercpp
#include "minic/runtime/interpreter.h"

#include "minic/ops/shape_inference.h"

namespace minic {

std::vector<Tensor> interpret(const Graph& graph, const std::vector<Tensor>& inputs) {
  if (inputs.size() != graph.inputs().size()) {
    fail("graph '{}' takes {} inputs, {} were given", graph.name, graph.inputs().size(),
         inputs.size());
  }
  std::vector<const Tensor*> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value* input = graph.inputs()[i];
    if (inputs[i].type() != input->type) {
      fail("input {} (%{}) should be {}, got {}", i, input->name(), type_string(input->type),
           type_string(inputs[i].type()));
    }
    args.push_back(&inputs[i]);
  }
  return evaluate_graph(graph, args);
}

}  // namespace minic
