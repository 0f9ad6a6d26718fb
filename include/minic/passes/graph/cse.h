// The `cse` pass: merge nodes that compute the same op on the same inputs.
//
// Course module 2. Two nodes with the same op, the same input values in the same order,
// equal attributes (tensors compared by value, floats by their bits) and the same number
// of outputs compute the same tensors: the later one's uses go to the earlier one and it is
// erased. Constants with the same type and bytes are merged the same way. Values that
// define graph outputs or are read by fused nodes keep their uses. Fused nodes are not
// merged.
//
// Chapter: docs/module2-graph-passes.md#2-cleaning-up-simplify-fold-constants-dce-cse
#pragma once

#include "minic/ir/graph/graph.h"

namespace minic {

void eliminate_common_subexpressions(Graph& graph);

}  // namespace minic
