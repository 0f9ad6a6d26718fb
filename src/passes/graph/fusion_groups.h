// Which nodes fuse into one kernel: the grouping step of the `fuse-ops` pass.
// Course module 2.
//
// The rules (TVM's FuseOps) are explained at the top of fuse_ops.cpp; fusion_groups.cpp
// applies them over the post-dominator tree of dominators.h.
//
// Chapter: docs/module2-graph-passes.md#6-operator-fusion-fuse-ops
#pragma once

#include "minic/ir/graph/graph.h"
#include "minic/ops/op.h"
#include "minic/target/target.h"

#include <vector>

namespace minic {

// How a node takes part in fusion on `target`: its op's OpSchema::fusion; opaque for a
// fused node, for an op minic does not know, and on a CUDA target for an op with a
// hand-written CUDA kernel (OpSchema::cuda), which runs alone as given.
FusionKind node_fusion_kind(const Node& node, const Target& target);

// For each node of graph.nodes(), in that order, the number of its group: nodes with the
// same number fuse into one kernel. Every group is convex (no path leaves it and comes
// back), so the groups can replace their nodes in a topological order. While an
// explain::Recorder is alive (minic/support/explain.h), it also notes, for each node left
// out of the group of its immediate post-dominator, why ("Relu %r stays out of the group
// of %s: ...").
std::vector<int> find_fusion_groups(const Graph& graph, const Target& target);

}  // namespace minic
