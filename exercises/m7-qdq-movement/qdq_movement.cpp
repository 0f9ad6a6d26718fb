// Exercise m7-qdq-movement: the graph pass `qdq-movement`, which runs a data-movement op
// (Reshape, Transpose, Flatten, Squeeze, Unsqueeze) between a DequantizeLinear and a
// QuantizeLinear with the same parameters on the integers themselves. Course module 7.
//
// exercises/m7-qdq-movement/README.md gives the task; this file is where it is done. The
// pass is registered already (the last line), so `minic opt FILE --passes=qdq-movement`
// runs it: as given, it changes nothing, and the exercise's tests fail.
//
// Before:
//   %d = DequantizeLinear(%q, %s, %z) : f32[1,8,2,2]      // %q: u8[1,8,2,2]
//   %m = Flatten(%d) : f32[1,32]
//   %y = QuantizeLinear(%m, %s, %z) : u8[1,32]
// After:
//   %y = Flatten(%q) : u8[1,32]
//
// Chapter: docs/module7-quantisation.md#2-running-qdq-models-the-qdq-to-integer-pass
#include "minic/ir/graph/graph.h"
#include "minic/passes/pass_registry.h"

namespace minic {
namespace {

// Every QuantizeLinear of a movement op of a DequantizeLinear with the same scale and
// zero point becomes the movement op on the DequantizeLinear's integers.
void move_integers(Graph& graph) {
  // The rewrite goes here (README.md says which edits of Graph it needs).
  (void)graph;
}

}  // namespace

MINIC_REGISTER_GRAPH_PASS("qdq-movement", move_integers,
                          "exercise m7-qdq-movement: DQ -> Reshape/Transpose/... -> Q with "
                          "the same scale -> the movement op on the integers");

}  // namespace minic
