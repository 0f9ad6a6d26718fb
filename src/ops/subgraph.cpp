// Control-flow bodies: typing and running them (see subgraph.h). Course module 2.
//
// Chapter: docs/module2-graph-ir.md#control-flow-if-loop-scan
#include "subgraph.h"

#include <cstring>
#include <unordered_map>

#include "minic/ops/shape_inference.h"

namespace minic {

namespace {

// An error inside a body, said as the node's: "Loop node 'l': in its body 'b': ...".
// Internal errors stay what they are.
template <typename Fn>
auto in_body(const NodeContext& ctx, const Graph& body, Fn&& fn) {
  try {
    return fn();
  } catch (const InternalError&) {
    throw;
  } catch (const Error& error) {
    ctx.fail("in its body '{}': {}", body.name, error.what());
  }
}

void check_input_count(const NodeContext& ctx, const Graph& body, size_t count) {
  if (body.inputs().size() != count) {
    ctx.fail("its body '{}' has {} inputs, but the node gives it {}", body.name,
             body.inputs().size(), count);
  }
}

// A copy of `body` whose inputs have `types`, not yet inferred.
std::unique_ptr<Graph> copy_with_input_types(const NodeContext& ctx, const Graph& body,
                                             std::span<const TensorType> types) {
  check_input_count(ctx, body, types.size());
  std::unique_ptr<Graph> copy = body.clone();
  copy->opset = ctx.opset();
  for (size_t i = 0; i < types.size(); ++i) {
    copy->inputs()[i]->type = types[i];
    copy->inputs()[i]->has_type = true;
  }
  return copy;
}

}  // namespace

size_t capture_count(const NodeContext& ctx, size_t formal) {
  int64_t captures = ctx.get_int("captures", 0);
  if (captures < 0 || formal + static_cast<size_t>(captures) > ctx.num_inputs()) {
    ctx.fail(
        "attribute captures is {}, but the node has {} inputs, of which at least {} are "
        "its own",
        captures, ctx.num_inputs(), formal);
  }
  return static_cast<size_t>(captures);
}

std::unique_ptr<Graph> type_body(const NodeContext& ctx, const Graph& body,
                                 std::span<const TensorType> types,
                                 std::span<const Tensor* const> known) {
  MINIC_CHECK(known.size() == types.size());
  std::unique_ptr<Graph> typed = copy_with_input_types(ctx, body, types);
  const Graph& graph = *typed;
  ShapeInferenceOptions options;
  options.known_input_value = [&](const Value& input) -> const Tensor* {
    for (size_t i = 0; i < known.size(); ++i) {
      if (graph.inputs()[i] == &input) return known[i];
    }
    return nullptr;
  };
  in_body(ctx, body, [&] { infer_shapes(*typed, options); });
  return typed;
}

std::unique_ptr<Graph> try_type_body(const NodeContext& ctx, const Graph& body,
                                     std::span<const TensorType> types,
                                     std::span<const Tensor* const> known) {
  try {
    return type_body(ctx, body, types, known);
  } catch (const InternalError&) {
    throw;
  } catch (const Error&) {
    return nullptr;
  }
}

std::vector<TensorType> output_types(const Graph& typed) {
  std::vector<TensorType> types;
  for (const Value* output : typed.outputs()) types.push_back(output->type);
  return types;
}

BodyRunner::BodyRunner(const NodeContext& ctx, const Graph& body, std::vector<TensorType> types,
                       std::vector<const Tensor*> fixed, BodyEvaluator* evaluator)
    : ctx_(ctx), body_(body), evaluator_(evaluator) {
  check_input_count(ctx, body, types.size());
  // A body whose shapes need a changing value (a Slice at the iteration number) cannot be
  // typed once; run() types it for each run instead.
  typed_ = try_type_body(ctx, body, types, fixed);
}

std::vector<Tensor> BodyRunner::run(std::span<const Tensor* const> inputs) const {
  check_input_count(ctx_, body_, inputs.size());
  if (evaluator_) {
    std::optional<std::vector<Tensor>> outputs =
        in_body(ctx_, body_, [&] { return evaluator_->run(body_, ctx_.opset(), inputs); });
    if (outputs) return std::move(*outputs);
  }
  bool fits = typed_ != nullptr;
  for (size_t i = 0; fits && i < inputs.size(); ++i) {
    fits = inputs[i]->type() == typed_->inputs()[i]->type;
  }
  if (fits) return in_body(ctx_, body_, [&] { return evaluate_graph(*typed_, inputs); });

  // Type a copy for exactly these values: shape rules may read any of them, which freezes
  // it into a constant of the copy.
  std::vector<TensorType> types;
  std::unordered_map<std::string, const Tensor*> by_name;
  for (size_t i = 0; i < inputs.size(); ++i) {
    types.push_back(inputs[i]->type());
    by_name.emplace(body_.inputs()[i]->name(), inputs[i]);
  }
  std::unique_ptr<Graph> typed = copy_with_input_types(ctx_, body_, types);
  ShapeInferenceOptions options;
  options.input_value = [&](const Value& input) -> std::optional<Tensor> {
    return *by_name.at(input.name());
  };
  return in_body(ctx_, body_, [&] {
    infer_shapes(*typed, options);
    std::vector<const Tensor*> remaining;
    for (const Value* input : typed->inputs()) remaining.push_back(by_name.at(input->name()));
    return evaluate_graph(*typed, remaining);
  });
}

Tensor take_row(const Tensor& tensor, int64_t axis, int64_t index) {
  MINIC_CHECK(axis >= 0 && axis < tensor.rank());
  Shape row_shape = tensor.shape();
  row_shape.erase(row_shape.begin() + axis);
  Tensor row(tensor.dtype(), row_shape);
  take_row_into(tensor, axis, index, row);
  return row;
}

void take_row_into(const Tensor& tensor, int64_t axis, int64_t index, Tensor& row) {
  const Shape& shape = tensor.shape();
  MINIC_CHECK(axis >= 0 && axis < tensor.rank() && index >= 0 && index < shape[axis]);
  MINIC_CHECK(row.dtype() == tensor.dtype() && row.rank() == tensor.rank() - 1);
  int64_t outer = num_elements(Shape(shape.begin(), shape.begin() + axis));
  size_t inner_bytes = row.bytes().size() / static_cast<size_t>(std::max<int64_t>(outer, 1));
  for (int64_t o = 0; o < outer; ++o) {
    const std::byte* from =
        tensor.bytes().data() + (static_cast<size_t>(o * shape[axis] + index)) * inner_bytes;
    std::memcpy(row.bytes().data() + static_cast<size_t>(o) * inner_bytes, from, inner_bytes);
  }
}

Tensor stack_rows(std::span<const Tensor> rows, int64_t axis) {
  MINIC_CHECK(!rows.empty());
  const TensorType& row_type = rows[0].type();
  MINIC_CHECK(axis >= 0 && axis <= row_type.rank());
  Shape shape = row_type.shape;
  shape.insert(shape.begin() + axis, static_cast<int64_t>(rows.size()));
  Tensor result(row_type.dtype, shape);
  int64_t outer = num_elements(Shape(shape.begin(), shape.begin() + axis));
  size_t inner_bytes = rows[0].bytes().size() / static_cast<size_t>(std::max<int64_t>(outer, 1));
  for (size_t r = 0; r < rows.size(); ++r) {
    MINIC_CHECK(rows[r].type() == row_type);
    for (int64_t o = 0; o < outer; ++o) {
      std::byte* to =
          result.bytes().data() + (static_cast<size_t>(o) * rows.size() + r) * inner_bytes;
      std::memcpy(to, rows[r].bytes().data() + static_cast<size_t>(o) * inner_bytes, inner_bytes);
    }
  }
  return result;
}

}  // namespace minic
