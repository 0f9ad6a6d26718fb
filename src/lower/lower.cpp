// The lowering driver: graph kernels (plain or fused nodes) to loop IR functions.
//
// Course module 3. See include/minic/lower/lower.h. Invariant: the function computes what
// the node's reference kernel (or its fused body, op by op) computes, with the node's
// inputs and outputs as parameters. Algorithm for one kernel:
//   1. a parameter per distinct input value, then one per output (KernelBuilder);
//   2. the ops in order -- the node itself, or its body's nodes -- each given its inputs
//      as ComputeTensors (parameters, or the tensors earlier rules returned) and run
//      through its compute rule;
//   3. a returned tensor that leaves the kernel is bound to its output parameter at once,
//      so that its stage, when emitted, writes the output directly;
//   4. every output written (KernelBuilder::write), the function finished and verified.
//
//   %y = fused(%a, %b) @add_relu { %s = Add(%a, %b); %y = Relu(%s) }
//   →
//   func @add_relu(a: f32[8], b: f32[8], y: f32[8]) {
//     for i0 in 0..8 {
//       block relu(v0 = spatial(8) i0) {
//         reads(a[v0], b[v0]) writes(y[v0])
//         y[v0] = max(a[v0] + b[v0], 0.0)
//       }
//     }
//   }
//
// Chapter: docs/module3-loop-ir.md#5-lowering-compute-rules
#include "minic/lower/lower.h"

#include "minic/ir/loop/verifier.h"
#include "kernel_builder.h"

#include <cctype>
#include <set>
#include <unordered_map>

namespace minic {

namespace {

// Where the ops of one kernel find their inputs: the tensor of each value computed or
// passed in so far, and the constant behind each value (for rules that read one).
struct KernelValues {
  std::unordered_map<const Value*, ComputeTensor> tensors;
  std::unordered_map<const Value*, const Tensor*> constants;
};

// "no compute rule for op X (node N[, in fused node M])".
std::string rule_error(const Node& node, const Node* fused) {
  std::string where = node.name.empty() ? fmt::format("defining %{}", node.output(0)->name())
                                        : fmt::format("'{}'", node.name);
  if (fused) {
    return fmt::format("no compute rule for op {} (node {}, in fused node {})", node.op, where,
                       fused->name.empty() ? "defining %" + fused->output(0)->name() : fused->name);
  }
  return fmt::format("no compute rule for op {} (node {})", node.op, where);
}

// Step 2 for one op: its rule, run on its inputs' tensors.
std::vector<ComputeTensor> lower_op(const Node& node, int opset, const Target& target,
                                    KernelBuilder& builder, const KernelValues& values,
                                    const Node* fused) {
  if (node.is_fused()) {
    fail("{}: a fused node inside a fused node cannot be lowered", node.describe());
  }
  const ComputeRule* rule = find_compute_rule(node.op);
  if (!rule) throw NoComputeRule(rule_error(node, fused));
  std::vector<std::optional<ComputeTensor>> inputs;
  for (const Value* input : node.inputs()) {
    if (!input) {
      inputs.emplace_back(std::nullopt);
      continue;
    }
    auto found = values.tensors.find(input);
    if (found == values.tensors.end()) {
      // A fused node's body reads only the node's inputs and its own results; a constant
      // defined inside the body is no parameter of the kernel.
      fail("{}: its input %{} is defined inside the fused body, not passed to it: a fused "
           "kernel reads constants as inputs of the fused node", node.describe(),
           input->name());
    }
    inputs.emplace_back(found->second);
  }
  auto constants = [&node, &values](size_t index) -> const Tensor* {
    auto it = values.constants.find(node.input(index));
    return it == values.constants.end() ? nullptr : it->second;
  };
  ComputeContext ctx(node, opset, target, builder, std::move(inputs), constants);
  std::vector<ComputeTensor> outputs = (*rule)(ctx);
  if (outputs.size() != node.outputs().size()) {
    internal_fail("the compute rule of {} gives {} outputs for {}",
                  node.describe(), outputs.size(), node.outputs().size());
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (outputs[k].type() != node.output(k)->type) {
      internal_fail("the compute rule of {} gives output {} as {}, "
                    "but its type is {}",
                    node.describe(), k, type_string(outputs[k].type()),
                    type_string(node.output(k)->type));
    }
  }
  return outputs;
}

void check_static(const Node& node, const Value& value) {
  if (!value.has_type) {
    fail("{}: value %{} has no inferred type; lowering needs static shapes", node.describe(),
         value.name());
  }
  for (int64_t dim : value.type.shape) {
    if (dim < 0) fail("{}: value %{} has a dynamic dimension", node.describe(), value.name());
  }
}

}  // namespace

bool has_compute_rule(std::string_view op) { return find_compute_rule(op) != nullptr; }

bool can_lower(const Node& node) {
  if (!node.is_fused()) return has_compute_rule(node.op);
  for (const Node* inner : node.body->nodes()) {
    if (inner->is_fused() || !has_compute_rule(inner->op)) return false;
  }
  return true;
}

std::string kernel_name(const Node& node) {
  std::string source = node.name;
  if (source.empty()) {
    // The op without its domain ("minic.NchwcConv" is "NchwcConv"), then the result's name.
    const std::string op = node.op.substr(node.op.rfind('.') + 1);
    source = op + "_" + (node.outputs().empty() ? "" : node.output(0)->name());
  }
  std::string name;
  for (char c : source) {
    bool word = std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    if (word) {
      name += c;
    } else if (!name.empty() && name.back() != '_') {
      name += '_';
    }
  }
  while (!name.empty() && name.back() == '_') name.pop_back();
  if (name.empty()) return "kernel";
  if (std::isdigit(static_cast<unsigned char>(name[0]))) name = "k_" + name;
  return name;
}

loop::PrimFunc lower_node(const Node& node, int opset, const Target& target) {
  // Step 1: the parameters.
  KernelBuilder builder;
  KernelValues values;
  for (const Value* input : node.inputs()) {
    if (!input || values.tensors.count(input)) continue;
    check_static(node, *input);
    values.tensors.emplace(input, builder.add_input(input->name(), input->type));
    if (input->constant) values.constants[input] = input->constant.get();
  }
  std::vector<loop::Buffer> outputs;
  for (const Value* output : node.outputs()) {
    check_static(node, *output);
    outputs.push_back(builder.add_output(output->name(), output->type));
  }

  // Steps 2 and 3: the ops, and the outputs they leave the kernel by.
  std::vector<const Node*> ops = {&node};
  std::vector<const Value*> kernel_outputs(node.outputs().begin(), node.outputs().end());
  if (node.is_fused()) {
    const Graph& body = *node.body;
    MINIC_CHECK(body.inputs().size() == node.inputs().size());
    for (size_t k = 0; k < node.inputs().size(); ++k) {
      const Value* outer = node.input(k);
      values.tensors.emplace(body.inputs()[k], values.tensors.at(outer));
      if (outer->constant) values.constants[body.inputs()[k]] = outer->constant.get();
    }
    kernel_outputs.assign(body.outputs().begin(), body.outputs().end());
    ops = {};
    for (const Node* inner : body.nodes()) ops.push_back(inner);
  }
  const Node* fused = node.is_fused() ? &node : nullptr;
  for (const Node* op : ops) {
    for (const Value* output : op->outputs()) check_static(node, *output);
    std::vector<ComputeTensor> results = lower_op(*op, opset, target, builder, values, fused);
    for (size_t k = 0; k < results.size(); ++k) {
      const Value* value = op->output(k);
      values.tensors.emplace(value, results[k]);
      for (size_t j = 0; j < kernel_outputs.size(); ++j) {
        if (kernel_outputs[j] == value) builder.bind(results[k], outputs[j]);
      }
    }
  }

  // Step 4: the outputs written, and the function checked.
  for (size_t j = 0; j < kernel_outputs.size(); ++j) {
    builder.write(values.tensors.at(kernel_outputs[j]), outputs[j]);
  }
  loop::PrimFunc func = builder.finish(kernel_name(node));
  loop::verify_func(func);
  return func;
}

loop::LoopModule lower_graph(const Graph& graph, const Target& target,
                             std::vector<const Node*>* skipped,
                             const std::set<const Node*>& leave_out) {
  loop::LoopModule module;
  std::set<std::string> names;
  for (const Node* node : graph.nodes()) {
    if (leave_out.count(node)) continue;
    loop::PrimFunc func;
    try {
      func = lower_node(*node, graph.opset, target);
    } catch (const NoComputeRule&) {
      if (!skipped) throw;
      skipped->push_back(node);
      continue;
    } catch (const InternalError& error) {
      throw InternalError(fmt::format("lowering {}: {}", node->describe(), error.reason()));
    } catch (const Error& error) {
      // Errors of the op's own checks (ctx.fail) name the node already.
      std::string message = error.what();
      std::string prefix = node->describe() + ": ";
      if (message.starts_with(prefix)) message.erase(0, prefix.size());
      throw Error(fmt::format("lowering {}: {}", node->describe(), message));
    }
    std::string base = func.name;
    for (int k = 1; names.count(func.name); ++k) func.name = fmt::format("{}_{}", base, k);
    names.insert(func.name);
    module.functions.push_back(std::move(func));
  }
  return module;
}

}  // namespace minic
