// The `expand-recurrent` pass: LSTM, GRU and RNN nodes become a Scan
// over time whose body is one step of the cell in ordinary ops, with the input
// projections of all steps computed before it. expand_recurrent.cpp says what it leaves
// to the reference kernel and why.
//
// Course module 2 (graph rewriting).
//
// Chapter: docs/module2-graph-passes.md#5-recurrent-ops-as-a-scan-over-their-cell-expand-recurrent
#pragma once

#include "minic/ir/graph/graph.h"

namespace minic {

void expand_recurrent(Graph& graph);

}  // namespace minic
