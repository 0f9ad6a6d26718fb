// The post-dominator tree of a dataflow graph. Course module 2.
//
// Node b post-dominates node a when every path from a to the graph's exit passes through
// b: whatever a computes reaches the outputs only by way of b. The nearest such b is a's
// immediate post-dominator, and linking every node to it gives a tree rooted at the exit.
// Operator fusion (fuse_ops.cpp) uses it to find, for each node, the point where all of
// its consumers' paths meet again: fusing everything between the two leaves no path out
// of the group and back in.
//
// Chapter: docs/module2-graph-passes.md#6-operator-fusion-fuse-ops
#pragma once

#include <vector>

namespace minic {

struct PostDominatorTree {
  // parent[i]: the immediate post-dominator of node i. The exit (the last index) is the
  // root and has parent -1.
  std::vector<int> parent;
  // depth[i]: the number of tree edges from node i up to the exit (the exit's is 0).
  std::vector<int> depth;

  int exit() const { return static_cast<int>(parent.size()) - 1; }
  // The nearest node that post-dominates both `a` and `b`.
  int common_post_dominator(int a, int b) const;
};

// The post-dominator tree of a directed acyclic graph with nodes 0..n-1 in topological
// order plus an exit node n that every path ends in. successors[i] (for i < n) lists where
// node i's edges lead: nodes after i, or n; a node with no successors leads to the exit.
PostDominatorTree build_post_dominator_tree(const std::vector<std::vector<int>>& successors);

}  // namespace minic
