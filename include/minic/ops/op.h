// What minic knows about each op: its schema, shape rule, reference kernel, fusion kind.
//
// Course module 2 (and 3 for the compute rules, OpSchema::compute). Every op lives in
// one file of src/ops/, which registers an OpSchema for it. A student learns what `Conv`
// means by reading src/ops/conv.cpp: which opset versions it accepts, how its output
// shape follows from its inputs and attributes, and a plain reference kernel that is
// obviously correct. The reference kernels are the oracle every later transformation is
// checked against.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#pragma once

#include "minic/ir/graph/graph.h"

#include <fmt/ranges.h>

#include <array>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace minic {

// The newest default-domain opset minic accepts. Ops whose semantics changed after the
// version they were written for say so in their schema (OpSchema::max_opset).
inline constexpr int kMaxOpset = 27;
inline constexpr int kMaxIrVersion = 13;

// How an op combines with its neighbours in operator fusion (course module 2).
enum class FusionKind {
  elementwise,     // out[i] = f(in[i]): Relu, Add of equal shapes
  broadcast,       // elementwise after broadcasting inputs: Add with a bias
  injective,       // each output element reads one input element: Transpose, Slice
  reduction,       // output elements combine many inputs along axes: ReduceSum, Softmax
  out_fusable,     // heavy op whose output can absorb elementwise consumers: Conv, MatMul
  opaque,          // fuses with nothing: Resize, Gather with data-dependent indices
};

std::string_view fusion_kind_name(FusionKind kind);

// Attribute access for shape rules and kernels: typed getters with defaults and
// errors that name the node.
class NodeContext {
 public:
  NodeContext(const Node& node, int opset) : node_(node), opset_(opset) {}

  const Node& node() const { return node_; }
  int opset() const { return opset_; }
  size_t num_inputs() const { return node_.inputs().size(); }
  size_t num_outputs() const { return node_.outputs().size(); }
  bool has_input(size_t index) const { return node_.has_input(index); }

  bool has_attr(std::string_view name) const;
  int64_t get_int(std::string_view name, int64_t fallback) const;
  int64_t get_int(std::string_view name) const;  // required
  float get_float(std::string_view name, float fallback) const;
  std::string get_string(std::string_view name, std::string_view fallback) const;
  std::vector<int64_t> get_ints(std::string_view name, std::vector<int64_t> fallback) const;
  std::vector<int64_t> get_ints(std::string_view name) const;  // required
  std::vector<float> get_floats(std::string_view name, std::vector<float> fallback) const;
  const Tensor& get_tensor(std::string_view name) const;  // required
  const Graph& get_graph(std::string_view name) const;    // required: a control-flow body

  // Throws Error: "<Op> node '<name>': <message>".
  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) const {
    throw Error(fmt::format("{}: {}", node_.describe(),
                            fmt::format(format, std::forward<Args>(args)...)));
  }

  // An axis attribute or input normalised into [0, rank): negative axes count from the
  // end; out of range is an error naming the node.
  int64_t normalize_axis(int64_t axis, int64_t rank) const;

 private:
  const AttributeValue* find(std::string_view name, std::string_view kind) const;

  const Node& node_;
  int opset_;
};

// A string attribute that names one of a fixed set of choices, as its enum value:
// `fallback` where the attribute is absent; any other string is an error listing the
// choices (at the node's opset, since some ops renamed theirs).
template <typename Enum>
Enum read_choice(const NodeContext& ctx, std::string_view name, std::string_view fallback,
                 std::initializer_list<std::pair<std::string_view, Enum>> choices) {
  std::string value = ctx.get_string(name, fallback);
  std::vector<std::string_view> names;
  for (const auto& [text, choice] : choices) {
    if (text == value) return choice;
    names.push_back(text);
  }
  ctx.fail("attribute {} is '{}'; at opset {} it must be one of {}", name, value, ctx.opset(),
           fmt::join(names, ", "));
}

// What a shape rule sees: the input types, and the values of inputs that are known
// before running (constants, and small values computed from them).
class ShapeContext : public NodeContext {
 public:
  using ValueLookup = std::function<const Tensor*(const Value*)>;
  // `peek` finds values known without specialising the graph (see settled_value); unset,
  // `lookup` serves for both.
  ShapeContext(const Node& node, int opset, ValueLookup lookup, ValueLookup peek = {})
      : NodeContext(node, opset), lookup_(std::move(lookup)), peek_(std::move(peek)) {}

  const TensorType& input_type(size_t index) const;
  // The value of input `index`. Ops whose output shape depends on an input's value
  // (Reshape, Expand, Slice, ...) call this; if the value is not known before running, it
  // throws Error explaining that minic compiles for static shapes.
  const Tensor& input_value(size_t index) const;
  // The value if known, else null.
  const Tensor* known_value(size_t index) const;
  // The value if it is known without specialising the graph to a given input value (a
  // constant, or computed from constants), else null. Control-flow ops hand these to their
  // bodies, which need not freeze what they do not read for shapes.
  const Tensor* settled_value(size_t index) const;

  // For ops whose result is known from types alone (Shape, Size): record it, so that
  // shape arithmetic downstream becomes known too.
  void set_output_value(size_t index, Tensor value) const;
  std::vector<std::optional<Tensor>>& output_values() const { return output_values_; }

 private:
  ValueLookup lookup_;
  ValueLookup peek_;
  mutable std::vector<std::optional<Tensor>> output_values_;
};

// Runs the bodies of control-flow ops (If, Loop, Scan) as compiled code: a compiled
// model gives its reference steps one (src/driver/compiled_bodies.h). Without one, the
// kernels run their bodies through the reference kernels (src/ops/subgraph.h).
class BodyEvaluator {
 public:
  virtual ~BodyEvaluator() = default;
  // The outputs of `body` (a graph attribute) on `inputs`, one per body input; nullopt
  // when it cannot compile the body for these input types (a shape inside depends on a
  // value), and the caller runs the body itself.
  virtual std::optional<std::vector<Tensor>> run(const Graph& body, int opset,
                                                 std::span<const Tensor* const> inputs) = 0;
};

// What a reference kernel sees: the input tensors, the inferred output types, and what
// runs bodies (null: the reference kernels).
class KernelContext : public NodeContext {
 public:
  KernelContext(const Node& node, int opset, std::span<const Tensor* const> inputs,
                BodyEvaluator* bodies = nullptr)
      : NodeContext(node, opset), inputs_(inputs), bodies_(bodies) {}

  // Input `index`; an error if it is an omitted optional input.
  const Tensor& input(size_t index) const;
  const TensorType& output_type(size_t index) const { return node().outputs().at(index)->type; }
  // A zero-filled tensor of output `index`'s inferred type.
  Tensor make_output(size_t index) const { return Tensor(output_type(index)); }
  BodyEvaluator* bodies() const { return bodies_; }

 private:
  std::span<const Tensor* const> inputs_;
  BodyEvaluator* bodies_;
};

// The result of a kernel with one output. It moves the tensor; a braced list
// (`return {output};`) would copy it, which costs for large results.
inline std::vector<Tensor> single_output(Tensor output) {
  std::vector<Tensor> outputs;
  outputs.push_back(std::move(output));
  return outputs;
}

using ShapeRule = std::function<std::vector<TensorType>(const ShapeContext&)>;
using Kernel = std::function<std::vector<Tensor>(const KernelContext&)>;

// The compute rule of an op (course module 3): its outputs as loop IR stages. Declared in
// minic/ops/compute.h; an op without one runs on its reference kernel only.
class ComputeContext;
class ComputeTensor;
using ComputeRule = std::function<std::vector<ComputeTensor>(const ComputeContext&)>;

// A CUDA kernel written by hand for an op (custom ops: include/minic/ops/custom_op.h). On
// a CUDA target a node of the op runs it as given, alone, instead of a kernel minic
// generates from the compute rule. The launch of one node: which kernel of the source,
// its grid and thread block, and the integers passed after the node's buffers (its
// distinct inputs, then its outputs, as device pointers), each as an int64_t.
struct CudaKernelLaunch {
  std::string kernel;
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::array<int64_t, 3> block = {1, 1, 1};
  std::vector<int64_t> scalars;
};

struct CudaKernelSource {
  // CUDA C without #include (NVRTC compiles it beside minic's kernels): one or more
  // `extern "C" __global__` functions. The program's prelude gives int64_t and friends.
  std::string source;
  // The launch for a node, from its types and attributes (NodeContext).
  std::function<CudaKernelLaunch(const NodeContext&)> launch;
};

struct OpSchema {
  std::string name;
  int min_opset = 1;          // the oldest opset version whose form of the op is handled
  int max_opset = kMaxOpset;  // the newest
  int min_inputs = 1;
  int max_inputs = 1;
  int min_outputs = 1;
  int max_outputs = 1;
  FusionKind fusion = FusionKind::opaque;
  ShapeRule shape_rule;
  Kernel kernel;
  ComputeRule compute = {};  // may be empty
  // The attributes that hold graphs (If's then_branch and else_branch, Loop's body); the
  // importer refuses a graph in any other attribute.
  std::vector<std::string> graph_attributes = {};
  // A hand-written CUDA kernel, run as given on a CUDA target (custom ops only).
  std::optional<CudaKernelSource> cuda = {};
};

class OpRegistry {
 public:
  void add(OpSchema schema);
  // The schema of `op`, or null if minic does not support it.
  const OpSchema* find(std::string_view op) const;
  std::vector<std::string> names() const;  // sorted

 private:
  std::map<std::string, OpSchema, std::less<>> schemas_;
};

// The registry with every op of src/ops/ (see src/ops/registry.cpp).
const OpRegistry& op_registry();

}  // namespace minic
