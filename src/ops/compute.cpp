// What compute rules are written with: reading a ComputeTensor, the ComputeContext a rule
// is given, and the expression helpers of include/minic/ops/compute.h.
//
// Course module 3. The context's builders (compute, reduce, keep) forward to the lowering
// driver's StageBuilder (src/lower/kernel_builder.cpp), which decides whether a stage is
// inlined or written to a buffer. The helpers only build expressions: they read no stage
// and may be called from any rule.
//
// Chapter: docs/module3-loop-ir.md#5-lowering-compute-rules
#include "minic/ops/compute.h"

#include "minic/support/error.h"

#include <cctype>
#include <limits>
#include <map>

namespace minic {

using loop::Expr;

// --- ComputeTensor -------------------------------------------------------------------------

Expr ComputeTensor::operator()(const Indices& indices) const {
  if (static_cast<int64_t>(indices.size()) != rank()) {
    internal_fail("tensor '{}' of {} read with {} indices", node_->name, type_string(type()),
                  indices.size());
  }
  return node_->element(indices);
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
    // A form of the op the rule does not cover: the reference kernel runs it.
    no_rule(fmt::format("its computation depends on the value of input {} (%{}), which is "
                        "only known at run time; the lowering to loop IR needs it to be a "
                        "constant",
                        index, node().input(index)->name()));
  }
  return *value;
}

ComputeTensor ComputeContext::compute(const std::string& name, const TensorType& type,
                                      const std::function<Expr(const Indices&)>& body) const {
  return builder_.compute(name, type, body);
}

ComputeTensor ComputeContext::reduce(
    const std::string& name, const TensorType& type, const Shape& reduce_extents, Reducer reducer,
    const std::function<Expr(const Indices&, const Indices&)>& body) const {
  return builder_.reduce(name, type, reduce_extents, reducer, body);
}

void ComputeContext::no_rule(const std::string& reason) const {
  std::string where = node().name.empty() ? "defining %" + node().outputs().at(0)->name()
                                          : fmt::format("'{}'", node().name);
  throw NoComputeRule(
      fmt::format("no compute rule for op {} (node {}): {}", node().op, where, reason));
}

ComputeTensor ComputeContext::keep(const ComputeTensor& tensor) const {
  builder_.keep(tensor);
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

Expr reducer_identity(Reducer reducer, DType dtype) {
  loop::DataType type{dtype, 1};
  switch (reducer) {
    case Reducer::sum: return constant(dtype, 0);
    case Reducer::product: return constant(dtype, 1);
    case Reducer::max:
    case Reducer::min: {
      bool is_max = reducer == Reducer::max;
      if (is_float(dtype)) {
        double infinity = std::numeric_limits<double>::infinity();
        return loop::FloatImm::make(is_max ? -infinity : infinity, type);
      }
      Expr result;
      visit_dtype(dtype, [&]<typename T>() {
        if constexpr (std::is_integral_v<T>) {
          T limit = is_max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
          // An unsigned 64-bit limit wraps to -1 here; the interpreter reads it back as u64.
          result = loop::IntImm::make(static_cast<int64_t>(limit), type);
        }
      });
      if (!result) {
        internal_fail("no {} identity for {}", reducer == Reducer::max ? "max" : "min",
                      dtype_name(dtype));
      }
      return result;
    }
  }
  return constant(dtype, 0);
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
  // Without a domain: "minic.MatMulIntegerWords" names its stages "matmulintegerwords".
  const std::string& op = ctx.node().op;
  std::string name = op.substr(op.rfind('.') + 1);
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

// --- rules registered from outside src/ops ---------------------------------------------------

namespace {

// The rules of MINIC_REGISTER_COMPUTE_RULE, by op. They are registered while static
// objects are built, before main, so the op registry is not read here but on lookup.
std::map<std::string, ComputeRule, std::less<>>& registered_rules() {
  static std::map<std::string, ComputeRule, std::less<>> rules;
  return rules;
}

}  // namespace

RegisterComputeRule::RegisterComputeRule(const char* op, ComputeRule rule) {
  if (!registered_rules().emplace(op, std::move(rule)).second) {
    internal_fail("two compute rules are registered for op {}", op);
  }
}

const ComputeRule* find_compute_rule(std::string_view op) {
  const OpSchema* schema = op_registry().find(op);
  auto registered = registered_rules().find(op);
  if (registered == registered_rules().end()) {
    return schema && schema->compute ? &schema->compute : nullptr;
  }
  if (!schema) {
    internal_fail("a compute rule is registered for op {}, which minic does not know", op);
  }
  if (schema->compute) {
    internal_fail("a compute rule is registered for op {}, whose schema has one already", op);
  }
  return &registered->second;
}

DType accumulation_dtype(DType dtype) {
  return dtype == DType::f16 || dtype == DType::bf16 ? DType::f32 : dtype;
}

}  // namespace minic
