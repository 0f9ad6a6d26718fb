// Graph construction and rewriting. Course module 2.
//
// The invariants kept here: value names are unique and the by-name index finds each value
// by its name; every Value's users list holds one entry per input slot that reads it;
// every node output names that node and its position as its producer. Value and Node keep
// these fields private, so the functions below are the only code that writes them.
//
// Chapter: docs/module2-graph-ir.md#3-the-graph-ir-includeminicirgraphgraphh
#include "minic/ir/graph/graph.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace minic {

std::string_view attribute_kind_name(const AttributeValue& value) {
  static constexpr std::string_view kNames[] = {"int",    "float",   "string", "ints",
                                                "floats", "strings", "tensor", "graph"};
  return kNames[value.index()];
}

Value* Node::output(size_t index) const {
  MINIC_CHECK(index < outputs_.size());
  return outputs_[index];
}

std::string Node::describe() const {
  if (!name.empty()) return fmt::format("{} node '{}'", op, name);
  if (!outputs_.empty() && outputs_[0]) {
    return fmt::format("{} node defining %{}", op, outputs_[0]->name());
  }
  return fmt::format("{} node", op);
}

void Graph::remove_use(Value* value, Node* user) {
  auto it = std::find(value->users_.begin(), value->users_.end(), user);
  MINIC_CHECK(it != value->users_.end());
  value->users_.erase(it);
}

Value* Graph::new_value(const std::string& name) {
  if (by_name_.count(name)) fail("graph '{}': the name '{}' is defined twice", this->name, name);
  // Value's constructor is private to Graph, so make_unique cannot call it.
  values_.push_back(std::unique_ptr<Value>(new Value()));
  Value* value = values_.back().get();
  value->name_ = name;
  by_name_[name] = value;
  return value;
}

Value* Graph::add_input(const std::string& name, TensorType type) {
  Value* value = new_value(name);
  value->type = std::move(type);
  value->has_type = true;
  inputs_.push_back(value);
  return value;
}

Value* Graph::add_constant(const std::string& name, Tensor data) {
  Value* value = new_value(name);
  value->type = data.type();
  value->has_type = true;
  value->constant = std::make_shared<const Tensor>(std::move(data));
  return value;
}

Node* Graph::add_node(const std::string& op, std::vector<Value*> inputs,
                      const std::vector<std::string>& output_names, Attributes attributes,
                      const std::string& node_name) {
  // Node's constructor is private to Graph, so make_unique cannot call it.
  nodes_.push_back(std::unique_ptr<Node>(new Node()));
  Node* node = nodes_.back().get();
  node->op = op;
  node->name = node_name;
  node->attributes = std::move(attributes);
  set_inputs(node, std::move(inputs));
  for (size_t i = 0; i < output_names.size(); ++i) {
    Value* output = new_value(output_names[i]);
    output->producer_ = node;
    output->producer_output_ = static_cast<int>(i);
    node->outputs_.push_back(output);
  }
  return node;
}

Node* Graph::add_fused_node(std::unique_ptr<Graph> body, std::vector<Value*> inputs,
                            const std::vector<std::string>& output_names,
                            const std::string& node_name) {
  MINIC_CHECK(body && body->inputs().size() == inputs.size() &&
              body->outputs().size() == output_names.size());
  Node* node = add_node(std::string(kFusedOp), std::move(inputs), output_names, {}, node_name);
  node->body = std::move(body);
  return node;
}

void Graph::add_output(Value* value) { outputs_.push_back(value); }

std::unique_ptr<Graph> Graph::clone() const {
  auto copy = std::make_unique<Graph>();
  copy->name = name;
  copy->opset = opset;
  std::unordered_map<const Value*, Value*> mapped;
  auto copy_value = [&](const Value* value, Value* into) {
    into->type = value->type;
    into->has_type = value->has_type;
    into->constant = value->constant;
    mapped.emplace(value, into);
  };
  // Values in creation order, so that the copy's values() lists them in the same order.
  for (const auto& value : values_) {
    if (value->producer_) continue;
    copy_value(value.get(), copy->new_value(value->name_));
  }
  for (const Value* input : inputs_) copy->inputs_.push_back(mapped.at(input));
  for (const auto& node : nodes_) {
    std::vector<Value*> inputs;
    for (const Value* input : node->inputs_) inputs.push_back(input ? mapped.at(input) : nullptr);
    std::vector<std::string> output_names;
    for (const Value* output : node->outputs_) output_names.push_back(output->name_);
    Node* into = copy->add_node(node->op, std::move(inputs), output_names, node->attributes,
                                node->name);
    if (node->body) into->body = node->body->clone();
    for (size_t i = 0; i < node->outputs_.size(); ++i) {
      copy_value(node->outputs_[i], into->outputs_[i]);
    }
  }
  for (const Value* output : outputs_) copy->outputs_.push_back(mapped.at(output));
  return copy;
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> result;
  result.reserve(nodes_.size());
  for (const auto& node : nodes_) result.push_back(node.get());
  return result;
}

std::vector<Value*> Graph::values() const {
  std::vector<Value*> result;
  result.reserve(values_.size());
  for (const auto& value : values_) result.push_back(value.get());
  return result;
}

Value* Graph::find_value(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

bool Graph::is_graph_input(const Value* value) const {
  return std::find(inputs_.begin(), inputs_.end(), value) != inputs_.end();
}

bool Graph::is_graph_output(const Value* value) const {
  return std::find(outputs_.begin(), outputs_.end(), value) != outputs_.end();
}

void Graph::set_input(Node* node, size_t index, Value* value) {
  if (index >= node->inputs_.size()) node->inputs_.resize(index + 1, nullptr);
  Value* old = node->inputs_[index];
  if (old == value) return;
  if (old) remove_use(old, node);
  node->inputs_[index] = value;
  if (value) value->users_.push_back(node);
}

void Graph::set_inputs(Node* node, std::vector<Value*> inputs) {
  for (Value* old : node->inputs_) {
    if (old) remove_use(old, node);
  }
  node->inputs_ = std::move(inputs);
  for (Value* input : node->inputs_) {
    if (input) input->users_.push_back(node);
  }
}

void Graph::replace_all_uses_with(Value* from, Value* to) {
  MINIC_CHECK(from && to);
  if (from == to) return;
  for (Node* user : from->users_) {
    std::replace(user->inputs_.begin(), user->inputs_.end(), from, to);
  }
  // A node using `from` twice appears twice in its users; after the loop above every such
  // use reads `to`, so the users list moves over as it is.
  to->users_.insert(to->users_.end(), from->users_.begin(), from->users_.end());
  from->users_.clear();
  std::replace(outputs_.begin(), outputs_.end(), from, to);
}

void Graph::swap_producers(Value* a, Value* b) {
  MINIC_CHECK(a->producer_ && b->producer_);
  std::swap(a->producer_, b->producer_);
  std::swap(a->producer_output_, b->producer_output_);
  a->producer_->outputs_[a->producer_output_] = a;
  b->producer_->outputs_[b->producer_output_] = b;
}

void Graph::erase_node(Node* node) {
  // Check everything before changing anything, so that a refused erase leaves the graph as
  // it was.
  auto it = std::find_if(nodes_.begin(), nodes_.end(),
                         [&](const std::unique_ptr<Node>& n) { return n.get() == node; });
  MINIC_CHECK(it != nodes_.end());
  for (Value* output : node->outputs_) {
    MINIC_CHECK(output->users_.empty() && !is_graph_output(output));
  }
  for (Value* output : node->outputs_) output->producer_ = nullptr;
  for (Value* input : node->inputs_) {
    if (input) remove_use(input, node);
  }
  nodes_.erase(it);
}

void Graph::freeze_input(Value* input, Tensor data) {
  MINIC_CHECK(is_graph_input(input));
  MINIC_CHECK(data.type() == input->type);
  inputs_.erase(std::find(inputs_.begin(), inputs_.end(), input));
  input->constant = std::make_shared<const Tensor>(std::move(data));
}

void Graph::remove_unused_values() {
  std::unordered_set<const Value*> live(inputs_.begin(), inputs_.end());
  live.insert(outputs_.begin(), outputs_.end());
  for (const auto& node : nodes_) {
    live.insert(node->inputs_.begin(), node->inputs_.end());
    live.insert(node->outputs_.begin(), node->outputs_.end());
  }
  std::erase_if(values_, [&](const std::unique_ptr<Value>& value) {
    if (live.count(value.get())) return false;
    by_name_.erase(value->name_);
    return true;
  });
}

void Graph::rename_value(Value* value, const std::string& new_name) {
  if (value->name_ == new_name) return;
  if (by_name_.count(new_name)) {
    fail("graph '{}': cannot rename %{} to %{}: the name is taken", name, value->name_, new_name);
  }
  by_name_.erase(value->name_);
  value->name_ = new_name;
  by_name_[new_name] = value;
}

void Graph::sort_topologically() {
  // Kahn's algorithm, always taking the earliest ready node in the current order so that
  // an already sorted graph keeps its order exactly.
  std::unordered_map<const Node*, size_t> position;
  for (size_t i = 0; i < nodes_.size(); ++i) position[nodes_[i].get()] = i;
  std::vector<int> pending(nodes_.size(), 0);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    for (Value* input : nodes_[i]->inputs_) {
      if (input && input->producer_) ++pending[i];
    }
  }
  std::vector<bool> done(nodes_.size(), false);
  std::vector<std::unique_ptr<Node>> sorted;
  sorted.reserve(nodes_.size());
  size_t scan_from = 0;
  while (sorted.size() < nodes_.size()) {
    size_t next = scan_from;
    while (next < nodes_.size() && (done[next] || pending[next] > 0)) ++next;
    if (next == nodes_.size()) {
      for (size_t i = 0; i < nodes_.size(); ++i) {
        if (!done[i]) fail("graph '{}' has a cycle through {}", name, nodes_[i]->describe());
      }
    }
    done[next] = true;
    for (Value* output : nodes_[next]->outputs_) {
      for (Node* user : output->users_) --pending[position[user]];
    }
    sorted.push_back(std::move(nodes_[next]));
    // A user of this node may now be ready at an earlier position than `next`.
    scan_from = 0;
    while (scan_from < nodes_.size() && done[scan_from]) ++scan_from;
  }
  nodes_ = std::move(sorted);
}

std::string Graph::unique_name(const std::string& hint) const {
  if (!by_name_.count(hint)) return hint;
  for (int suffix = 1;; ++suffix) {
    std::string candidate = fmt::format("{}_{}", hint, suffix);
    if (!by_name_.count(candidate)) return candidate;
  }
}

}  // namespace minic
