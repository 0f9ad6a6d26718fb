// The execution plan: buffers, steps and the static memory plan. Course module 4.
//
// Steps:
//   1. a buffer per graph value the steps touch: inputs, constants, outputs, and the
//      intermediates between kernels;
//   2. a step per node, in graph (topological) order, its arguments in parameter order,
//      except that control-flow steps that do not need each other go side by side
//      (order_steps, below);
//   3. the lifetime of every intermediate (from the time slot of the step that writes it
//      to that of the last step that reads it) goes to the memory planner, which gives
//      its arena offset.
//
// Steps side by side. A control-flow step (a Scan, a Loop, an If: its reference kernel
// runs a body, on one thread, for long) has nothing for a second thread to do; a second
// one that does not need its results can run on that thread meanwhile: a bidirectional
// LSTM's two Scans. order_steps moves such steps next to the first of them, with what
// they need moved before it, and gives them one time slot. Lifetimes count in slots, so
// the buffers of steps in one slot never share memory, and the executor runs a slot's
// steps at once (PlanStep::beside_previous).
//
// Chapter: docs/module4-schedules.md#6-the-executor-and-threads
#include "execution_plan.h"

#include "minic/ops/shape_inference.h"
#include "minic/support/error.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace minic {

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

namespace {

// True for a step whose reference kernel runs a body (a graph attribute): Scan, Loop, If.
bool runs_a_body(const Node& node, const runtime::PlanStep& step) {
  if (step.compiled) return false;
  return std::any_of(node.attributes.begin(), node.attributes.end(), [](const auto& entry) {
    return std::holds_alternative<GraphAttribute>(entry.second);
  });
}

// The nodes in the order their steps run, and each one's time slot (steps side by side
// share one; see the top of this file).
struct StepOrder {
  std::vector<Node*> nodes;
  std::vector<int> slots;
};

// needs[b][a]: node b reads, through some path, what node a writes (indices of `nodes`,
// a topological order).
std::vector<std::vector<bool>> dependences(const std::vector<Node*>& nodes) {
  std::unordered_map<const Node*, size_t> index;
  for (size_t n = 0; n < nodes.size(); ++n) index[nodes[n]] = n;
  std::vector<std::vector<bool>> needs(nodes.size(), std::vector<bool>(nodes.size(), false));
  for (size_t b = 0; b < nodes.size(); ++b) {
    for (const Value* input : nodes[b]->inputs()) {
      if (!input || !input->producer()) continue;
      size_t a = index.at(input->producer());
      needs[b][a] = true;
      for (size_t c = 0; c < a; ++c) needs[b][c] = needs[b][c] || needs[a][c];
    }
  }
  return needs;
}

StepOrder order_steps(const Graph& graph,
                      const std::map<const Node*, runtime::PlanStep>& steps) {
  std::vector<Node*> nodes = graph.nodes();
  std::vector<bool> body(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n) body[n] = runs_a_body(*nodes[n], steps.at(nodes[n]));
  StepOrder order;
  if (std::count(body.begin(), body.end(), true) < 2) {
    order.nodes = nodes;
    for (size_t n = 0; n < nodes.size(); ++n) order.slots.push_back(static_cast<int>(n));
    return order;
  }
  std::vector<std::vector<bool>> needs = dependences(nodes);
  std::vector<bool> placed(nodes.size(), false);
  int slot = 0;
  auto place = [&](size_t n, bool beside) {
    order.nodes.push_back(nodes[n]);
    order.slots.push_back(beside ? slot - 1 : slot++);
    placed[n] = true;
  };
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (placed[n]) continue;
    if (!body[n]) {
      place(n, false);
      continue;
    }
    // The later body steps that need none of the group's results join it.
    std::vector<size_t> group = {n};
    for (size_t m = n + 1; m < nodes.size(); ++m) {
      bool apart = std::none_of(group.begin(), group.end(), [&](size_t g) { return needs[m][g]; });
      if (body[m] && !placed[m] && apart) group.push_back(m);
    }
    // What they need comes first (none of it needs the group: its members are apart).
    for (size_t a = n + 1; a < nodes.size(); ++a) {
      bool needed = std::any_of(group.begin(), group.end(), [&](size_t g) { return needs[g][a]; });
      if (needed && !placed[a]) place(a, false);
    }
    for (size_t g = 0; g < group.size(); ++g) place(group[g], g > 0);
  }
  return order;
}

}  // namespace

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

  // Steps, and the first and last time slot that touch each buffer.
  std::unordered_map<int, BufferLifetime> lifetimes;
  StepOrder order = order_steps(graph, steps);
  for (size_t s = 0; s < order.nodes.size(); ++s) {
    const Node& node = *order.nodes[s];
    const int slot = order.slots[s];
    runtime::PlanStep step = steps.at(&node);
    step.args.clear();
    step.num_outputs = static_cast<int>(node.outputs().size());
    step.beside_previous = s > 0 && order.slots[s - 1] == slot;
    for (const Value* value : kernel_arguments(node)) {
      int b = buffer_for(value);
      step.args.push_back(b);
      auto [it, fresh] =
          lifetimes.try_emplace(b, BufferLifetime{value->type.num_bytes(), slot, slot});
      if (!fresh) it->second.last_step = std::max(it->second.last_step, slot);
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
