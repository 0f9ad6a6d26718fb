// Control-flow bodies: typing them and running them. Course module 2.
//
// A body (a graph attribute: If's then_branch and else_branch, Loop's and Scan's body) is
// stored untyped, because its types follow from the values it runs on. Its inputs are the
// op's formal inputs (Loop: the iteration number, the condition, the carried values), then
// one for each outer value it reads; the node passes those as its last inputs, counted by
// its `captures` attribute (the importer makes them explicit, src/frontend/onnx_importer.cpp).
//
//   type_body   a typed copy of a body for given input types, with the values known for
//               some inputs: what shape rules use. Throws Error when a shape inside
//               depends on a value that is not known.
//   BodyRunner  runs a body on tensors again and again (a Loop's iterations): as compiled
//               code when the kernel has a BodyEvaluator that can compile it, else typed
//               once when its shapes depend only on values that stay the same, else typed
//               afresh for every run with all its input values known.
//
// Chapter: docs/module2-graph-ir.md#control-flow-if-loop-scan
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "minic/ops/op.h"

namespace minic {

// The node's `captures` attribute: how many of its last inputs are outer values its bodies
// read. `formal` is the fewest inputs of its own the op takes.
size_t capture_count(const NodeContext& ctx, size_t formal);

// A copy of `body` typed for inputs of `types`; `known` holds, per input, its value where
// it is known (else null). Errors name the node and the body.
std::unique_ptr<Graph> type_body(const NodeContext& ctx, const Graph& body,
                                 std::span<const TensorType> types,
                                 std::span<const Tensor* const> known);

// type_body's copy, or null where typing fails for any reason but a bug in minic: a shape
// inside depends on a value that is not known. Callers then run the body on values.
std::unique_ptr<Graph> try_type_body(const NodeContext& ctx, const Graph& body,
                                     std::span<const TensorType> types,
                                     std::span<const Tensor* const> known);

// The types of a typed body's outputs.
std::vector<TensorType> output_types(const Graph& typed);

class BodyRunner {
 public:
  // `types` are the types of the inputs every run gives; `fixed` holds the values of the
  // inputs that are the same on every run (the captures), null for the others.
  // `evaluator` (may be null) runs the body as compiled code where it can.
  BodyRunner(const NodeContext& ctx, const Graph& body, std::vector<TensorType> types,
             std::vector<const Tensor*> fixed, BodyEvaluator* evaluator = nullptr);

  // The body's outputs on `inputs` (one per body input).
  std::vector<Tensor> run(std::span<const Tensor* const> inputs) const;
  // The typed body, if its types do not depend on the values that change; else null.
  const Graph* typed() const { return typed_.get(); }

 private:
  const NodeContext& ctx_;
  const Graph& body_;
  BodyEvaluator* evaluator_;
  std::unique_ptr<Graph> typed_;
};

// Row `index` of `tensor` along `axis`: the slice with that axis removed.
Tensor take_row(const Tensor& tensor, int64_t axis, int64_t index);
// The same, into `row`, a tensor of the row's type: a loop over the rows reuses one.
void take_row_into(const Tensor& tensor, int64_t axis, int64_t index, Tensor& row);
// Rows of one type stacked along a new axis `axis` (in [0, rank of a row]).
Tensor stack_rows(std::span<const Tensor> rows, int64_t axis);

}  // namespace minic
