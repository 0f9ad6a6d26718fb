// The KernelBuilder: stages made by the compute rules' builders, and when each becomes a
// loop nest.
//
// Course module 3. See kernel_builder.h. Invariant: a ComputeTensor read at indices gives
// an expression of the element type that uses only those indices and the kernel's buffers
// -- never the iteration variables of another stage -- so it can be placed in any block.
// Reading a `compute` stage substitutes the indices for its iteration variables
// (inlining); reading a reduction, or a kept stage, first emits its loop nest once
// (KernelBuilder::materialize) and then loads from its buffer.
//
//   relu = compute(i -> max(X[i], 0));  y = compute(i -> relu(i) * 2.0)
//   y read at [v0]  gives  max(X[v0], 0.0) * 2.0
//
// Chapter: docs/module3-loop-ir.md#5-lowering-compute-rules
#include "kernel_builder.h"

#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/visitor.h"

namespace minic {

using loop::Buffer;
using loop::Expr;
using loop::Stmt;

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
    internal_fail("compute stage '{}' gives {} for a tensor of {}", stage,
                  value ? loop::type_name(value.type()) : "no value", type_string(type));
  }
}

}  // namespace

// --- stages ----------------------------------------------------------------------------------

StageNode& stage_of(const ComputeTensor& tensor) {
  // Every TensorNode of a lowering is made by a KernelBuilder, as a StageNode.
  return static_cast<StageNode&>(*tensor.node());
}

Expr StageNode::element(const Indices& indices) {
  if (!buffer && (reducer || keep)) builder->materialize(*this);
  if (buffer) return loop::Load::make(buffer, indices);
  loop::VarMap map;
  for (size_t d = 0; d < indices.size(); ++d) map[axes[d].as<loop::Var>()] = indices[d];
  return loop::substitute(value, map);
}

ComputeTensor KernelBuilder::compute(const std::string& name, const TensorType& type,
                                     const std::function<Expr(const Indices&)>& body) {
  auto stage = std::make_shared<StageNode>();
  stage->name = name;
  stage->type = type;
  stage->axes = make_axes("v", type.shape.size());
  stage->value = body(stage->axes);
  check_value(stage->value, type, name);
  stage->keep = expression_size(stage->value) > kMaxInlinedNodes;
  return add_stage(std::move(stage));
}

ComputeTensor KernelBuilder::reduce(const std::string& name, const TensorType& type,
                                    const Shape& reduce_extents, Reducer reducer,
                                    const std::function<Expr(const Indices&, const Indices&)>& body) {
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
  return add_stage(std::move(stage));
}

void KernelBuilder::keep(const ComputeTensor& tensor) { stage_of(tensor).keep = true; }

// --- the kernel ------------------------------------------------------------------------------

std::string KernelBuilder::unique_name(const std::string& hint) {
  std::string name = hint.empty() ? "t" : hint;
  for (int k = 1; names_.count(name); ++k) name = fmt::format("{}_{}", hint, k);
  names_.insert(name);
  return name;
}

ComputeTensor KernelBuilder::add_input(const std::string& name, const TensorType& type) {
  auto stage = std::make_shared<StageNode>();
  stage->name = name;
  stage->type = type;
  stage->buffer = loop::BufferNode::make(unique_name(name), type.dtype, type.shape);
  stage->builder = this;
  params_.push_back(stage->buffer);
  return ComputeTensor(std::move(stage));
}

Buffer KernelBuilder::add_output(const std::string& name, const TensorType& type) {
  Buffer buffer = loop::BufferNode::make(unique_name(name), type.dtype, type.shape);
  params_.push_back(buffer);
  return buffer;
}

ComputeTensor KernelBuilder::add_stage(std::shared_ptr<StageNode> stage) {
  stage->builder = this;
  return ComputeTensor(std::move(stage));
}

void KernelBuilder::bind(const ComputeTensor& tensor, const Buffer& output) {
  StageNode& stage = stage_of(tensor);
  if (!stage.buffer && !stage.target && stage.is_stage()) stage.target = output;
}

void KernelBuilder::write(const ComputeTensor& tensor, const Buffer& output) {
  StageNode& stage = stage_of(tensor);
  if (stage.buffer == output) return;
  if (!stage.buffer && stage.is_stage() && (!stage.target || stage.target == output)) {
    stage.target = output;
    materialize(stage);
    return;
  }
  // A parameter, or a stage already written elsewhere: copy it.
  auto copy = std::make_shared<StageNode>();
  copy->name = "copy";
  copy->type = tensor.type();
  for (size_t d = 0; d < copy->type.shape.size(); ++d) {
    copy->axes.push_back(loop::Var::make(fmt::format("v{}", d)));
  }
  copy->value = tensor(copy->axes);
  copy->target = output;
  copy->builder = this;
  materialize(*copy);
}

Buffer KernelBuilder::materialize(StageNode& stage) {
  if (stage.buffer) return stage.buffer;
  if (stage.target) {
    stage.buffer = stage.target;
  } else {
    stage.buffer = loop::BufferNode::make(unique_name(stage.name), stage.type.dtype,
                                          stage.type.shape);
    temporaries_.push_back(stage.buffer);
  }
  // A tensor without elements needs no loops (and a loop of extent 0 binds nothing).
  if (stage.type.num_elements() > 0) {
    stages_.push_back(make_loop_nest(stage, stage.buffer, unique_block_name(stage.name)));
  }
  return stage.buffer;
}

std::string KernelBuilder::unique_block_name(const std::string& hint) {
  std::string name = hint.empty() ? "stage" : hint;
  for (int k = 1; block_names_.count(name); ++k) name = fmt::format("{}_{}", hint, k);
  block_names_.insert(name);
  return name;
}

loop::PrimFunc KernelBuilder::finish(const std::string& name) {
  Stmt body = stages_.empty() ? loop::Evaluate::make(index(0)) : loop::Seq::make(stages_);
  for (auto it = temporaries_.rbegin(); it != temporaries_.rend(); ++it) {
    body = loop::Allocate::make(*it, body);
  }
  return loop::PrimFunc{name, params_, body};
}

}  // namespace minic
