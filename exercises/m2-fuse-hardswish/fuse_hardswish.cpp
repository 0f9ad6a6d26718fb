// Exercise m2-fuse-hardswish: the graph pass `fuse-hardswish`, which finds HardSwish
// written out op by op and makes it one HardSwish node. Course module 2.
//
// exercises/m2-fuse-hardswish/README.md gives the task and the forms to recognise; this
// file is where it is done. The pass is registered already (the last line), so
// `minic opt FILE --passes=fuse-hardswish` runs it: as given, it changes nothing, and the
// exercise's tests fail.
//
// Before:
//   %a = Add(%x, %three)            // %three = const f32[] dense<[3.0]>
//   %c = Clip(%a, %zero, %six)
//   %m = Mul(%x, %c)
//   %y = Div(%m, %six)
// After:
//   %y = HardSwish(%x)
//
// Chapter: docs/module2-graph-passes.md#4-recognising-decomposed-ops-fuse-gelu-fuse-layernorm-fuse-matmul-bias
#include "minic/ir/graph/graph.h"
#include "minic/passes/pass_registry.h"

namespace minic {
namespace {

// Every HardSwish written out in one of the README's forms becomes one HardSwish node.
void fuse_hardswish(Graph& graph) {
  // The rewrite goes here (Graph's methods are in include/minic/ir/graph/graph.h).
  (void)graph;
}

}  // namespace

MINIC_REGISTER_GRAPH_PASS("fuse-hardswish", fuse_hardswish,
                          "exercise m2-fuse-hardswish: x * Clip(x + 3, 0, 6) / 6 -> HardSwish(x)");

}  // namespace minic
