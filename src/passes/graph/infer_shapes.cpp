// The `infer-shapes` pass: shape and type inference (src/ops/shape_inference.cpp) over the
// whole graph again, as a pass, so that it can run between others by name.
//
// Course module 2. The importer and the text parser infer types once; a pass that builds
// nodes gives them their types itself. This pass is for a pipeline written by hand, e.g.
// `minic opt FILE.mgraph --passes=simplify,infer-shapes`.
//
// Chapter: docs/module2-graph-ir.md#shape-inference-and-values-known-before-running
#include "minic/ops/shape_inference.h"
#include "minic/passes/pass_registry.h"

namespace minic {

MINIC_REGISTER_GRAPH_PASS("infer-shapes", [](Graph& graph) { infer_shapes(graph); },
                          "re-run shape and type inference over the whole graph");

}  // namespace minic
