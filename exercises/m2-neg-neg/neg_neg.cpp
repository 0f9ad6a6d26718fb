// Exercise m2-neg-neg: the graph pass `neg-neg`, Neg(Neg(x)) -> x. Course module 2.
//
// exercises/m2-neg-neg/README.md gives the task; this file is where it is done. The pass
// is registered already (the last line), so `minic opt FILE --passes=neg-neg` runs it: as
// given, it changes nothing, and the exercise's tests fail.
//
// Before:
//   %a = Neg(%x) : f32[4]
//   %b = Neg(%a) : f32[4]
//   %y = Add(%b, %x) : f32[4]
// After:
//   %y = Add(%x, %x) : f32[4]
//
// Chapter: docs/module2-graph-passes.md#2-cleaning-up-simplify-fold-constants-dce-cse
#include "minic/ir/graph/graph.h"
#include "minic/passes/pass_registry.h"

namespace minic {
namespace {

// Every use of a Neg of a Neg reads the inner Neg's input instead, and the Negs nothing
// reads any more are erased.
void remove_double_negation(Graph& graph) {
  // The rewrite goes here (Graph's methods are in include/minic/ir/graph/graph.h).
  (void)graph;
}

}  // namespace

MINIC_REGISTER_GRAPH_PASS("neg-neg", remove_double_negation,
                          "exercise m2-neg-neg: Neg(Neg(x)) -> x");

}  // namespace minic
