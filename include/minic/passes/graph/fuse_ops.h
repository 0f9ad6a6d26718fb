// The `fuse-ops` pass: group nodes into fused kernels (fusion kinds and post-dominators).
//
// Course module 2. (Being written: the placeholder below leaves the graph unchanged.)
#pragma once

#include "minic/ir/graph.h"

namespace minic {

void fuse_operators(Graph& graph);

}  // namespace minic
