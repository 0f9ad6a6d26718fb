// Shape and type inference over a whole graph, and evaluation of a node or a graph.
//
// Course module 2. Walks the nodes in topological order, checks each against its op's
// schema (opset range, input and output counts), and sets the type of every output from
// the op's shape rule. Along the way it tracks the values that are known before running
// -- constants, and small results computed from them, such as the Shape → Gather →
// Concat chains exporters emit -- because some shape rules (Reshape, Expand, Slice, ...)
// need their inputs' values.
//
// Chapter: docs/module2-graph-ir.md#shape-inference-and-values-known-before-running
#pragma once

#include "minic/ops/op.h"

#include <functional>
#include <optional>

namespace minic {

struct ShapeInferenceOptions {
  // Asked when a shape rule needs the value of a graph input. If it returns a tensor, the
  // input is frozen into a constant with that value (a static-shape specialisation: the
  // value determines output shapes). Unset or nullopt: the rule's error stands.
  std::function<std::optional<Tensor>(const Value& input)> input_value;
  // Values of graph inputs known without freezing them: a fused node's body sees, through
  // this, the values its outer graph knows for the inputs (a Reshape's constant shape).
  std::function<const Tensor*(const Value& input)> known_input_value;
  // Results with at most this many elements are computed during inference so that shape
  // rules further down can read them.
  int64_t max_known_elements = 4096;
};

// Sets the type of every node output. Throws Error naming the node on any problem.
void infer_shapes(Graph& graph, const ShapeInferenceOptions& options = {});

// Runs one node's reference kernel on `inputs` (null for omitted optional inputs) and
// checks that the results have the node's inferred output types. A control-flow node runs
// its bodies through `bodies` when given (see BodyEvaluator).
std::vector<Tensor> evaluate_node(const Node& node, int opset,
                                  std::span<const Tensor* const> inputs,
                                  BodyEvaluator* bodies = nullptr);

// Runs a typed graph node by node through the reference kernels on `inputs` (one per
// graph input, of its type; the caller checks) and returns its outputs in order
// (src/ops/evaluate_graph.cpp). The reference interpreter and control-flow bodies use it.
std::vector<Tensor> evaluate_graph(const Graph& graph, std::span<const Tensor* const> inputs);

}  // namespace minic
