// The `fuse-ops` pass: group nodes into fused kernels (fusion kinds and post-dominators).
//
// Course module 2. Groups the graph's nodes by the fusion kind of their ops (OpSchema::
// fusion), following TVM's FuseOps: an anchor (Conv, MatMul, Gemm, a pool) takes the chain
// of elementwise and broadcast ops after it up to the point where its consumers' paths
// meet again (its immediate post-dominator), so Conv → Add(residual) → Relu is one group;
// elementwise and injective ops fuse with each other; a reduction takes in its
// elementwise producers; opaque ops stay alone. Each group of two or more nodes becomes
// one fused node (Node::body), printed as `%y = fused(...) @conv_add_relu { ... }`; its
// inputs are the values the group reads from outside, constants included, and its outputs
// the values used outside. The graph computes the same outputs under the same names.
// On a CUDA target an op that brings its own CUDA kernel (a custom op's OpSchema::cuda)
// stays alone, so that its kernel runs as given.
// Rules and algorithm: src/passes/graph/fuse_ops.cpp.
//
// Chapter: docs/module2-graph-passes.md#6-operator-fusion-fuse-ops
#pragma once

#include "minic/ir/graph/graph.h"
#include "minic/target/target.h"

namespace minic {

void fuse_operators(Graph& graph, const Target& target);

}  // namespace minic
