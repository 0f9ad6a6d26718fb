// Lowering graph kernels to loop IR: one PrimFunc per kernel of the graph.
//
// Course module 3. After the graph passes, every node of the top-level graph is one
// kernel: a plain node, or a fused node (Node::body, made by fuse-ops) holding a fusion
// group. Lowering runs the compute rules (compute.h) of the kernel's ops in order and
// builds one function:
//   - parameters: the node's distinct input values in order (constants included: a
//     weight is a parameter, not baked into the code), then its outputs, each named
//     after its graph value;
//   - stages: elementwise, broadcast and injective ops are inlined into the ops that read
//     them; reductions and anchors (Conv, MatMul, pools) write buffers of their own, which
//     the function allocates (global scope), and an epilogue after an anchor (bias, Relu)
//     is one more stage that reads that buffer and writes the output;
//   - the name: the node's name, or its op and first output, made an identifier.
//
//   %y = fused(%x, %w, %b) @conv_relu { Conv(%x, %w, %b); Relu }  lowers to
//
//   func @conv_relu(x: f32[1,3,8,8], w: f32[4,3,3,3], b: f32[4], y: f32[1,4,6,6]) {
//     alloc conv: f32[1,4,6,6] {
//       for i0 in 0..1 { ... block conv(...) { init { ... } conv[...] = conv[...] + ... } }
//       for i0 in 0..1 { ... block relu(...) { y[v0, v1, v2, v3] = max(conv[...], 0.0) } }
//     }
//   }
//
// Everything emitted passes loop::verify_func. Shapes are static in the graph IR; an op
// without a compute rule is an error naming it (NoComputeRule, compute.h), and
// has_compute_rule() lets a caller run such nodes with the reference kernel instead. A
// few rules refuse one form of their op (a Cast to float8, MaxPool's Indices output) with
// the same error, so can_lower() is a quick first answer and lower_node() the final one.
//
// Chapter: docs/module3-loop-ir.md#5-lowering-compute-rules
#pragma once

#include "minic/ir/graph/graph.h"
#include "minic/ir/loop/stmt.h"
#include "minic/target/target.h"

#include <set>
#include <string_view>
#include <vector>

namespace minic {

// True if `op` has a compute rule.
bool has_compute_rule(std::string_view op);
// True if lower_node can lower `node`: its op has a compute rule, or, for a fused node,
// every op of its body has one.
bool can_lower(const Node& node);

// The kernel of one node, plain or fused, of a graph of the given opset, for `target`
// (which rules may read through ComputeContext::target: Conv pads its rows to whole
// vectors). Throws NoComputeRule "no compute rule for op X (node N)..." for an op without
// one, for a form of an op its rule does not cover, and for inputs a rule needs as
// constants but that are only known at run time. Any other error is a bug (InternalError)
// or a graph that breaks lowering's precondition (types as the shape rules give them).
loop::PrimFunc lower_node(const Node& node, int opset, const Target& target);

// Every kernel of `graph` for `target`, one function per top-level node in graph order,
// each named uniquely (a suffix _1, _2 where two nodes give the same name). A node without
// a compute rule is an error; with `skipped`, it is left out and listed there instead. Any
// other error is no such refusal: it propagates, naming the node (an InternalError stays
// one). The nodes of `leave_out` (those an external back end compiles) are not lowered.
loop::LoopModule lower_graph(const Graph& graph, const Target& target,
                             std::vector<const Node*>* skipped = nullptr,
                             const std::set<const Node*>& leave_out = {});

// The function name lower_node gives `node`: its name, or its op and first output, with
// every run of characters outside [A-Za-z0-9_] made one '_'.
std::string kernel_name(const Node& node);

}  // namespace minic
