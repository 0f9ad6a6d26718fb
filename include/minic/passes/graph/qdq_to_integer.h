// The `qdq-to-integer` pass: a Conv, MatMul or Gemm on dequantised operands becomes the
// integer op on the quantised ones, dequantised after.
//
// Course module 7. A QDQ model (what ONNX Runtime's quantiser writes) keeps its float ops
// and brackets them with DequantizeLinear and QuantizeLinear nodes. Since the ops are
// linear, the dequantisation can move past them:
//   Conv(DQ(x), DQ(w)) + b  =  DQ(ConvInteger(x, w), x_scale * w_scale) + b
// and the int32 sums are exact. Operator fusion then puts the integer op, the
// dequantisation, the bias, any activation and the next QuantizeLinear in one kernel.
//
// Chapter: docs/module7-quantisation.md#2-running-qdq-models-the-qdq-to-integer-pass
#pragma once

#include "minic/ir/graph/graph.h"

namespace minic {

void qdq_to_integer(Graph& graph);

}  // namespace minic
