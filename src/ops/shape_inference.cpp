// Shape and type inference, node by node in topological order. Course module 2.
//
// Invariant established: every value has a type, and every node's schema accepts it.
// Algorithm:
//   1. for each node in order: find its schema, check its input and output counts;
//   2. call the shape rule with a lookup of known values, freezing a graph input into a
//      constant when a rule needs its value (or a value computed from it) and the caller
//      supplies it;
//   3. set output types (checking each shape is sane);
//   4. if all inputs are known and the outputs are small, run the kernel and remember
//      the outputs as known values; if some inputs are graph inputs the caller could give,
//      or values computed from them, remember the outputs as tentative, with the inputs
//      they depend on, which step 2 freezes should a rule read them.
//
// Chapter: docs/module2-graph-ir.md#shape-inference-and-values-known-before-running
#include "minic/ops/shape_inference.h"

#include <unordered_map>

namespace minic {

namespace {

// The opset range of the schema is checked by the importer, not here: a pass may create an
// op newer than the graph's opset (Gelu, LayerNormalization) when its form does not depend
// on the opset.
void check_counts(const Node& node, const OpSchema& schema, int opset) {
  NodeContext ctx(node, opset);
  int inputs = static_cast<int>(node.inputs().size());
  // Trailing omitted inputs do not count.
  while (inputs > 0 && !node.input(inputs - 1)) --inputs;
  if (inputs < schema.min_inputs || inputs > schema.max_inputs) {
    ctx.fail("has {} inputs; {} takes {} to {}", inputs, node.op, schema.min_inputs,
          schema.max_inputs);
  }
  int outputs = static_cast<int>(node.outputs().size());
  if (outputs < schema.min_outputs || outputs > schema.max_outputs) {
    ctx.fail("has {} outputs; {} gives {} to {}", outputs, node.op, schema.min_outputs,
          schema.max_outputs);
  }
  for (size_t i = 0; i < node.inputs().size(); ++i) {
    if (node.input(i) && !node.input(i)->has_type) {
      ctx.fail("input {} (%{}) is used before it is defined", i, node.input(i)->name());
    }
  }
}

// A fused node's types are its body's: the body's inputs take the node's input types, the
// body is inferred like any graph, and its output types become the node's.
// `outer_value` gives the value the outer graph knows for an input of the node, if any.
void infer_fused_shapes(Node& node, int opset,
                        const std::function<const Tensor*(const Value*)>& outer_value) {
  Graph& body = *node.body;
  body.opset = opset;
  if (body.inputs().size() != node.inputs().size() ||
      body.outputs().size() != node.outputs().size()) {
    fail("{}: its body has {} inputs and {} outputs, the node {} and {}", node.describe(),
         body.inputs().size(), body.outputs().size(), node.inputs().size(), node.outputs().size());
  }
  for (size_t i = 0; i < node.inputs().size(); ++i) {
    if (!node.input(i) || !node.input(i)->has_type) {
      fail("{}: input {} is missing or used before it is defined", node.describe(), i);
    }
    body.inputs()[i]->type = node.input(i)->type;
    body.inputs()[i]->has_type = true;
  }
  ShapeInferenceOptions body_options;
  body_options.known_input_value = [&](const Value& input) -> const Tensor* {
    const std::vector<Value*>& inputs = node.body->inputs();
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i] == &input) return outer_value(node.input(i));
    }
    return nullptr;
  };
  infer_shapes(body, body_options);
  for (size_t i = 0; i < node.outputs().size(); ++i) {
    node.output(i)->type = body.outputs()[i]->type;
    node.output(i)->has_type = true;
  }
}

}  // namespace

std::vector<Tensor> evaluate_node(const Node& node, int opset,
                                  std::span<const Tensor* const> inputs, BodyEvaluator* bodies) {
  // A fused node runs its body; the interpreter (src/runtime) does that.
  MINIC_CHECK(!node.is_fused());
  const OpSchema* schema = op_registry().find(node.op);
  if (!schema) fail("{}: minic does not support the op {}", node.describe(), node.op);
  KernelContext ctx(node, opset, inputs, bodies);
  std::vector<Tensor> outputs;
  try {
    outputs = schema->kernel(ctx);
  } catch (const InternalError&) {
    throw;
  } catch (const Error& error) {
    // Errors raised below the kernel (a storage-only element type, say) do not know the
    // node; errors from ctx.fail() already start with it.
    std::string prefix = node.describe() + ": ";
    if (std::string_view(error.what()).starts_with(prefix)) throw;
    throw Error(prefix + error.what());
  }
  if (outputs.size() != node.outputs().size()) {
    internal_fail("{}: the kernel gave {} outputs, the node has {}",
                  node.describe(), outputs.size(), node.outputs().size());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].type() != node.output(i)->type) {
      internal_fail("{}: output {} is {} but its shape rule said {}",
                    node.describe(), i, type_string(outputs[i].type()),
                    type_string(node.output(i)->type));
    }
  }
  return outputs;
}

namespace {

// The values known before running, for the shape rules (step 2) and the propagation
// (step 4). Besides the known ones it keeps tentative values: computed from graph inputs
// whose values the caller could give (input_value) but that are not frozen yet, each with
// the inputs it depends on. A shape rule that reads one freezes those inputs first, so that
// the graph is specialised to the values its shapes came from; values no rule reads leave
// their inputs free.
class KnownValues {
 public:
  KnownValues(Graph& graph, const ShapeInferenceOptions& options)
      : graph_(graph), options_(options) {}

  // The value of `value` for a shape rule, or null: freezes what it depends on.
  const Tensor* lookup(const Value* value) {
    if (value->constant) return value->constant.get();
    if (auto it = known_.find(value); it != known_.end()) return &it->second;
    if (const Tensor* data = outer_value(value)) return data;
    if (options_.input_value && graph_.is_graph_input(value)) {
      freeze(value);
      if (value->constant) return value->constant.get();
    }
    if (auto t = tentative_.find(value); t != tentative_.end()) {
      for (const Value* input : t->second.inputs) freeze(input);
      auto [at, inserted] = known_.insert_or_assign(value, std::move(t->second.value));
      tentative_.erase(t);
      return &at->second;
    }
    return nullptr;
  }

  // The value of `value` if it is known without freezing anything, or null.
  const Tensor* peek(const Value* value) const {
    if (value->constant) return value->constant.get();
    if (auto it = known_.find(value); it != known_.end()) return &it->second;
    return outer_value(value);
  }

  void set_known(const Value* value, Tensor data) {
    known_.insert_or_assign(value, std::move(data));
  }

  // Runs `node`'s kernel when all its inputs are known or tentative: its outputs become
  // known, or tentative when some input is a graph input's given value or tentative.
  void propagate(const Node& node) {
    std::vector<const Tensor*> inputs;
    std::vector<const Value*> depends_on;
    for (const Value* input : node.inputs()) {
      const Tensor* value = nullptr;
      if (!input) {
        // an omitted optional input
      } else if (input->constant) {
        value = input->constant.get();
      } else if (auto it = known_.find(input); it != known_.end()) {
        value = &it->second;
      } else if (const Tensor* outer = outer_value(input)) {
        value = outer;
      } else if (const Tentative* t = tentative(input)) {
        value = &t->value;
        depends_on.insert(depends_on.end(), t->inputs.begin(), t->inputs.end());
      }
      if (input && !value) return;
      inputs.push_back(value);
    }
    std::vector<Tensor> outputs;
    if (depends_on.empty()) {
      outputs = evaluate_node(node, graph_.opset, inputs);
    } else {
      // A kernel that refuses the given values (an index out of range, say) reports that
      // when the graph runs; here its outputs just stay unknown.
      try {
        outputs = evaluate_node(node, graph_.opset, inputs);
      } catch (const Error&) {
        return;
      }
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (depends_on.empty()) {
        known_.insert_or_assign(node.output(i), std::move(outputs[i]));
      } else {
        tentative_.insert_or_assign(node.output(i), Tentative{std::move(outputs[i]), depends_on});
      }
    }
  }

 private:
  struct Tentative {
    Tensor value;
    std::vector<const Value*> inputs;
  };

  // The tentative value of `value`, or null. A small graph input whose value the caller
  // gives is tentative itself, depending on itself (its value is asked for once).
  // (References into an unordered_map stay valid as it grows.)
  const Tentative* tentative(const Value* value) {
    if (auto t = tentative_.find(value); t != tentative_.end()) return &t->second;
    if (!options_.input_value || !graph_.is_graph_input(value) ||
        value->type.num_elements() > options_.max_known_elements) {
      return nullptr;
    }
    std::optional<Tensor> data = options_.input_value(*value);
    if (!data) return nullptr;
    return &tentative_.emplace(value, Tentative{std::move(*data), {value}}).first->second;
  }

  // The value the caller knows for a graph input without freezing it (a body's input
  // standing for an outer value), or null.
  const Tensor* outer_value(const Value* value) const {
    if (!options_.known_input_value || !graph_.is_graph_input(value)) return nullptr;
    return options_.known_input_value(*value);
  }

  void freeze(const Value* input) {
    if (input->constant) return;
    if (std::optional<Tensor> data = options_.input_value(*input)) {
      graph_.freeze_input(graph_.find_value(input->name()), std::move(*data));
    }
  }

  Graph& graph_;
  const ShapeInferenceOptions& options_;
  std::unordered_map<const Value*, Tensor> known_;
  std::unordered_map<const Value*, Tentative> tentative_;
};

}  // namespace

void infer_shapes(Graph& graph, const ShapeInferenceOptions& options) {
  KnownValues values(graph, options);
  auto lookup = [&values](const Value* value) { return values.lookup(value); };
  auto peek = [&values](const Value* value) { return values.peek(value); };

  for (Node* node : graph.nodes()) {
    if (node->is_fused()) {
      infer_fused_shapes(*node, graph.opset, lookup);
      continue;
    }
    const OpSchema* schema = op_registry().find(node->op);
    if (!schema) fail("{}: minic does not support the op {}", node->describe(), node->op);
    check_counts(*node, *schema, graph.opset);

    ShapeContext ctx(*node, graph.opset, lookup, peek);
    std::vector<TensorType> types = schema->shape_rule(ctx);
    MINIC_CHECK(types.size() == node->outputs().size());
    for (size_t i = 0; i < types.size(); ++i) {
      check_shape(types[i].shape, types[i].dtype,
                  fmt::format("{}: output {} (%{})", node->describe(), i, node->output(i)->name()));
      node->output(i)->type = types[i];
      node->output(i)->has_type = true;
    }

    // Values the rule set itself (Shape, Size) are known whatever the inputs.
    auto& rule_values = ctx.output_values();
    for (size_t i = 0; i < rule_values.size(); ++i) {
      if (rule_values[i]) values.set_known(node->output(i), std::move(*rule_values[i]));
    }
    int64_t elements = 0;
    for (const TensorType& type : types) elements += type.num_elements();
    if (elements <= options.max_known_elements && rule_values.empty()) values.propagate(*node);
  }
}

}  // namespace minic
