// Compute rules' building blocks: tensors, the two builders, and the expression helpers.
//
// Course module 3. See include/minic/ops/compute.h. Invariant: a ComputeTensor read at
// indices gives an expression of the element type that uses only those indices and the
// kernel's buffers -- never the iteration variables of another stage -- so it can be
// placed in any block. Reading a `compute` stage substitutes the indices for its
// iteration variables (inlining); reading a reduction, or a kept stage, first emits its
// loop nest once (KernelBuilder::materialize) and then loads from its buffer.
//
//   relu = compute(i -> max(X[i], 0));  y = compute(i -> relu(i) * 2.0)
//   y read at [v0]  gives  max(X[v0], 0.0) * 2.0
#include "compute_stage.h"

#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/visitor.h"

#include <cctype>
#include <limits>

namespace minic {

using loop::Expr;

namespace {

// A `compute` stage whose element is a larger expression than this (in nodes) is kept in
// a buffer rather than inlined: a chain whose every op reads its input twice (x * x)
// would otherwise double the expression at each step.
constexpr int kMaxInlinedNodes = 64;

// Counts the nodes of an expression, every kind alike.
class NodeCounter : public loop::IRVisitor {
 public:
  int count = 0;
#define MINIC_COUNT_NODE(Node)                         \
  void visit_##Node(const loop::Node* node) override { \
    ++count;                                           \
    loop::IRVisitor::visit_##Node(node);               \
  }
  MINIC_EXPR_NODES(MINIC_COUNT_NODE)
#undef MINIC_COUNT_NODE
};

int expression_size(const Expr& expr) {
  NodeCounter counter;
  counter.visit(expr);
  return counter.count;
}

// Fresh iteration variables v0, v1, ... (or r0, r1, ... for reductions).
std::vector<Expr> make_axes(const char* prefix, size_t count) {
  std::vector<Expr> axes;
  for (size_t d = 0; d < count; ++d) {
    axes.push_back(loop::Var::make(fmt::format("{}{}", prefix, d)));
  }
  return axes;
}

// A rule's value must have the element type of the tensor it describes: a mismatch is a
// bug in the rule.
void check_value(const Expr& value, const TensorType& type, const std::string& stage) {
  if (!value || value.type() != loop::DataType{type.dtype, 1}) {
    fail("internal error (a bug in minic): compute stage '{}' gives {} for a tensor of {}", stage,
         value ? loop::type_name(value.type()) : "no value", type_string(type));
  }
}

}  // namespace

// --- ComputeTensor -------------------------------------------------------------------------

const TensorType& ComputeTensor::type() const { return node_->type; }

Expr ComputeTensor::operator()(const Indices& indices) const {
  StageNode& stage = *node_;
  if (static_cast<int64_t>(indices.size()) != stage.type.rank()) {
    fail("internal error (a bug in minic): tensor '{}' of {} read with {} indices", stage.name,
         type_string(stage.type), indices.size());
  }
  if (!stage.buffer && (stage.reducer || stage.keep)) stage.builder->materialize(stage);
  if (stage.buffer) return loop::Load::make(stage.buffer, indices);
  loop::VarMap map;
  for (size_t d = 0; d < indices.size(); ++d) map[stage.axes[d].as<loop::Var>()] = indices[d];
  return loop::substitute(stage.value, map);
}

// --- ComputeContext ------------------------------------------------------------------------

const ComputeTensor& ComputeContext::input(size_t index) const {
  if (index >= inputs_.size() || !inputs_[index]) fail("input {} is required but missing", index);
  return *inputs_[index];
}

const Tensor* ComputeContext::known_input(size_t index) const {
  if (!has_input(index)) return nullptr;
  return constants_(index);
}

const Tensor& ComputeContext::constant_input(size_t index) const {
  if (!has_input(index)) fail("input {} is required but missing", index);
  const Tensor* value = known_input(index);
  if (!value) {
    fail("its computation depends on the value of input {} (%{}), which is only known at run "
         "time; the lowering to loop IR needs it to be a constant",
         index, node().input(index)->name());
  }
  return *value;
}

ComputeTensor ComputeContext::compute(const std::string& name, const TensorType& type,
                                      const std::function<Expr(const Indices&)>& body) const {
  auto stage = std::make_shared<StageNode>();
  stage->name = name;
  stage->type = type;
  stage->axes = make_axes("v", type.shape.size());
  stage->value = body(stage->axes);
  check_value(stage->value, type, name);
  stage->keep = expression_size(stage->value) > kMaxInlinedNodes;
  return builder_.add_stage(std::move(stage));
}

ComputeTensor ComputeContext::reduce(
    const std::string& name, const TensorType& type, const Shape& reduce_extents, Reducer reducer,
    const std::function<Expr(const Indices&, const Indices&)>& body) const {
  // An empty reduction is its identity everywhere: no reduction loop would run the init.
  if (num_elements(reduce_extents) == 0) {
    return compute(name, type,
                   [&](const Indices&) { return reducer_identity(reducer, type.dtype); });
  }
  auto stage = std::make_shared<StageNode>();
  stage->name = name;
  stage->type = type;
  stage->axes = make_axes("v", type.shape.size());
  stage->reduce_axes = make_axes("r", reduce_extents.size());
  stage->reduce_extents = reduce_extents;
  stage->reducer = reducer;
  stage->value = body(stage->axes, stage->reduce_axes);
  check_value(stage->value, type, name);
  return builder_.add_stage(std::move(stage));
}

void ComputeContext::no_rule(const std::string& reason) const {
  std::string where = node().name.empty() ? "defining %" + node().outputs().at(0)->name()
                                          : fmt::format("'{}'", node().name);
  throw NoComputeRule(
      fmt::format("no compute rule for op {} (node {}): {}", node().op, where, reason));
}

ComputeTensor ComputeContext::keep(const ComputeTensor& tensor) const {
  tensor.node()->keep = true;
  return tensor;
}

// --- helpers -------------------------------------------------------------------------------

Expr constant(DType dtype, double value) {
  return loop::make_const(loop::DataType{dtype, 1}, value);
}

Expr element_constant(const Tensor& tensor, int64_t position) {
  loop::DataType type{tensor.dtype(), 1};
  if (is_float(tensor.dtype())) return loop::FloatImm::make(tensor.as_double(position), type);
  return loop::IntImm::make(tensor.as_int64(position), type);
}

Expr index(int64_t value) { return loop::IntImm::make(value); }

Expr call(const std::string& name, std::vector<Expr> args) {
  loop::DataType type = args.at(0).type();
  return loop::Call::make(type, name, std::move(args));
}

Expr select(Expr condition, Expr if_true, Expr if_false) {
  return loop::Select::make(std::move(condition), std::move(if_true), std::move(if_false));
}

Expr cast(DType dtype, Expr value) {
  if (value.type().dtype == dtype) return value;
  loop::DataType type{dtype, value.type().lanes};  // before `value` is moved from
  return loop::Cast::make(type, std::move(value));
}

Expr affine(const Expr& x, int64_t scale, int64_t offset) {
  Expr result = scale == 1 ? x : x * scale;
  if (offset > 0) result = result + offset;
  if (offset < 0) result = result - (-offset);
  return result;
}

Expr in_range(const Expr& value, int64_t extent) {
  return loop::And::make(loop::LE::make(index(0), value), loop::LT::make(value, index(extent)));
}

Indices broadcast_indices(const Indices& indices, const Shape& shape, const Shape& output_shape) {
  MINIC_CHECK(indices.size() >= shape.size());
  size_t offset = indices.size() - shape.size();
  Indices result;
  for (size_t d = 0; d < shape.size(); ++d) {
    bool stretched = output_shape.empty() || output_shape[offset + d] != 1;
    result.push_back(shape[d] == 1 && stretched ? index(0) : indices[offset + d]);
  }
  return result;
}

Expr flat_offset(const Indices& indices, const Shape& shape) {
  Shape strides = row_major_strides(shape);
  Expr offset;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;  // its index is 0
    Expr term = strides[d] == 1 ? indices[d] : indices[d] * strides[d];
    offset = offset ? offset + term : term;
  }
  return offset ? offset : index(0);
}

Indices unflatten(const Expr& offset, const Shape& shape) {
  Shape strides = row_major_strides(shape);
  Indices result;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) {
      result.push_back(index(0));
      continue;
    }
    Expr value = offset;
    if (strides[d] != 1) value = loop::FloorDiv::make(value, index(strides[d]));
    // The first axis that is not 1 needs no wrap-around: the offset is below the size.
    bool outermost = num_elements(Shape(shape.begin(), shape.begin() + d)) == 1;
    if (!outermost) value = loop::FloorMod::make(value, index(shape[d]));
    result.push_back(value);
  }
  return result;
}

Indices reshape_indices(const Indices& indices, const Shape& to, const Shape& from) {
  // The axes that are not 1, on both sides: equal lists pair up one for one.
  std::vector<size_t> to_axes;
  std::vector<size_t> from_axes;
  for (size_t d = 0; d < to.size(); ++d) {
    if (to[d] != 1) to_axes.push_back(d);
  }
  for (size_t d = 0; d < from.size(); ++d) {
    if (from[d] != 1) from_axes.push_back(d);
  }
  bool paired = to_axes.size() == from_axes.size();
  for (size_t k = 0; paired && k < to_axes.size(); ++k) {
    paired = to[to_axes[k]] == from[from_axes[k]];
  }
  if (!paired) return unflatten(flat_offset(indices, to), from);
  Indices result(from.size(), index(0));
  for (size_t k = 0; k < to_axes.size(); ++k) result[from_axes[k]] = indices[to_axes[k]];
  return result;
}

std::string stage_name(const NodeContext& ctx) {
  std::string name = ctx.node().op;
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

ComputeTensor elementwise(const ComputeContext& ctx, DType compute_dtype,
                          const std::function<Expr(const std::vector<Expr>&)>& formula) {
  std::vector<ComputeTensor> inputs;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    if (ctx.has_input(k)) inputs.push_back(ctx.input(k));
  }
  const TensorType& type = ctx.output_type(0);
  return ctx.compute(stage_name(ctx), type, [&](const Indices& i) {
    std::vector<Expr> values;
    for (const ComputeTensor& input : inputs) {
      values.push_back(cast(compute_dtype, input(broadcast_indices(i, input.shape(), type.shape))));
    }
    return cast(type.dtype, formula(values));
  });
}

DType accumulation_dtype(DType dtype) {
  return dtype == DType::f16 || dtype == DType::bf16 ? DType::f32 : dtype;
}

}  // namespace minic
