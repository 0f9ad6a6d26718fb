// One step of a recurrent op's cell, built as a graph: the body of the Scan that
// expand-recurrent makes of an LSTM, GRU or RNN (expand_recurrent.cpp has the equations
// and the rewrite around it). Private to src/passes/graph. Course module 2.
//
// Chapter: docs/module2-graph-passes.md#5-recurrent-ops-as-a-scan-over-their-cell-expand-recurrent
#pragma once

#include <string>
#include <vector>

#include "minic/ir/graph/graph.h"
#include "minic/ops/recurrent.h"

namespace minic {

// The gates' names, in the order of W's row blocks, as ONNX's operator docs name them:
// i, o, f, c (LSTM), z, r, h (GRU), i (RNN).
std::vector<std::string> gate_names(int64_t gates);

// What one direction's cell reads from the outer graph besides the states and its gates'
// projections: values of that graph, each gate's apart. p is empty and rb_h null where the
// node has no P, or where the projection adds Rb_h.
struct CellWeights {
  std::vector<Value*> r;  // R_gᵀ [hidden, hidden], one per gate
  std::vector<Value*> p;  // LSTM's P_i, P_o, P_f [hidden]
  Value* rb_h = nullptr;  // GRU's Rb_h [hidden] under linear_before_reset
};

// A cell as a Scan body and the outer values its last inputs stand for.
struct CellBody {
  GraphAttribute body;
  std::vector<Value*> captures;  // in the order of the body's last inputs
};

// Direction `direction`'s cell of `op` (LSTM, GRU or RNN) of form `form`, computing in
// `dtype`, at `opset`: inputs the states h (and c), one scan input per gate (x_g at the
// current step), then the captures; results h' (and c'), then h' again as the scan output.
CellBody build_cell(const std::string& op, const RecurrentForm& form, int64_t direction,
                    DType dtype, int opset, const CellWeights& weights);

}  // namespace minic
