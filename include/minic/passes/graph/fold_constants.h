// The `fold-constants` pass: evaluate, at compile time, nodes whose inputs are all constant.
//
// Course module 2. Each node whose inputs are all constants (omitted optional inputs
// allowed), and each Shape or Size node (their results follow from their input's static
// type), is replaced by constants holding its results, computed by the op's reference
// kernel. The constants keep the names of the values they replace, graph outputs stay
// graph outputs, and chains fold in one walk: ConstantOfShape weights become constants,
// and Shape -> Gather -> Unsqueeze -> Concat chains become a Reshape's constant shape.
// Fused nodes are left alone. Values left unused are dropped. Throws Error naming the node
// if a kernel fails on its constant inputs. Needs every value typed (infer_shapes).
//
// Chapter: docs/module2-graph-passes.md#2-cleaning-up-simplify-fold-constants-dce-cse
#pragma once

#include "minic/ir/graph/graph.h"

namespace minic {

void fold_constants(Graph& graph);

}  // namespace minic
