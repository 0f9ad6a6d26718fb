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
//      end) of an allowed kind.
//
// Chapter: docs/module2-graph-passes.md#6-operator-fusion-fuse-ops
#include "fusion_groups.h"

#include "dominators.h"

#include <algorithm>
#include <functional>
#include <unordered_map>

namespace minic {

FusionKind node_fusion_kind(const Node& node) {
  if (node.is_fused()) return FusionKind::opaque;
  const OpSchema* schema = op_registry().find(node.op);
  return schema ? schema->fusion : FusionKind::opaque;
}

namespace {

// The kind that covers both: the harder to fuse (the enum is ordered).
FusionKind combine(FusionKind a, FusionKind b) { return std::max(a, b); }

// One edge of the dataflow graph: the node it leads to (or the exit) and its fusion kind.
struct Edge {
  int to;
  FusionKind kind;
};

class Grouping {
 public:
  explicit Grouping(const Graph& graph) : graph_(graph), nodes_(graph.nodes()) {
    exit_ = static_cast<int>(nodes_.size());
    for (int i = 0; i < exit_; ++i) index_[nodes_[i]] = i;
    for (const Node* node : nodes_) kind_.push_back(node_fusion_kind(*node));
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
    for (int phase : {0, 1}) {
      for (int i = 0; i < exit_; ++i) try_fuse(i, phase);
    }
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

  // Whether every node on every path from `from` (excluded) to `to` (included) is in a
  // group whose kind `allowed` accepts.
  bool all_paths(int from, int to, const Condition& allowed) {
    std::vector<bool> visited(exit_, false);
    std::function<bool(int)> check = [&](int u) {
      if (u == exit_) return false;
      if (visited[u]) return true;
      visited[u] = true;
      if (!allowed(groups_[find(u)].kind, u == to)) return false;
      if (u == to) return true;
      return std::all_of(edges_[u].begin(), edges_[u].end(),
                         [&](const Edge& edge) { return check(edge.to); });
    };
    return std::all_of(edges_[from].begin(), edges_[from].end(),
                       [&](const Edge& edge) { return check(edge.to); });
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
    if (dominator == exit_) return;
    int root = find(i);
    FusionKind kind = groups_[root].kind;
    if (kind == FusionKind::opaque || root == find(dominator)) return;
    FusionKind path = path_kind_[i];
    bool fuse = false;
    if (kind == FusionKind::out_fusable) {
      // An anchor takes its elementwise epilogue in phase 0, before injective ops group.
      fuse = phase == 0 && path == FusionKind::elementwise &&
             all_paths(i, dominator,
                       [](FusionKind k, bool) { return k <= FusionKind::broadcast; });
    } else if (kind <= FusionKind::broadcast) {
      // Into an injective op, a reduction, or an anchor's group that already reaches d.
      bool path_ok = path <= FusionKind::injective || path == FusionKind::reduction;
      fuse = path_ok && all_paths(i, dominator, [](FusionKind k, bool at_dominator) {
               return at_dominator ? k != FusionKind::opaque : k <= FusionKind::injective;
             });
    } else if (kind == FusionKind::injective) {
      fuse = phase == 1 &&
             all_paths(i, dominator,
                       [](FusionKind k, bool) { return k <= FusionKind::injective; });
    }
    // A reduction fuses with nothing after it; its producers come to it by the rule above.
    if (fuse) fuse_paths(i, dominator);
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
};

}  // namespace

std::vector<int> find_fusion_groups(const Graph& graph) { return Grouping(graph).run(); }

}  // namespace minic
