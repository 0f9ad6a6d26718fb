// The graph IR: a dataflow graph of ONNX-level ops on statically shaped tensors.
//
// Course module 2. A Graph owns its Nodes and Values. A Value is one tensor: a graph
// input, a constant (it holds its data), or the output of exactly one Node (SSA). A
// Node applies an op ("Conv", "Relu", ...) to input Values with attributes and defines
// output Values. Every Value knows its producer and its users, and the graph keeps its
// nodes in a topological order: a node comes after the producers of all its inputs.
//
//   graph g(%x: f32[1,4]) -> (%y: f32[1,4]) {
//     %c = const f32[4] dense<[1, 2, 3, 4]>
//     %y = Add(%x, %c) : f32[1,4]
//     return %y
//   }
//
// Chapter: docs/module2-graph-ir.md#3-the-graph-ir-includeminicirgraphgraphh
#pragma once

#include "minic/ir/graph/attribute.h"
#include "minic/tensor/tensor.h"

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace minic {

class Graph;
class Node;

// One tensor of a graph. Its fields are of two kinds.
//
// Private, changed only by Graph, because each mirrors something else the graph holds:
// the name (the key of Graph's by-name index: Graph::rename_value renames), the producer
// and the position among its outputs (the producer's output list holds the value there),
// and the users (one entry per input slot of a node that reads the value). A pass that
// could write these could leave find_value, erase_node or the verifier reading stale
// pointers.
//
// Public, because no other field repeats them: the type (shape inference sets it;
// has_type says it has been set) and a constant's data (Graph::add_constant and
// freeze_input give it; the verifier checks that it has the value's type and that no
// graph input or node result holds data).
class Value {
 public:
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;

  TensorType type;
  bool has_type = false;  // false only while the importer has not inferred it yet
  // The data of a constant value (an ONNX initializer or a folded result).
  std::shared_ptr<const Tensor> constant;

  // Unique within its graph.
  const std::string& name() const { return name_; }
  // The node that defines this value; null for graph inputs and constants.
  Node* producer() const { return producer_; }
  // Which output of producer() this value is.
  int producer_output() const { return producer_output_; }
  // The nodes that read this value, one entry per use: a node that reads it twice
  // appears twice.
  const std::vector<Node*>& users() const { return users_; }
  bool is_constant() const { return constant != nullptr; }

 private:
  friend class Graph;
  // Defined only by the verifier's tests, which break these invariants on purpose.
  friend struct GraphTestAccess;
  Value() = default;

  std::string name_;
  Node* producer_ = nullptr;
  int producer_output_ = 0;
  std::vector<Node*> users_;
};

// The op of a fused node (see Node::body).
inline constexpr std::string_view kFusedOp = "Fused";

// One op applied to input values, defining output values. The inputs and outputs are
// private and change only through Graph (add_node, set_input, set_inputs,
// replace_all_uses_with, swap_producers), because the values' users lists and producers
// mirror them. The op, the node's name and its attributes are public: a rewrite may turn a
// node into another op in place, and nothing else refers to them. So is the body of a
// fused node, a graph of its own that the verifier checks against the node's inputs and
// outputs.
class Node {
 public:
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  std::string op;    // the ONNX op type: "Conv", "MatMul", ... or kFusedOp
  std::string name;  // the node's name in the model (may be empty), for messages
  Attributes attributes;
  // A fused node (op kFusedOp) is one fusion group: a graph of its own that becomes one
  // kernel. The body's inputs stand for the node's inputs and its outputs for the node's
  // outputs, one for one and of the same types and names (so a fused node's inputs are
  // distinct values). Null for every other node.
  std::unique_ptr<Graph> body;

  // The values the node reads, in order; an omitted optional input is null.
  const std::vector<Value*>& inputs() const { return inputs_; }
  // Input `index`, or null where it is omitted: written as omitted, or past the end of
  // the list (ONNX lets a node leave out trailing optional inputs).
  Value* input(size_t index) const { return index < inputs_.size() ? inputs_[index] : nullptr; }
  bool has_input(size_t index) const { return input(index) != nullptr; }
  // The values the node defines, in order; never null.
  const std::vector<Value*>& outputs() const { return outputs_; }
  // Output `index`, which must exist (an internal error otherwise).
  Value* output(size_t index) const;

  bool is_fused() const { return body != nullptr; }
  // "Conv node 'conv1'" or "Conv node defining %y" when the node has no name.
  std::string describe() const;

 private:
  friend class Graph;
  friend struct GraphTestAccess;  // see Value
  Node() = default;

  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&&) = default;
  Graph& operator=(Graph&&) = default;

  std::string name = "main";
  int opset = 0;  // the version of the default ONNX op set the graph's nodes follow

  // --- building -------------------------------------------------------------------------
  // A new graph input of the given type.
  Value* add_input(const std::string& name, TensorType type);
  // A new constant value holding `data`.
  Value* add_constant(const std::string& name, Tensor data);
  // A new node appended at the end of the node list, with fresh output values named
  // `output_names` (their types unset until set_type or shape inference).
  Node* add_node(const std::string& op, std::vector<Value*> inputs,
                 const std::vector<std::string>& output_names, Attributes attributes = {},
                 const std::string& node_name = "");
  // A new fused node whose body is `body` (see Node::body), appended at the end.
  Node* add_fused_node(std::unique_ptr<Graph> body, std::vector<Value*> inputs,
                       const std::vector<std::string>& output_names,
                       const std::string& node_name = "");
  // Appends `value` to the graph's outputs.
  void add_output(Value* value);
  // A copy of the graph: the same values (names, types, shared constant data), nodes,
  // attributes (graph attributes shared) and fused bodies (copied), in the same order.
  std::unique_ptr<Graph> clone() const;

  // --- reading --------------------------------------------------------------------------
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  // Nodes in topological order.
  std::vector<Node*> nodes() const;
  size_t num_nodes() const { return nodes_.size(); }
  // Every value the graph holds (inputs, constants, node outputs) in creation order.
  std::vector<Value*> values() const;
  Value* find_value(const std::string& name) const;
  bool is_graph_input(const Value* value) const;
  bool is_graph_output(const Value* value) const;

  // --- rewriting ------------------------------------------------------------------------
  // Every edit of a node's inputs goes through these, so each value's users list stays
  // exactly the uses. `node` must be a node of this graph and a value one of its values.
  // None of them reorders nodes: a rewrite that reads a later node's result calls
  // sort_topologically afterwards.
  //
  // Makes input `index` of `node` read `value` (null: the input is omitted). An index
  // past the end extends the input list, the inputs in between omitted.
  void set_input(Node* node, size_t index, Value* value);
  // Makes `node` read `inputs` in place of all its inputs.
  void set_inputs(Node* node, std::vector<Value*> inputs);
  // Makes every use of `from` (node inputs and graph outputs) use `to` instead.
  void replace_all_uses_with(Value* from, Value* to);
  // Two node results trade places: `a` becomes the output that `b`'s producer defined,
  // at its position, and `b` the one `a`'s producer defined. Uses stay where they are.
  void swap_producers(Value* a, Value* b);
  // Removes a node whose outputs have no users and are not graph outputs. Any other node
  // is refused (an internal error: the pass is wrong) and the graph stays as it was.
  void erase_node(Node* node);
  // Turns a graph input into a constant holding `data` (of the input's type).
  void freeze_input(Value* input, Tensor data);
  // Removes values that are no longer inputs, outputs, or used or defined by any node.
  void remove_unused_values();
  // Gives `value` the name `new_name`; throws Error if another value has that name.
  void rename_value(Value* value, const std::string& new_name);
  // Reorders nodes topologically (stable: keeps the current order where it is valid).
  // Throws Error naming a node on a cycle if there is one.
  void sort_topologically();

  // A name not yet used by any value, built from `hint`.
  std::string unique_name(const std::string& hint) const;

 private:
  Value* new_value(const std::string& name);
  // Removes one entry for `user` from the users of `value`: one use has gone.
  static void remove_use(Value* value, Node* user);

  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::unordered_map<std::string, Value*> by_name_;
};

}  // namespace minic
