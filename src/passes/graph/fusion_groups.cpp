// The grouping step of the `fuse-ops` pass: which nodes fuse (rules in fuse_ops.cpp).
//
// Course module 2. The nodes are numbered in graph order, which is topological, and the
// exit of the post-dominator tree gets the number after the last node. Groups live in a
// union-find: each group is named by its root, which is always its last node in graph
// order (a merge makes the post-dominator's group the root), and the root holds the
// group's fusion kind: the root node's own, raised to out_fusable when an anchor joins.
//
// Algorithm:
//   1. the kind of each node, and of each edge: the user's kind, except that a broadcast
//      user whose output has the input's shape reads it elementwise;
//   2. the post-dominator tree; for each node i, path_kind[i]: the largest edge kind on
//      any path from i to its immediate post-dominator d. Every such path runs i → s (a
//      successor) → d(s) → d(d(s)) → ... → d, so it is the largest of the kinds of the
//      edges i → s and of the path kinds of the tree nodes climbed from s to d;
//   3. phase 0 (anchors and elementwise ops) and phase 1 (elementwise and injective ops):
//      for each node i in order whose group is not opaque and not already d's, try to
//      merge i and every node between i and d into d's group, when the rule for i's group
//      kind allows it: path_kind[i] bounded, and every group met on the paths (d's at the
//      end) of an allowed kind;
//   4. while `minic explain` records (minic/support/explain.h), one note for each node left
//      out of its post-dominator's group: the fact that the rule refused it on, kept by
//      step 3, or the exit as its post-dominator.
//
// Chapter: docs/module2-graph-passes.md#6-operator-fusion-fuse-ops
#include "fusion_groups.h"

#include "dominators.h"

#include "minic/ops/custom_op.h"
#include "minic/support/error.h"
#include "minic/support/explain.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_map>

namespace minic {

FusionKind node_fusion_kind(const Node& node, const Target& target) {
  if (node.is_fused() || runs_own_cuda_kernel(node, target)) return FusionKind::opaque;
  const OpSchema* schema = op_registry().find(node.op);
  return schema ? schema->fusion : FusionKind::opaque;
}

namespace {

// The kind that covers both: the harder to fuse (the enum is ordered).
FusionKind combine(FusionKind a, FusionKind b) { return std::max(a, b); }

// "an out-fusable", "a reduction": a kind with its article.
std::string with_article(FusionKind kind) {
  const std::string_view name = fusion_kind_name(kind);
  const bool vowel = std::string_view("aeiou").find(name.front()) != std::string_view::npos;
  return fmt::format("{} {}", vowel ? "an" : "a", name);
}

// One edge of the dataflow graph: the node it leads to (or the exit) and its fusion kind.
struct Edge {
  int to;
  FusionKind kind;
};

// Why the rule kept a node out of its post-dominator's group: the fact it refused on.
struct Refusal {
  enum class Reason {
    opaque,     // the node's group is opaque
    reduction,  // the node's group is a reduction, which fuses with nothing after it
    edge,       // a path to the post-dominator reads through an edge of `kind` into `node`
    group,      // `node`, on a path or the post-dominator itself, is in a group of `kind`
  };
  Reason reason;
  FusionKind rule;  // the kind of the node's group: whose rule refused
  FusionKind kind = FusionKind::opaque;
  int node = -1;
};

class Grouping {
 public:
  Grouping(const Graph& graph, const Target& target) : graph_(graph), nodes_(graph.nodes()) {
    exit_ = static_cast<int>(nodes_.size());
    for (int i = 0; i < exit_; ++i) index_[nodes_[i]] = i;
    for (const Node* node : nodes_) kind_.push_back(node_fusion_kind(*node, target));
    for (int i = 0; i < exit_; ++i) edges_.push_back(edges_from(i));
    std::vector<std::vector<int>> successors;
    for (const std::vector<Edge>& edges : edges_) {
      successors.emplace_back();
      for (const Edge& edge : edges) successors.back().push_back(edge.to);
    }
    tree_ = build_post_dominator_tree(successors);
    compute_path_kinds();
    for (int i = 0; i < exit_; ++i) {
      groups_.push_back({i, kind_[i], kind_[i] == FusionKind::out_fusable});
    }
  }

  std::vector<int> run() {
    refusals_.assign(exit_, std::nullopt);
    for (int phase : {0, 1}) {
      for (int i = 0; i < exit_; ++i) try_fuse(i, phase);
    }
    if (explain::recording()) explain_refusals();
    std::vector<int> group_of;
    for (int i = 0; i < exit_; ++i) group_of.push_back(find(i));
    return group_of;
  }

 private:
  struct Group {
    int parent;  // union-find: the node's own index for a root
    FusionKind kind;
    bool has_anchor;  // holds an out_fusable node
  };

  // The edges leaving node i, one per distinct user, and one to the exit when an output
  // is a graph output or when nothing reads the node at all.
  std::vector<Edge> edges_from(int i) {
    const Node* node = nodes_[i];
    std::vector<Edge> edges;
    bool to_exit = true;
    for (const Value* output : node->outputs()) {
      if (graph_.is_graph_output(output)) edges.push_back({exit_, FusionKind::opaque});
      for (const Node* user : output->users()) {
        to_exit = false;
        int j = index_.at(user);
        FusionKind kind = edge_kind(*output, *user, kind_[j]);
        auto it = std::find_if(edges.begin(), edges.end(),
                               [&](const Edge& edge) { return edge.to == j; });
        if (it == edges.end()) {
          edges.push_back({j, kind});
        } else {
          it->kind = combine(it->kind, kind);
        }
      }
    }
    bool has_exit = std::any_of(edges.begin(), edges.end(),
                                [&](const Edge& e) { return e.to == exit_; });
    if (to_exit && !has_exit) edges.push_back({exit_, FusionKind::opaque});
    return edges;
  }

  // How `user` reads `value`: as its kind says, except that a broadcast op reads an
  // operand of its own output shape element for element.
  static FusionKind edge_kind(const Value& value, const Node& user, FusionKind user_kind) {
    if (user_kind != FusionKind::broadcast || user.outputs().empty()) return user_kind;
    const Value* result = user.output(0);
    bool same_shape =
        value.has_type && result->has_type && value.type.shape == result->type.shape;
    return same_shape ? FusionKind::elementwise : FusionKind::broadcast;
  }

  void compute_path_kinds() {
    path_kind_.assign(exit_, FusionKind::opaque);
    for (int i = exit_ - 1; i >= 0; --i) {
      int dominator = tree_.parent[i];
      if (dominator == exit_) continue;  // never fused into the exit: the kind is unused
      FusionKind kind = FusionKind::elementwise;
      for (const Edge& edge : edges_[i]) {
        kind = combine(kind, edge.kind);
        for (int u = edge.to; u != dominator; u = tree_.parent[u]) {
          kind = combine(kind, path_kind_[u]);
        }
      }
      path_kind_[i] = kind;
    }
  }

  int find(int i) {
    while (groups_[i].parent != i) {
      groups_[i].parent = groups_[groups_[i].parent].parent;  // path halving
      i = groups_[i].parent;
    }
    return i;
  }

  // Merges the group of node `from` into the group of node `into`.
  void merge(int from, int into) {
    int child = find(from);
    int root = find(into);
    if (child == root) return;
    groups_[child].parent = root;
    if (groups_[child].has_anchor) {
      groups_[root].has_anchor = true;
      groups_[root].kind = combine(groups_[root].kind, groups_[child].kind);
    }
  }

  using Condition = std::function<bool(FusionKind kind, bool at_dominator)>;
  using NodeCheck = std::function<std::optional<int>(int u)>;

  // The first node met on a path from `from` (excluded) to `to` (included) whose group is
  // of a kind that `allowed` refuses; nothing when every group met is allowed.
  std::optional<int> first_refused(int from, int to, const Condition& allowed) {
    std::vector<bool> visited(exit_, false);
    NodeCheck check = [&](int u) -> std::optional<int> {
      MINIC_CHECK(u != exit_);  // `to` post-dominates `from`: every path meets it first
      if (visited[u]) return std::nullopt;
      visited[u] = true;
      if (!allowed(groups_[find(u)].kind, u == to)) return u;
      if (u == to) return std::nullopt;
      return first_refused_after(u, check);
    };
    return first_refused_after(from, check);
  }

  // The first node that `check` returns for a successor of u, in order.
  std::optional<int> first_refused_after(int u, const NodeCheck& check) {
    for (const Edge& edge : edges_[u]) {
      if (std::optional<int> refused = check(edge.to)) return refused;
    }
    return std::nullopt;
  }

  // The node that an edge of `kind` leads to on a path from `from` to `to`: the edge that
  // gave path_kind_[from] its value, when `kind` is that value.
  int edge_into(int from, int to, FusionKind kind) {
    std::vector<bool> visited(exit_, false);
    std::vector<int> stack = {from};
    while (!stack.empty()) {
      int u = stack.back();
      stack.pop_back();
      for (const Edge& edge : edges_[u]) {
        if (edge.kind == kind) return edge.to;
        if (edge.to != to && !visited[edge.to]) {
          visited[edge.to] = true;
          stack.push_back(edge.to);
        }
      }
    }
    internal_fail("no {} edge between nodes {} and {}", fusion_kind_name(kind), from, to);
  }

  // Merges `from` and every node on a path from it to `to` into the group of `to`.
  void fuse_paths(int from, int to) {
    std::vector<bool> visited(exit_, false);
    std::function<void(int)> visit = [&](int u) {
      if (u == to || visited[u]) return;
      visited[u] = true;
      merge(u, to);
      for (const Edge& edge : edges_[u]) visit(edge.to);
    };
    visit(from);
  }

  void try_fuse(int i, int phase) {
    int dominator = tree_.parent[i];
    if (dominator == exit_ || find(i) == find(dominator)) return;
    FusionKind kind = groups_[find(i)].kind;
    // An anchor takes its epilogue in phase 0, before injective ops group in phase 1.
    bool waits = (kind == FusionKind::out_fusable && phase == 1) ||
                 (kind == FusionKind::injective && phase == 0);
    if (waits) return;
    std::optional<Refusal> refusal = refusal_to_fuse(i, dominator, kind);
    if (refusal) {
      refusals_[i] = refusal;
    } else {
      fuse_paths(i, dominator);
    }
  }

  // Whether the rule for a group of `kind` lets node i and every node between it and its
  // post-dominator d join d's group; if not, the fact it refuses on.
  std::optional<Refusal> refusal_to_fuse(int i, int d, FusionKind kind) {
    using Reason = Refusal::Reason;
    if (kind == FusionKind::opaque) return Refusal{Reason::opaque, kind};
    // A reduction fuses with nothing after it; its producers come to it by the rule below.
    if (kind == FusionKind::reduction) return Refusal{Reason::reduction, kind};
    FusionKind path = path_kind_[i];
    bool path_ok = true;
    Condition allowed = [](FusionKind k, bool) { return k <= FusionKind::injective; };
    if (kind == FusionKind::out_fusable) {
      // An anchor takes its elementwise epilogue.
      path_ok = path == FusionKind::elementwise;
      allowed = [](FusionKind k, bool) { return k <= FusionKind::broadcast; };
    } else if (kind <= FusionKind::broadcast) {
      // Into an injective op, a reduction, or an anchor's group that already reaches d.
      path_ok = path <= FusionKind::injective || path == FusionKind::reduction;
      allowed = [](FusionKind k, bool at_dominator) {
        return at_dominator ? k != FusionKind::opaque : k <= FusionKind::injective;
      };
    }
    if (!path_ok) return Refusal{Reason::edge, kind, path, edge_into(i, d, path)};
    if (std::optional<int> refused = first_refused(i, d, allowed)) {
      return Refusal{Reason::group, kind, groups_[find(*refused)].kind, *refused};
    }
    return std::nullopt;
  }

  // Step 4, the notes. A node as they name it: "Relu %y"; a group, by its root: "%y".
  std::string node_text(int i) const {
    return fmt::format("{} %{}", nodes_[i]->op, nodes_[i]->output(0)->name());
  }
  std::string group_text(int i) { return "%" + nodes_[find(i)]->output(0)->name(); }

  void explain_refusals() {
    for (int i = 0; i < exit_; ++i) {
      int dominator = tree_.parent[i];
      if (dominator == exit_) {
        explain_exit(i);
      } else if (find(i) != find(dominator)) {
        // Merges are never undone, so the last try_fuse of i refused it (and one that
        // waited for the other phase is preceded or followed by one that did not).
        MINIC_CHECK(refusals_[i].has_value());
        explain::note("{} stays out of the group of {}: {}", node_text(i),
                      group_text(dominator), refusal_text(i, dominator, *refusals_[i]));
      }
    }
  }

  // A node whose post-dominator is the exit joins nothing after it. Said only when
  // something reads it: a node read by the exit alone had nothing to join.
  void explain_exit(int i) {
    std::vector<std::string> groups;  // its users' groups, in order
    for (const Edge& edge : edges_[i]) {
      if (edge.to == exit_ || find(edge.to) == find(i)) continue;
      std::string group = group_text(edge.to);
      if (std::find(groups.begin(), groups.end(), group) == groups.end()) {
        groups.push_back(group);
      }
    }
    if (groups.empty()) return;
    std::string named = fmt::format("the group of {}", groups.back());
    if (groups.size() > 1) {
      std::string last = groups.back();
      groups.pop_back();
      named = fmt::format("the groups of {} and {}", fmt::join(groups, ", "), last);
    }
    const std::vector<Value*>& outputs = nodes_[i]->outputs();
    bool graph_output = std::any_of(outputs.begin(), outputs.end(),
                                    [&](const Value* v) { return graph_.is_graph_output(v); });
    const char* why = graph_output
                          ? "it is a graph output, so its post-dominator is the graph's exit"
                          : "the paths from it meet only at the graph's exit, its post-dominator";
    explain::note("{} stays out of {}: {}", node_text(i), named, why);
  }

  // Why node i stays out of the group of its post-dominator d, in words.
  std::string refusal_text(int i, int d, const Refusal& refusal) {
    using Reason = Refusal::Reason;
    switch (refusal.reason) {
      case Reason::opaque:
        if (nodes_[i]->is_fused()) return "a fused node is opaque: it is a kernel already";
        return fmt::format("its op, {}, is opaque: it runs as a step of its own", nodes_[i]->op);
      case Reason::reduction:
        return "a reduction takes in its producers but fuses with nothing after it";
      case Reason::edge:
        return fmt::format("{}, and the path there reads through {} edge into {}",
                           rule_text(i, d, refusal), with_article(refusal.kind),
                           node_text(refusal.node));
      case Reason::group: {
        std::string where = refusal.node == d
                                ? std::string("that group")
                                : "on the way there the group of " + group_text(refusal.node);
        std::string what = refusal.kind == FusionKind::out_fusable
                               ? "holds the anchor " + node_text(anchor_of(refusal.node))
                               : fmt::format("is {} group", with_article(refusal.kind));
        return fmt::format("{}, and {} {}", rule_text(i, d, refusal), where, what);
      }
    }
    return "";
  }

  // The anchor of node i's group, which holds one.
  int anchor_of(int i) {
    for (int j = 0; j < exit_; ++j) {
      if (kind_[j] == FusionKind::out_fusable && find(j) == find(i)) return j;
    }
    internal_fail("the group of node {} holds no anchor", i);
  }

  // The part of the rule for i's group (of kind refusal.rule) that refusal broke.
  std::string rule_text(int i, int d, const Refusal& refusal) {
    bool edge = refusal.reason == Refusal::Reason::edge;
    if (refusal.rule == FusionKind::out_fusable) {
      int anchor = anchor_of(i);
      std::string who = anchor == i ? std::string("it is an anchor")
                                    : "its group holds the anchor " + node_text(anchor);
      return who + (edge ? ", which takes only an elementwise epilogue"
                         : ", which fuses only with elementwise and broadcast groups");
    }
    std::string group = with_article(refusal.rule) + " group";
    if (refusal.rule == FusionKind::injective) {
      return group + " joins only through injective or simpler groups";
    }
    if (edge) return group + " joins only along edges up to injective, or into a reduction";
    if (refusal.node == d) return group + " joins any group but an opaque one";
    return group + " passes only through injective or simpler groups";
  }

  const Graph& graph_;
  std::vector<Node*> nodes_;
  std::unordered_map<const Node*, int> index_;
  int exit_ = 0;
  std::vector<FusionKind> kind_;
  std::vector<std::vector<Edge>> edges_;
  PostDominatorTree tree_;
  std::vector<FusionKind> path_kind_;
  std::vector<Group> groups_;
  std::vector<std::optional<Refusal>> refusals_;  // the last refusal of each node
};

}  // namespace

std::vector<int> find_fusion_groups(const Graph& graph, const Target& target) {
  return Grouping(graph, target).run();
}

}  // namespace minic
