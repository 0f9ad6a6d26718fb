// The `cancel-qdq` pass: in a QDQ model, data movement (Reshape, Transpose, ...) on the
// integers rather than the dequantised floats, and a QuantizeLinear of a DequantizeLinear
// with the same per-tensor scale and zero point removed: both rewrites are exact.
//
// Course module 7. Rules and why they hold: src/passes/graph/cancel_qdq.cpp.
//
// Chapter: docs/module7-quantisation.md#data-movement-on-bytes-the-cancel-qdq-pass
#pragma once

#include "minic/ir/graph/graph.h"

namespace minic {

void cancel_qdq(Graph& graph);

}  // namespace minic
