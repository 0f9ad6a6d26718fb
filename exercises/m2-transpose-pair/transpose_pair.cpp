// Exercise m2-transpose-pair: the graph pass `transpose-pair`, which makes a Transpose of a
// Transpose one Transpose, or none where the two cancel. Course module 2.
//
// exercises/m2-transpose-pair/README.md gives the task; this file is where it is done. The
// pass is registered already (the last line), so `minic opt FILE --passes=transpose-pair`
// runs it: as given, it changes nothing, and the exercise's tests fail.
//
// Before:
//   %t = Transpose(%x) {perm=[0,2,3,1]} : f32[1,8,8,3]     // %x: f32[1,3,8,8]
//   %y = Transpose(%t) {perm=[0,3,1,2]} : f32[1,3,8,8]
//   %z = Relu(%y) : f32[1,3,8,8]
// After:
//   %z = Relu(%x) : f32[1,3,8,8]
//
// Chapter: docs/module2-graph-passes.md#2-cleaning-up-simplify-fold-constants-dce-cse
#include "minic/ir/graph/graph.h"
#include "minic/passes/pass_registry.h"

namespace minic {
namespace {

// Every Transpose whose input another Transpose produced reads that one's input instead,
// with the two permutations composed; every Transpose whose perm is the identity (so
// composed, or so written) is bypassed: its users read its input directly.
void merge_transposes(Graph& graph) {
  // The rewrite goes here (a node's attributes: include/minic/ir/graph/attribute.h).
  (void)graph;
}

}  // namespace

MINIC_REGISTER_GRAPH_PASS("transpose-pair", merge_transposes,
                          "exercise m2-transpose-pair: Transpose(Transpose(x)) -> one or none");

}  // namespace minic
