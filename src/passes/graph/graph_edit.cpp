// Graph edits shared by simplify, fold-batchnorm and fold-conv-affine. Course module 2.
//
// replace_node is the one subtle edit. Removing `%y = Identity(%x)` means every reader of
// %y reads %x instead. If %y is a graph output, Graph::replace_all_uses_with would make %x
// the graph output, and the model's output would change its name to an internal one. So
// when %x is another node's result, the two values trade places instead
// (Graph::swap_producers): %y becomes that node's output (same type, so nothing downstream
// notices) and %x, now read by nobody, is dropped with the Identity. A graph input or a
// constant cannot trade places; then the graph output simply becomes that value (a graph
// output may be a graph input).
//
// Chapter: docs/module2-graph-passes.md#2-cleaning-up-simplify-fold-constants-dce-cse
#include "graph_edit.h"

#include <algorithm>
#include <cstring>

namespace minic::edit {

bool used_only_by(const Graph& graph, const Value* value, const Node* user) {
  if (graph.is_graph_output(value)) return false;
  return std::all_of(value->users().begin(), value->users().end(),
                     [&](const Node* reader) { return reader == user; });
}

bool is_unused(const Graph& graph, const Value* value) {
  return value->users().empty() && !graph.is_graph_output(value);
}

void replace_node(Graph& graph, Node* node, Value* output, Value* replacement,
                  bool take_name) {
  MINIC_CHECK(output->producer() == node && output->type == replacement->type);
  for (const Value* other : node->outputs()) {
    MINIC_CHECK(other == output || is_unused(graph, other));
  }
  Node* producer = replacement->producer();
  if ((take_name || graph.is_graph_output(output)) && producer != nullptr && producer != node &&
      !graph.is_graph_output(replacement)) {
    // Readers of the replacement (the node among them) now read `output`; then `output`
    // becomes the producer's result and the replacement the node's, read by nobody.
    graph.replace_all_uses_with(replacement, output);
    graph.swap_producers(output, replacement);
  } else {
    graph.replace_all_uses_with(output, replacement);
  }
  erase_if_dead(graph, node);
}

void erase_if_dead(Graph& graph, Node* node) {
  for (const Value* output : node->outputs()) {
    if (!is_unused(graph, output)) return;
  }
  std::vector<Value*> inputs = node->inputs();
  graph.erase_node(node);
  // erase_node clears the producer of the erased node's outputs, so a producer reached
  // twice through two of its outputs is erased only once.
  for (Value* input : inputs) {
    if (input && input->producer()) erase_if_dead(graph, input->producer());
  }
}

bool is_scalar_constant(const Value* value) {
  return value && value->is_constant() && value->type.num_elements() == 1;
}

std::optional<double> splat_value(const Value* value) {
  if (value == nullptr || !value->is_constant()) return std::nullopt;
  const Tensor& data = *value->constant;
  if (data.num_elements() == 0 || is_storage_only(data.dtype())) return std::nullopt;
  const double first = data.as_double(0);
  for (int64_t i = 1; i < data.num_elements(); ++i) {
    if (data.as_double(i) != first) return std::nullopt;
  }
  return first;
}

std::optional<std::vector<int64_t>> constant_ints(const Value* value) {
  if (value == nullptr || !value->is_constant()) return std::nullopt;
  const Tensor& data = *value->constant;
  if (!is_int(data.dtype()) || data.rank() > 1) return std::nullopt;
  return data.to_int64_vector();
}

int64_t int_attribute(const Node& node, std::string_view name, int64_t fallback) {
  auto it = node.attributes.find(name);
  if (it == node.attributes.end() || !std::holds_alternative<int64_t>(it->second)) return fallback;
  return std::get<int64_t>(it->second);
}

double float_attribute(const Node& node, std::string_view name, double fallback) {
  auto it = node.attributes.find(name);
  if (it == node.attributes.end() || !std::holds_alternative<float>(it->second)) return fallback;
  return std::get<float>(it->second);
}

std::vector<int64_t> ints_attribute(const Node& node, std::string_view name,
                                    std::vector<int64_t> fallback) {
  auto it = node.attributes.find(name);
  if (it == node.attributes.end()) return fallback;
  if (!std::holds_alternative<std::vector<int64_t>>(it->second)) return {};
  return std::get<std::vector<int64_t>>(it->second);
}

Tensor transposed(const Tensor& matrix) {
  const int64_t rows = matrix.shape()[0];
  const int64_t columns = matrix.shape()[1];
  Tensor result(matrix.dtype(), {columns, rows});
  const size_t size = static_cast<size_t>(dtype_size(matrix.dtype()));
  const std::byte* from = matrix.bytes().data();
  std::byte* to = result.bytes().data();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < columns; ++c) {
      std::memcpy(to + (c * rows + r) * size, from + (r * columns + c) * size, size);
    }
  }
  return result;
}

Value* add_node_of_type(Graph& graph, const std::string& op, std::vector<Value*> inputs,
                        const std::string& name, const TensorType& type, Attributes attributes) {
  Node* node = graph.add_node(op, std::move(inputs), {graph.unique_name(name)},
                              std::move(attributes));
  node->output(0)->type = type;
  node->output(0)->has_type = true;
  return node->output(0);
}

Value* add_constant_from_doubles(Graph& graph, const std::string& hint, DType dtype,
                                 Shape shape, const std::vector<double>& values) {
  Tensor data = Tensor::from_vector<double>(std::move(shape), values).cast(dtype);
  return graph.add_constant(graph.unique_name(hint), std::move(data));
}

std::vector<double> scale_along_axis(const Tensor& data, int64_t axis,
                                     const std::vector<double>& factors) {
  const Shape& shape = data.shape();
  MINIC_CHECK(axis >= 0 && axis < data.rank() &&
              static_cast<int64_t>(factors.size()) == shape[axis]);
  const int64_t inner = num_elements(Shape(shape.begin() + axis + 1, shape.end()));
  std::vector<double> values = data.to_double_vector();
  // Runs of `inner` elements share a factor; the factors repeat every shape[axis] runs.
  size_t i = 0;
  while (i < values.size()) {
    for (double factor : factors) {
      for (int64_t k = 0; k < inner; ++k) values[i++] *= factor;
    }
  }
  return values;
}

}  // namespace minic::edit
