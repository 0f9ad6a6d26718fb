// Building the execution plan of a compiled model: one step per kernel, one buffer per
// value, a memory plan for the intermediates. Private to src/driver.
// Course module 4.
//
// Chapter: docs/module4-schedules.md#6-the-executor-and-threads
#pragma once

#include "minic/backends/backend.h"  // kernel_arguments
#include "minic/ir/graph/graph.h"
#include "minic/ops/op.h"
#include "minic/runtime/executor.h"

#include <map>
#include <memory>

namespace minic {

// A call of the node's reference kernel behind the compiled calling convention: copies
// the argument buffers into tensors, runs the op (a fused node: its body, through the
// interpreter; a control-flow node: its bodies through `bodies`, where given), copies the
// results out. The graph must outlive the call.
runtime::KernelCall reference_kernel_call(const Node& node, int opset,
                                          std::shared_ptr<BodyEvaluator> bodies = nullptr);

// The plan of `graph`: one step per node in graph order, calling `calls[node]`.
runtime::ExecutionPlan build_execution_plan(
    const Graph& graph, const std::map<const Node*, runtime::PlanStep>& steps);

}  // namespace minic
