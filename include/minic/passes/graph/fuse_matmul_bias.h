// The `fuse-matmul-bias` pass: merge MatMul followed by Add of a bias into one Gemm.
//
// Course module 2. (Being written: the placeholder below leaves the graph unchanged.)
#pragma once

#include "minic/ir/graph.h"

namespace minic {

void fuse_matmul_bias(Graph& graph);

}  // namespace minic
