// The `lookup-tables` pass: an elementwise chain from one 8-bit tensor to a QuantizeLinear
// becomes a table of its 256 results (minic.LookupTable).
//
// Course module 7. In a QDQ model whose every op is quantised (ONNX Runtime's quantiser
// writes a BERT encoder's GELU so), a chain of elementwise ops, roundings included, that
// reads one 8-bit tensor and scalar constants is a function of one 8-bit value: the pass
// computes it once for each of the 256 values, with the ops' reference kernels, and reads
// the result from that table. Rules: src/passes/graph/lookup_tables.cpp.
//
// Chapter: docs/module7-quantisation.md#lookup-tables-for-8-bit-functions
#pragma once

#include "minic/ir/graph/graph.h"

namespace minic {

void lookup_tables(Graph& graph);

}  // namespace minic
