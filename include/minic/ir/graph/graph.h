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
struct Node;

struct Value {
  std::string name;          // unique within its graph
  TensorType type;
  bool has_type = false;     // false only while the importer has not inferred it yet
  Node* producer = nullptr;  // null for graph inputs and constants
  int producer_output = 0;   // which output of `producer` this value is
  std::vector<Node*> users;  // one entry per use: a node using it twice appears twice
  // The data of a constant value (an ONNX initializer or a folded result).
  std::shared_ptr<const Tensor> constant;

  bool is_constant() const { return constant != nullptr; }
};

// The op of a fused node (see Node::body).
inline constexpr std::string_view kFusedOp = "Fused";

struct Node {
  std::string op;            // the ONNX op type: "Conv", "MatMul", ... or kFusedOp
  std::string name;          // the node's name in the model (may be empty), for messages
  std::vector<Value*> inputs;  // an omitted optional input is nullptr
  std::vector<Value*> outputs;
  Attributes attributes;
  // A fused node (op kFusedOp) is one fusion group: a graph of its own that becomes one
  // kernel. The body's inputs stand for the node's inputs and its outputs for the node's
  // outputs, one for one and of the same types and names (so a fused node's inputs are
  // distinct values). Null for every other node.
  std::unique_ptr<Graph> body;

  bool is_fused() const { return body != nullptr; }
  bool has_input(size_t index) const { return index < inputs.size() && inputs[index]; }
  // "Conv node 'conv1'" or "Conv node defining %y" when the node has no name.
  std::string describe() const;
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
  // Makes every user of `from` (and the graph outputs) use `to` instead.
  void replace_all_uses(Value* from, Value* to);
  // Removes a node whose outputs have no users and are not graph outputs.
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

  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::unordered_map<std::string, Value*> by_name_;
};

}  // namespace minic
