// The graph verifier. Course module 2.
//
// Checks the invariants every pass must keep, in one walk over the graph in its order:
//   1. graph inputs and constants come first: each has a type and a sane shape, and a
//      constant's data has exactly its value's type;
//   2. each node, in order, reads only values defined before it (a graph input, a
//      constant, or an output of an earlier node; nullptr is an omitted optional input),
//      so the node list is a topological order and the graph is acyclic;
//   3. each node output names its node as producer, at its position, and is typed;
//   4. no value is defined twice and no two values share a name; no node appears twice;
//   5. each value's `users` lists every node that reads it, once per use, and nothing else;
//   6. the graph outputs are defined values;
//   7. a fused node's body is a valid graph whose inputs and outputs match the node's, in
//      type and in name (the names are how the text form connects the two);
//   8. a graph attribute (a control-flow body) is a valid graph, but untyped: its values
//      have types only where they are constants, since its types follow from the values
//      it runs on; the node's `captures` attribute counts inputs the node has.
// The first violation throws Error naming the node (Node::describe()) and the value.
//
// Chapter: docs/module2-graph-ir.md#the-verifier
#include "minic/ir/graph/verifier.h"

#include <map>
#include <unordered_map>
#include <unordered_set>

namespace minic {

namespace {

std::string ref(const Value* value) { return "%" + value->name(); }

class Verifier {
 public:
  // `body`: the graph is a control-flow body, whose values need not be typed (rule 8).
  Verifier(const Graph& graph, bool body) : graph_(graph), body_(body) {}

  void run() {
    for (const Value* input : graph_.inputs()) check_input(input);
    for (const Value* value : graph_.values()) {
      if (value->is_constant() && !graph_.is_graph_input(value)) check_constant(value);
    }
    nodes_ = graph_.nodes();
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (!position_.emplace(nodes_[i], i).second) {
        error("{} is listed twice in the node list", nodes_[i]->describe());
      }
    }
    for (size_t i = 0; i < nodes_.size(); ++i) check_node(nodes_[i], i);
    check_users();
    for (size_t i = 0; i < graph_.outputs().size(); ++i) {
      const Value* output = graph_.outputs()[i];
      if (!output) error("graph output {} is null", i);
      if (!defined_.count(output)) {
        error("graph output {} {} is not defined by an input, a constant or a node", i,
              ref(output));
      }
    }
  }

 private:
  template <typename... Args>
  [[noreturn]] void error(fmt::format_string<Args...> format, Args&&... args) const {
    fail("graph '{}': {}", graph_.name, fmt::format(format, std::forward<Args>(args)...));
  }

  void check_typed(const Value* value, const std::string& what) {
    if (!value->has_type && body_ && !value->is_constant()) return;
    if (!value->has_type) error("{} has no type", what);
    check_shape(value->type.shape, value->type.dtype,
                fmt::format("graph '{}': {} of type {}", graph_.name, what,
                            type_string(value->type)));
  }

  // Adds `value` to the defined values; fails on a second definition or a shared name.
  void define(const Value* value, const std::string& what) {
    if (!defined_.insert(value).second) error("{} is defined twice", what);
    auto [it, inserted] = by_name_.emplace(value->name(), value);
    if (!inserted) error("{} has the same name as another value", what);
    order_.push_back(value);
  }

  void check_input(const Value* input) {
    if (!input) error("a graph input is null");
    std::string what = fmt::format("graph input {}", ref(input));
    if (input->is_constant()) error("{} also holds constant data", what);
    if (input->producer()) error("{} has a producer, {}", what, input->producer()->describe());
    check_typed(input, what);
    define(input, what);
  }

  void check_constant(const Value* value) {
    std::string what = fmt::format("constant {}", ref(value));
    if (value->producer()) error("{} has a producer, {}", what, value->producer()->describe());
    check_typed(value, what);
    if (value->constant->type() != value->type) {
      error("{} holds data of type {}, but its type is {}", what,
            type_string(value->constant->type()), type_string(value->type));
    }
    define(value, what);
  }

  void check_node(const Node* node, size_t index) {
    std::string where = node->describe();
    if (node->op.empty()) error("{} has no op", where);
    for (size_t i = 0; i < node->inputs().size(); ++i) {
      const Value* input = node->input(i);
      if (!input) continue;  // an omitted optional input
      if (!defined_.count(input)) {
        if (input->producer() && position_.count(input->producer())) {
          error("{}: input {} {} is used before its definition by {}", where, i, ref(input),
                input->producer()->describe());
        }
        error("{}: input {} {} is not defined in the graph", where, i, ref(input));
      }
      ++uses_[input][index];
    }
    for (size_t i = 0; i < node->outputs().size(); ++i) {
      const Value* output = node->output(i);
      if (!output) error("{}: output {} is null", where, i);
      std::string what = fmt::format("{}: output {} {}", where, i, ref(output));
      if (output->producer() != node || output->producer_output() != static_cast<int>(i)) {
        error("{} does not name this node (output {}) as its producer", what, i);
      }
      if (output->is_constant()) error("{} also holds constant data", what);
      check_typed(output, what);
      define(output, what);
    }
    if (node->is_fused()) check_fused(node, where);
    check_graph_attributes(node, where);
  }

  void check_graph_attributes(const Node* node, const std::string& where) {
    for (const auto& [name, attribute] : node->attributes) {
      const auto* body = std::get_if<GraphAttribute>(&attribute);
      if (!body) continue;
      if (!*body) error("{}: graph attribute '{}' is null", where, name);
      try {
        Verifier(**body, true).run();
      } catch (const Error& e) {
        error("in attribute '{}' of {}: {}", name, where, e.what());
      }
    }
    auto captures = node->attributes.find("captures");
    if (captures == node->attributes.end()) return;
    const int64_t* count = std::get_if<int64_t>(&captures->second);
    if (!count || *count < 0 || *count > static_cast<int64_t>(node->inputs().size())) {
      error("{}: attribute 'captures' must count some of its {} inputs", where,
            node->inputs().size());
    }
  }

  // A fused node's body is a graph of its own, verified as one, whose inputs and outputs
  // match the node's one for one in type.
  void check_fused(const Node* node, const std::string& where) {
    const Graph& body = *node->body;
    if (node->op != kFusedOp) error("{} has a body but its op is not {}", where, kFusedOp);
    if (body.inputs().size() != node->inputs().size() ||
        body.outputs().size() != node->outputs().size()) {
      error("{}: its body has {} inputs and {} outputs, the node {} and {}", where,
            body.inputs().size(), body.outputs().size(), node->inputs().size(),
            node->outputs().size());
    }
    for (size_t i = 0; i < node->inputs().size(); ++i) {
      if (!node->input(i)) error("{}: a fused node cannot omit input {}", where, i);
      if (body.inputs()[i]->type != node->input(i)->type) {
        error("{}: body input {} is {} but the node's input is {}", where, i,
              type_string(body.inputs()[i]->type), type_string(node->input(i)->type));
      }
      if (body.inputs()[i]->name() != node->input(i)->name()) {
        error("{}: body input {} is {} but the node's input is {}", where, i,
              ref(body.inputs()[i]), ref(node->input(i)));
      }
    }
    for (size_t i = 0; i < node->outputs().size(); ++i) {
      if (body.outputs()[i] && body.outputs()[i]->type != node->output(i)->type) {
        error("{}: body output {} is {} but the node's output is {}", where, i,
              type_string(body.outputs()[i]->type), type_string(node->output(i)->type));
      }
      if (body.outputs()[i] && body.outputs()[i]->name() != node->output(i)->name()) {
        error("{}: body output {} is {} but the node's output is {}", where, i,
              ref(body.outputs()[i]), ref(node->output(i)));
      }
    }
    try {
      verify_graph(body);
    } catch (const Error& e) {
      error("in the body of {}: {}", where, e.what());
    }
  }

  // Compares each value's `users` with the uses counted while checking the nodes, in the
  // order of definition and of the user list so that the first problem found is stable.
  void check_users() {
    for (const Value* value : order_) {
      const std::map<size_t, int>& uses = uses_[value];
      std::map<size_t, int> listed;
      for (const Node* user : value->users()) {
        auto it = user ? position_.find(user) : position_.end();
        if (it == position_.end()) {
          error("{} lists a user that is not a node of the graph", ref(value));
        }
        ++listed[it->second];
      }
      for (const Node* user : value->users()) {
        size_t index = position_.at(user);
        auto it = uses.find(index);
        int count = it == uses.end() ? 0 : it->second;
        if (count != listed[index]) {
          error("{} lists {} as a user {} times, but the node uses it {} times", ref(value),
                user->describe(), listed[index], count);
        }
      }
      for (const auto& [index, count] : uses) {
        if (!listed.count(index)) {
          error("{} does not list {} as a user, but the node uses it {} times", ref(value),
                nodes_[index]->describe(), count);
        }
      }
    }
  }

  const Graph& graph_;
  bool body_;
  std::vector<Node*> nodes_;
  std::unordered_map<const Node*, size_t> position_;  // index in nodes_
  std::unordered_set<const Value*> defined_;
  std::vector<const Value*> order_;  // the defined values in order of definition
  std::unordered_map<std::string, const Value*> by_name_;
  // For each value read by a node: the index of each node reading it, and how many times.
  std::unordered_map<const Value*, std::map<size_t, int>> uses_;
};

}  // namespace

void verify_graph(const Graph& graph) { Verifier(graph, false).run(); }

}  // namespace minic
