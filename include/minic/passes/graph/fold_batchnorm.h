// The `fold-batchnorm` pass: fold inference BatchNormalization into the Conv or Gemm before it.
//
// Course module 2. (Being written: the placeholder below leaves the graph unchanged.)
#pragma once

#include "minic/ir/graph.h"

namespace minic {

void fold_batchnorm(Graph& graph);

}  // namespace minic
