// The `fuse-ops` pass: operator fusion by fusion kinds and post-dominators.
//
// Course module 2. Running a graph op by op writes every intermediate tensor to memory and
// reads it back. Fusion groups ops so that each group becomes one kernel: a Conv computes
// an output element, adds the residual, applies Relu and stores once. Which ops may share
// a kernel follows from each op's fusion kind (OpSchema::fusion), ordered from the easiest
// to fuse to the hardest: elementwise < broadcast < injective < reduction < out_fusable <
// opaque. The rules are those of TVM's FuseOps:
//   - an out_fusable anchor (Conv, MatMul, Gemm, pools) absorbs its elementwise/broadcast
//     consumers up to its immediate post-dominator, when every edge on the way is
//     elementwise (each consumer reads the anchor's result at the point it writes);
//   - an elementwise or broadcast op joins its post-dominator when the paths there are at
//     most injective and end in an injective, reduction or already fused anchor group:
//     elementwise chains fuse, a reduction takes in its elementwise producers;
//   - an injective op joins its post-dominator through injective paths (second phase, so
//     that anchors take their consumers first);
//   - a reduction takes in producers only, and an opaque op stays alone.
// Fusing `a` with its immediate post-dominator `d` merges every node on every path from a
// to d: all of them flow into d, so no value leaves the group and comes back, and the
// groups stay acyclic. Each group also holds at most one anchor.
//
// Precondition: a valid graph. The default pipeline runs fold-constants, fold-batchnorm
// and dce first, so the groups hold only work left to do at run time (an unfolded
// BatchNormalization is a broadcast op and fuses too: Conv → BatchNormalization → Relu).
// Invariant kept: the graph computes the same outputs, under the same value names. Each
// group of two or more nodes becomes one fused node (Node::body) whose body holds the
// group's nodes unchanged, whose inputs are the values the group reads from outside it,
// constants included, and whose outputs are the group's values used outside it. A group of
// one node stays a plain node: it is a kernel of its own either way; so does a group whose
// results nothing reads (dead code, for dce). Fused nodes already in the graph are opaque.
// Values nothing uses any more are dropped, as dce does.
//
// Algorithm (steps 1-3 in fusion_groups.cpp, over the tree of dominators.cpp):
//   1. give every node its fusion kind, and every edge (producer → user) the kind of the
//      user, or elementwise for a broadcast user whose output has the input's shape;
//   2. build the post-dominator tree (dominators.h); graph outputs, and nodes nobody
//      reads, lead to the exit; for each node, note the largest edge kind on its paths to
//      its immediate post-dominator;
//   3. grouping, in two phases over the nodes in order, with a union-find of groups: the
//      rules above, each merge checked against the fusion kinds of every group met on the
//      paths;
//   4. replace each group of 2+ nodes by a fused node named after its ops (conv_add_relu,
//      made unique), and restore the topological order.
//
// Before:
//   %0 = Conv(%x, %w, %b) {kernel_shape=[3,3], pads=[1,1,1,1]} : f32[1,8,8,8]
//   %1 = Add(%0, %x) : f32[1,8,8,8]
//   %y = Relu(%1) : f32[1,8,8,8]
// After:
//   %y = fused(%x, %w, %b) : f32[1,8,8,8] @conv_add_relu {
//     %0 = Conv(%x, %w, %b) {kernel_shape=[3,3], pads=[1,1,1,1]} : f32[1,8,8,8]
//     %1 = Add(%0, %x) : f32[1,8,8,8]
//     %y = Relu(%1) : f32[1,8,8,8]
//   }
//
// Chapter: docs/module2-graph-passes.md#6-operator-fusion-fuse-ops
#include "minic/passes/graph/fuse_ops.h"
#include "minic/passes/pass_registry.h"

#include "fusion_groups.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace minic {

namespace {

// The nodes of one group in graph order, what they read from outside and what is read of
// them from outside.
struct GroupParts {
  std::vector<Node*> members;
  std::vector<Value*> inputs;
  std::vector<Value*> outputs;
};

GroupParts group_parts(const Graph& graph, std::vector<Node*> members) {
  GroupParts parts;
  std::unordered_set<const Node*> inside(members.begin(), members.end());
  std::unordered_set<const Value*> seen;
  for (Node* member : members) {
    for (Value* input : member->inputs()) {
      if (!input || (input->producer() && inside.count(input->producer()))) continue;
      if (seen.insert(input).second) parts.inputs.push_back(input);
    }
  }
  for (Node* member : members) {
    for (Value* output : member->outputs()) {
      bool used_outside = graph.is_graph_output(output) ||
                          std::any_of(output->users().begin(), output->users().end(),
                                      [&](const Node* user) { return !inside.count(user); });
      if (used_outside) parts.outputs.push_back(output);
    }
  }
  parts.members = std::move(members);
  return parts;
}

// "conv_add_relu": the group's first four distinct ops in order, lower case, without a
// domain ("minic.NchwcConv" is "nchwcconv").
std::string group_name_hint(const std::vector<Node*>& members) {
  std::vector<std::string> ops;
  for (const Node* member : members) {
    std::string op;
    const std::string_view name = member->op;
    for (unsigned char c : name.substr(name.rfind('.') + 1)) op += static_cast<char>(std::tolower(c));
    if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
  }
  if (ops.size() > 4) ops.resize(4);
  return fmt::format("{}", fmt::join(ops, "_"));
}

// The body of a fused node: copies of the group's nodes reading body inputs named like
// the values they stand for; the group's outputs keep their names too.
std::unique_ptr<Graph> make_body(const Graph& graph, const GroupParts& parts,
                                 const std::string& name) {
  auto body = std::make_unique<Graph>();
  body->name = name;
  body->opset = graph.opset;
  std::unordered_map<const Value*, Value*> inner;
  for (Value* input : parts.inputs) {
    Value* copy = body->add_input(input->name(), input->type);
    copy->has_type = input->has_type;
    inner[input] = copy;
  }
  for (const Node* member : parts.members) {
    std::vector<Value*> inputs;
    for (const Value* input : member->inputs()) {
      inputs.push_back(input ? inner.at(input) : nullptr);
    }
    std::vector<std::string> names;
    for (const Value* output : member->outputs()) names.push_back(output->name());
    Node* copy = body->add_node(member->op, std::move(inputs), names, member->attributes,
                                member->name);
    for (size_t k = 0; k < member->outputs().size(); ++k) {
      copy->output(k)->type = member->output(k)->type;
      copy->output(k)->has_type = member->output(k)->has_type;
      inner[member->output(k)] = copy->output(k);
    }
  }
  for (const Value* output : parts.outputs) body->add_output(inner.at(output));
  return body;
}

// Replaces the group's nodes by one fused node defining the group's outputs under their
// names: the old values step aside under temporary names, the fused node takes over their
// uses, and the group's nodes, now unused, are erased (last first, so that each is unused
// when its turn comes). The fused node is appended; the caller sorts the graph.
void replace_by_fused_node(Graph& graph, const GroupParts& parts, const std::string& name) {
  std::unique_ptr<Graph> body = make_body(graph, parts, name);
  std::vector<std::string> names;
  for (Value* output : parts.outputs) {
    names.push_back(output->name());
    graph.rename_value(output, graph.unique_name(output->name() + ".unfused"));
  }
  Node* fused = graph.add_fused_node(std::move(body), parts.inputs, names, name);
  for (size_t k = 0; k < parts.outputs.size(); ++k) {
    fused->output(k)->type = parts.outputs[k]->type;
    fused->output(k)->has_type = parts.outputs[k]->has_type;
    graph.replace_all_uses_with(parts.outputs[k], fused->output(k));
  }
  for (auto it = parts.members.rbegin(); it != parts.members.rend(); ++it) {
    graph.erase_node(*it);
  }
}

}  // namespace

void fuse_operators(Graph& graph, const Target& target) {
  std::vector<Node*> nodes = graph.nodes();
  std::vector<int> group_of = find_fusion_groups(graph, target);

  // Collect each group's nodes, in graph order; order the groups by their first node.
  std::vector<std::vector<Node*>> groups;
  std::unordered_map<int, size_t> index_of_group;
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto [it, inserted] = index_of_group.emplace(group_of[i], groups.size());
    if (inserted) groups.emplace_back();
    groups[it->second].push_back(nodes[i]);
  }

  std::set<std::string> node_names;
  for (const Node* node : nodes) node_names.insert(node->name);
  for (std::vector<Node*>& members : groups) {
    if (members.size() < 2) continue;
    GroupParts parts = group_parts(graph, std::move(members));
    // A group nothing reads is dead code: it stays as it is, for dce to remove.
    if (parts.outputs.empty()) continue;
    std::string hint = group_name_hint(parts.members);
    std::string name = hint;
    for (int suffix = 1; node_names.count(name); ++suffix) {
      name = fmt::format("{}_{}", hint, suffix);
    }
    node_names.insert(name);
    replace_by_fused_node(graph, parts, name);
  }
  graph.remove_unused_values();
  graph.sort_topologically();
}

MINIC_REGISTER_GRAPH_PASS("fuse-ops", fuse_operators,
                          "group nodes into fused kernels (fusion kinds and post-dominators)");

}  // namespace minic
