// The execution plan: buffers, steps and the static memory plan. Course module 4.
//
// Steps:
//   1. a buffer per graph value the steps touch: inputs, constants, outputs, and the
//      intermediates between kernels;
//   2. a step per node, in graph (topological) order, its arguments in parameter order;
//   3. the lifetime of every intermediate (from the step that writes it to the last step
//      that reads it) goes to the memory planner, which gives its arena offset.
//
// Chapter: docs/module4-schedules.md#6-the-executor-and-threads
#include "execution_plan.h"

#include "minic/ops/shape_inference.h"
#include "minic/support/error.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace minic {

std::vector<const Value*> kernel_arguments(const Node& node) {
  std::vector<const Value*> args;
  for (const Value* input : node.inputs()) {
    if (input && std::find(args.begin(), args.end(), input) == args.end()) args.push_back(input);
  }
  for (const Value* output : node.outputs()) args.push_back(output);
  return args;
}

runtime::KernelCall reference_kernel_call(const Node& node, int opset,
                                          std::shared_ptr<BodyEvaluator> bodies) {
  std::vector<const Value*> args = kernel_arguments(node);
  size_t num_inputs = args.size() - node.outputs().size();
  return [&node, opset, args, num_inputs, bodies](void** pointers) {
    // Each argument as a tensor: a constant is read where the graph holds it (a Scan's
    // captured weights are not copied at every call), any other value copied in.
    std::vector<Tensor> copies(num_inputs);
    std::vector<const Tensor*> inputs;
    for (size_t i = 0; i < num_inputs; ++i) {
      if (args[i]->is_constant()) {
        inputs.push_back(args[i]->constant.get());
        continue;
      }
      copies[i] = Tensor(args[i]->type);
      // (An empty tensor may have a null buffer, which memcpy may not be given.)
      if (!copies[i].bytes().empty()) {
        std::memcpy(copies[i].bytes().data(), pointers[i], copies[i].bytes().size());
      }
      inputs.push_back(&copies[i]);
    }
    std::vector<Tensor> results;
    if (node.is_fused()) {
      // The body's inputs are the node's distinct arguments, of their types (the verifier
      // checks it).
      results = evaluate_graph(*node.body, inputs);
    } else {
      // Each input of the node is one of the distinct arguments (or omitted).
      std::vector<const Tensor*> node_inputs;
      for (const Value* input : node.inputs()) {
        auto it = std::find(args.begin(), args.begin() + num_inputs, input);
        node_inputs.push_back(input ? inputs[it - args.begin()] : nullptr);
      }
      results = evaluate_node(node, opset, node_inputs, bodies.get());
    }
    for (size_t k = 0; k < results.size(); ++k) {
      if (results[k].bytes().empty()) continue;
      std::memcpy(pointers[num_inputs + k], results[k].bytes().data(), results[k].bytes().size());
    }
  };
}

runtime::ExecutionPlan build_execution_plan(
    const Graph& graph, const std::map<const Node*, runtime::PlanStep>& steps) {
  runtime::ExecutionPlan plan;
  std::unordered_map<const Value*, int> buffer_of;
  auto add_buffer = [&](const Value* value, runtime::BufferKind kind) {
    buffer_of[value] = static_cast<int>(plan.buffers.size());
    plan.buffers.push_back({value->name(), value->type, kind, value->constant, 0});
    return buffer_of[value];
  };
  for (const Value* input : graph.inputs()) {
    plan.inputs.push_back(add_buffer(input, runtime::BufferKind::input));
  }
  auto buffer_for = [&](const Value* value) {
    auto it = buffer_of.find(value);
    if (it != buffer_of.end()) return it->second;
    if (value->is_constant()) return add_buffer(value, runtime::BufferKind::constant);
    return add_buffer(value, graph.is_graph_output(value) ? runtime::BufferKind::output
                                                         : runtime::BufferKind::intermediate);
  };

  // Steps, and the first and last step that touch each buffer.
  std::unordered_map<int, BufferLifetime> lifetimes;
  std::vector<Node*> nodes = graph.nodes();
  for (size_t s = 0; s < nodes.size(); ++s) {
    runtime::PlanStep step = steps.at(nodes[s]);
    step.args.clear();
    step.num_outputs = static_cast<int>(nodes[s]->outputs().size());
    for (const Value* value : kernel_arguments(*nodes[s])) {
      int b = buffer_for(value);
      step.args.push_back(b);
      auto [it, fresh] = lifetimes.try_emplace(b, BufferLifetime{value->type.num_bytes(),
                                                                 static_cast<int>(s),
                                                                 static_cast<int>(s)});
      if (!fresh) it->second.last_step = static_cast<int>(s);
    }
    plan.steps.push_back(std::move(step));
  }
  for (const Value* output : graph.outputs()) plan.outputs.push_back(buffer_for(output));

  // The arena: every intermediate, placed by the memory planner.
  std::vector<int> intermediates;
  std::vector<BufferLifetime> requests;
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    if (plan.buffers[b].kind != runtime::BufferKind::intermediate) continue;
    intermediates.push_back(static_cast<int>(b));
    requests.push_back(lifetimes.at(static_cast<int>(b)));
  }
  plan.memory = plan_memory(requests);
  for (size_t i = 0; i < intermediates.size(); ++i) {
    plan.buffers[intermediates[i]].arena_offset = plan.memory.offsets[i];
  }
  return plan;
}

}  // namespace minic
