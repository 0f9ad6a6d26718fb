// The op registry and the contexts shape rules and kernels see. Course module 2.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/op.h"

#include <algorithm>
#include <set>

namespace minic {

std::string_view fusion_kind_name(FusionKind kind) {
  switch (kind) {
    case FusionKind::elementwise: return "elementwise";
    case FusionKind::broadcast: return "broadcast";
    case FusionKind::injective: return "injective";
    case FusionKind::reduction: return "reduction";
    case FusionKind::out_fusable: return "out-fusable";
    case FusionKind::opaque: return "opaque";
  }
  return "opaque";
}

// --- NodeContext ------------------------------------------------------------------------------

const AttributeValue* NodeContext::find(std::string_view name, std::string_view kind) const {
  auto it = node_.attributes.find(name);
  if (it == node_.attributes.end()) return nullptr;
  if (attribute_kind_name(it->second) != kind) {
    fail("attribute '{}' should be of kind {}, not {}", name, kind,
         attribute_kind_name(it->second));
  }
  return &it->second;
}

bool NodeContext::has_attr(std::string_view name) const {
  return node_.attributes.find(name) != node_.attributes.end();
}

int64_t NodeContext::get_int(std::string_view name, int64_t fallback) const {
  const AttributeValue* value = find(name, "int");
  return value ? std::get<int64_t>(*value) : fallback;
}

int64_t NodeContext::get_int(std::string_view name) const {
  const AttributeValue* value = find(name, "int");
  if (!value) fail("missing required attribute '{}'", name);
  return std::get<int64_t>(*value);
}

float NodeContext::get_float(std::string_view name, float fallback) const {
  const AttributeValue* value = find(name, "float");
  return value ? std::get<float>(*value) : fallback;
}

std::string NodeContext::get_string(std::string_view name, std::string_view fallback) const {
  const AttributeValue* value = find(name, "string");
  return value ? std::get<std::string>(*value) : std::string(fallback);
}

std::vector<int64_t> NodeContext::get_ints(std::string_view name,
                                           std::vector<int64_t> fallback) const {
  const AttributeValue* value = find(name, "ints");
  return value ? std::get<std::vector<int64_t>>(*value) : fallback;
}

std::vector<int64_t> NodeContext::get_ints(std::string_view name) const {
  const AttributeValue* value = find(name, "ints");
  if (!value) fail("missing required attribute '{}'", name);
  return std::get<std::vector<int64_t>>(*value);
}

std::vector<float> NodeContext::get_floats(std::string_view name,
                                           std::vector<float> fallback) const {
  const AttributeValue* value = find(name, "floats");
  return value ? std::get<std::vector<float>>(*value) : fallback;
}

const Tensor& NodeContext::get_tensor(std::string_view name) const {
  const AttributeValue* value = find(name, "tensor");
  if (!value) fail("missing required attribute '{}'", name);
  return std::get<Tensor>(*value);
}

const Graph& NodeContext::get_graph(std::string_view name) const {
  const AttributeValue* value = find(name, "graph");
  if (!value) fail("missing required attribute '{}'", name);
  return *std::get<GraphAttribute>(*value);
}

int64_t NodeContext::normalize_axis(int64_t axis, int64_t rank) const {
  if (axis < -rank || axis >= rank) fail("axis {} is out of range for rank {}", axis, rank);
  return axis < 0 ? axis + rank : axis;
}

// --- ShapeContext -----------------------------------------------------------------------------

const TensorType& ShapeContext::input_type(size_t index) const {
  if (!has_input(index)) fail("input {} is required but missing", index);
  return node().input(index)->type;
}

const Tensor* ShapeContext::known_value(size_t index) const {
  if (!has_input(index)) return nullptr;
  return lookup_(node().input(index));
}

const Tensor* ShapeContext::settled_value(size_t index) const {
  if (!has_input(index)) return nullptr;
  return peek_ ? peek_(node().input(index)) : lookup_(node().input(index));
}

namespace {

// The values without a producer that are not constants (graph inputs) that `value` is
// computed from, sorted: what the user could give to make it known before running.
std::vector<std::string> run_time_sources(const Value* value) {
  std::vector<std::string> sources;
  std::vector<const Value*> stack = {value};
  std::set<const Value*> seen;
  while (!stack.empty()) {
    const Value* next = stack.back();
    stack.pop_back();
    if (!next || next->constant || !seen.insert(next).second) continue;
    if (!next->producer()) {
      sources.push_back(next->name());
    } else {
      const std::vector<Value*>& inputs = next->producer()->inputs();
      stack.insert(stack.end(), inputs.begin(), inputs.end());
    }
  }
  std::sort(sources.begin(), sources.end());
  return sources;
}

}  // namespace

const Tensor& ShapeContext::input_value(size_t index) const {
  if (!has_input(index)) fail("input {} is required but missing", index);
  const Tensor* value = known_value(index);
  if (value) return *value;
  // Which value, and why it is not known: a graph input, computed from some, or from ops
  // whose results are known only when the graph runs.
  const Value* input = node().input(index);
  std::vector<std::string> sources = run_time_sources(input);
  std::string why = "it is computed by ops whose results are known only when the graph runs";
  if (sources.size() == 1 && sources[0] == input->name()) {
    why = fmt::format("if %{0} is a graph input, give its value with `minic run --input {0}=FILE`",
                      input->name());
  } else if (!sources.empty()) {
    why = fmt::format("it is computed from %{}; give the value of a graph input with `minic "
                      "run --input NAME=FILE`",
                      fmt::join(sources, ", %"));
  }
  fail("its output shape depends on the value of input {} (%{}), which is only known at run "
       "time; minic compiles for static shapes, so that value must be a constant ({})",
       index, input->name(), why);
}

void ShapeContext::set_output_value(size_t index, Tensor value) const {
  if (output_values_.size() <= index) output_values_.resize(index + 1);
  output_values_[index] = std::move(value);
}

// --- KernelContext ----------------------------------------------------------------------------

const Tensor& KernelContext::input(size_t index) const {
  if (index >= inputs_.size() || !inputs_[index]) fail("input {} is required but missing", index);
  return *inputs_[index];
}

// --- OpRegistry -------------------------------------------------------------------------------

void OpRegistry::add(OpSchema schema) {
  MINIC_CHECK(!schemas_.count(schema.name));
  MINIC_CHECK(schema.shape_rule && schema.kernel);
  std::string name = schema.name;
  schemas_.emplace(std::move(name), std::move(schema));
}

const OpSchema* OpRegistry::find(std::string_view op) const {
  auto it = schemas_.find(op);
  return it == schemas_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> result;
  for (const auto& [name, schema] : schemas_) result.push_back(name);
  return result;
}

}  // namespace minic
