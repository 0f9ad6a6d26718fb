// The post-dominator tree of a dataflow graph (see dominators.h). Course module 2.
//
// Algorithm: in a DAG whose nodes are numbered in topological order, all of node i's
// successors come after it. Walking the nodes backwards, every successor's place in the
// tree is known when i is reached, and i's immediate post-dominator is the nearest common
// ancestor, in the tree built so far, of all its successors: a path from i leaves through
// one of them, and the places every such path must pass are exactly the ancestors they
// share. The common ancestor of two nodes is found by climbing from the deeper one until
// both meet. Cost: O(edges × tree depth), small for the graphs of neural networks.
//
// Chapter: docs/module2-graph-passes.md#6-operator-fusion-fuse-ops
#include "dominators.h"

#include "minic/support/error.h"

namespace minic {

int PostDominatorTree::common_post_dominator(int a, int b) const {
  while (a != b) {
    if (depth[a] > depth[b]) {
      a = parent[a];
    } else if (depth[b] > depth[a]) {
      b = parent[b];
    } else {
      a = parent[a];
      b = parent[b];
    }
  }
  return a;
}

PostDominatorTree build_post_dominator_tree(const std::vector<std::vector<int>>& successors) {
  int exit = static_cast<int>(successors.size());
  PostDominatorTree tree;
  tree.parent.assign(exit + 1, -1);
  tree.depth.assign(exit + 1, 0);
  for (int i = exit - 1; i >= 0; --i) {
    int dominator = -1;
    for (int next : successors[i]) {
      MINIC_CHECK(next > i && next <= exit);
      dominator = dominator < 0 ? next : tree.common_post_dominator(dominator, next);
    }
    if (dominator < 0) dominator = exit;
    tree.parent[i] = dominator;
    tree.depth[i] = tree.depth[dominator] + 1;
  }
  return tree;
}

}  // namespace minic
