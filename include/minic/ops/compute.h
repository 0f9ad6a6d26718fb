// Compute rules: what an op computes, element by element, as loop IR stages.
//
// Course module 3. Every op that minic can compile has a compute rule in its file of
// src/ops/ (OpSchema::compute), next to its shape rule and reference kernel. A rule says
// how ONE element of each output is computed from elements of the inputs -- the idea of
// TVM's te.compute -- and the lowering driver (include/minic/lower/lower.h) turns the
// rules of a fusion group into one loop IR function. A rule reads like the formula of the op:
//
//   // Relu: out[i] = max(x[i], 0)
//   ComputeTensor x = ctx.input(0);
//   return {ctx.compute("relu", ctx.output_type(0), [&](const Indices& i) {
//     return loop::max(x(i), constant(x.dtype(), 0));
//   })};
//
//   // MatMul of 2-d A and B: out[i, j] = sum over k of A[i, k] * B[k, j]
//   return {ctx.reduce("matmul", ctx.output_type(0), {K}, Reducer::sum,
//                      [&](const Indices& i, const Indices& k) {
//                        return a({i[0], k[0]}) * b({k[0], i[1]});
//                      })};
//
// The two builders give the two kinds of stage:
//   - `compute` describes an element as an expression of other elements. It is not a loop
//     nest yet: a consumer that reads it gets the expression itself, with the consumer's
//     indices substituted (the producer is INLINED: an elementwise chain becomes one
//     loop nest, and no intermediate buffer). Only a fusion group's output, a tensor
//     that a rule asks to keep, or one whose expression grew large (more than 64 nodes),
//     becomes a stage of its own.
//   - `reduce` combines many elements (sum, product, max, min over reduction axes). It is
//     always a stage of its own, writing a buffer: one `for` per output axis and one per
//     reduction axis around one block with spatial and reduce iteration variables, an
//     `init` storing the reducer's identity, and `out = combine(out, value)`:
//
//       for i0 in 0..4 {
//         for i1 in 0..8 {
//           for k0 in 0..16 {
//             block matmul(v0 = spatial(4) i0, v1 = spatial(8) i1, r0 = reduce(16) k0) {
//               reads(A[v0, r0], B[r0, v1], Y[v0, v1]) writes(Y[v0, v1])
//               init { Y[v0, v1] = 0.0 }
//               Y[v0, v1] = Y[v0, v1] + A[v0, r0] * B[r0, v1]
//             }
//   ...
// A multi-stage op (Softmax: max, sum of exponentials, divide) is a rule that chains
// builders; the reduce stages keep intermediate buffers, which the function allocates.
//
// Every block's reads and writes regions cover each access it makes, in its own
// iteration variables: a dimension indexed the same way everywhere and provably in bounds
// is one element (`A[v0, r0]`), any other dimension is the whole extent (`A[0:64, r0]`).
//
// Chapter: docs/module3-loop-ir.md#5-lowering-compute-rules
#pragma once

#include "minic/ir/loop/stmt.h"
#include "minic/ops/op.h"
#include "minic/target/target.h"

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace minic {

// The indices of one element: one i64 expression per dimension.
using Indices = std::vector<loop::Expr>;

// How a reduction combines values: its identity (the `init`) and its step.
enum class Reducer { sum, product, max, min };

class ComputeTensor;

// The error of lowering an op, or the form of it a node has (a Cast to float8, MaxPool's
// Indices output), that has no compute rule: "no compute rule for op X (node N)...".
// lower_graph can skip such nodes; a backend runs them with the reference kernel.
class NoComputeRule : public Error {
 public:
  using Error::Error;
};

// What a ComputeTensor stands for: a parameter of the kernel, or a stage. The lowering
// driver makes them (src/lower/kernel_builder.h): rules only read elements.
struct TensorNode {
  virtual ~TensorNode() = default;
  std::string name;
  TensorType type;
  // The element at `indices` (one i64 expression per dimension): a load from the tensor's
  // buffer, or, for a `compute` stage that is inlined, its value at those indices.
  virtual loop::Expr element(const Indices& indices) = 0;
};

// The two builders and `keep`, as the lowering driver provides them: ComputeContext's
// methods of the same names forward here. The interface lets rules (src/ops) be written
// without depending on the code that turns them into loop nests (src/lower), which
// depends on the rules.
class StageBuilder {
 public:
  virtual ~StageBuilder() = default;
  virtual ComputeTensor compute(const std::string& name, const TensorType& type,
                                const std::function<loop::Expr(const Indices&)>& body) = 0;
  virtual ComputeTensor reduce(
      const std::string& name, const TensorType& type, const Shape& reduce_extents,
      Reducer reducer,
      const std::function<loop::Expr(const Indices&, const Indices&)>& body) = 0;
  virtual void keep(const ComputeTensor& tensor) = 0;
};

// A tensor as a compute rule sees it (te.Tensor): its type, and the element at given
// indices as a loop IR expression -- a load from a buffer, or the inlined expression of a
// `compute` stage.
class ComputeTensor {
 public:
  explicit ComputeTensor(std::shared_ptr<TensorNode> node) : node_(std::move(node)) {}

  const TensorType& type() const { return node_->type; }
  const Shape& shape() const { return type().shape; }
  DType dtype() const { return type().dtype; }
  int64_t rank() const { return type().rank(); }
  int64_t dim(int64_t axis) const { return shape().at(static_cast<size_t>(axis)); }

  // The element at `indices` (one per dimension, each of type i64).
  loop::Expr operator()(const Indices& indices) const;

  const std::shared_ptr<TensorNode>& node() const { return node_; }

 private:
  std::shared_ptr<TensorNode> node_;
};

// What a compute rule sees: the node's attributes (NodeContext), its inputs as tensors,
// the values of constant inputs, its output types, the target, and the two builders.
class ComputeContext : public NodeContext {
 public:
  using ConstantLookup = std::function<const Tensor*(size_t input_index)>;
  ComputeContext(const Node& node, int opset, const Target& target, StageBuilder& builder,
                 std::vector<std::optional<ComputeTensor>> inputs, ConstantLookup constants)
      : NodeContext(node, opset), target_(target), builder_(builder), inputs_(std::move(inputs)),
        constants_(std::move(constants)) {}

  // The machine the kernel is lowered for (lower_node's target): a rule may shape its
  // stages for it, as Conv's pads rows to whole vectors. What the kernel computes never
  // depends on it.
  const Target& target() const { return target_; }

  // Input `index`; an error if it is an omitted optional input.
  const ComputeTensor& input(size_t index) const;
  const TensorType& output_type(size_t index) const { return node().outputs().at(index)->type; }
  // The value of input `index` where it is a constant (Reshape's shape, Slice's starts,
  // Clip's bounds); NoComputeRule naming the node if it is only known at run time.
  const Tensor& constant_input(size_t index) const;
  // The same, or null where the input is omitted or not a constant.
  const Tensor* known_input(size_t index) const;

  // A stage whose element at indices `i` is `body(i)` (see the top of this file).
  ComputeTensor compute(const std::string& name, const TensorType& type,
                        const std::function<loop::Expr(const Indices&)>& body) const;
  // A reduction stage: element `i` combines body(i, k) with `reducer` over every k in
  // the box [0, reduce_extents). An empty box gives the reducer's identity.
  ComputeTensor reduce(const std::string& name, const TensorType& type,
                       const Shape& reduce_extents, Reducer reducer,
                       const std::function<loop::Expr(const Indices&, const Indices&)>& body)
      const;
  // Throws NoComputeRule for this node, saying why its form of the op has none.
  [[noreturn]] void no_rule(const std::string& reason) const;
  // `tensor` kept in a buffer of its own: consumers load it instead of recomputing it
  // (for a value read many times at a high cost).
  ComputeTensor keep(const ComputeTensor& tensor) const;

 private:
  const Target& target_;
  StageBuilder& builder_;
  std::vector<std::optional<ComputeTensor>> inputs_;
  ConstantLookup constants_;
};

// --- rules registered from outside src/ops ---------------------------------------------------

// The compute rule of `op`: the one its schema holds (OpSchema::compute), else one
// registered with MINIC_REGISTER_COMPUTE_RULE; null if it has neither. Lowering
// (lower.h) and has_compute_rule ask here.
const ComputeRule* find_compute_rule(std::string_view op);

// What MINIC_REGISTER_COMPUTE_RULE makes: an object that, when built, gives `op` the rule
// `rule`. An op minic does not know, or one whose schema has a rule already, is an
// internal error when the rule is first looked up.
struct RegisterComputeRule {
  RegisterComputeRule(const char* op, ComputeRule rule);
};

// --- helpers for writing rules ----------------------------------------------------------------

// An immediate of element type `dtype` holding `value`.
loop::Expr constant(DType dtype, double value);
// Element `position` of `tensor` as an immediate of the tensor's element type.
loop::Expr element_constant(const Tensor& tensor, int64_t position);
// The i64 immediate `value` (an index).
loop::Expr index(int64_t value);
// The intrinsic `name` (see loop::Call: exp, log, sin, pow, ... on floats, shift_left and
// shift_right on unsigned integers) applied to arguments of one type.
loop::Expr call(const std::string& name, std::vector<loop::Expr> args);
loop::Expr select(loop::Expr condition, loop::Expr if_true, loop::Expr if_false);
// `value` converted to `dtype` as Tensor::cast converts (no node when already of it).
loop::Expr cast(DType dtype, loop::Expr value);
// x * scale + offset for an i64 x, written without multiplying by 1 or adding 0, and
// with a negative offset as a subtraction: affine(v0, 2, -1) is `v0 * 2 - 1`.
loop::Expr affine(const loop::Expr& x, int64_t scale, int64_t offset);
// 0 <= value < extent, for an i64 value: the test of padded reads.
loop::Expr in_range(const loop::Expr& value, int64_t extent);
// The indices into a tensor of `shape` that numpy broadcasting reads for output element
// `indices`: aligned at the last axis, index 0 along axes of extent 1 -- unless the output
// shape, when given, has extent 1 there too (then the output's own index, which reads
// better in the text).
Indices broadcast_indices(const Indices& indices, const Shape& shape,
                          const Shape& output_shape = {});
// The row-major flat offset of `indices` in `shape`, and back: the indices in `shape` of a
// flat offset (for Reshape and Flatten).
loop::Expr flat_offset(const Indices& indices, const Shape& shape);
Indices unflatten(const loop::Expr& offset, const Shape& shape);
// The indices into a tensor of `from` (same element count as `to`) holding the element
// at `indices` of its reshape to `to`: one index for one index where the two shapes differ
// only by axes of extent 1 (Squeeze, Unsqueeze, most Flattens), else through the flat
// offset.
Indices reshape_indices(const Indices& indices, const Shape& to, const Shape& from);
// The identity of `reducer` for element type `dtype`: 0, 1, -inf or +inf (the integer
// limits for integers).
loop::Expr reducer_identity(Reducer reducer, DType dtype);
// The stage name of a node's op: its op in lower case, without a domain ("relu", "conv").
std::string stage_name(const NodeContext& ctx);
// The elementwise stage most elementwise and broadcast ops are: output 0's element at `i`
// is formula(values), where values holds each present input read at its broadcast
// indices and converted to `compute_dtype`; the result is converted to output 0's type.
ComputeTensor elementwise(const ComputeContext& ctx, DType compute_dtype,
                          const std::function<loop::Expr(const std::vector<loop::Expr>&)>& formula);
// The type computations in `dtype` are done in by rules that compute in floating point:
// f32 for f16 and bf16 (as the reference kernels do), the type itself otherwise.
DType accumulation_dtype(DType dtype);

}  // namespace minic

#define MINIC_COMPUTE_RULE_CONCAT_INNER(a, b) a##b
#define MINIC_COMPUTE_RULE_CONCAT(a, b) MINIC_COMPUTE_RULE_CONCAT_INNER(a, b)

// Gives the op named `op` (a string) the compute rule `rule` from any source file linked
// into minic, as an exercise's file does (exercises/m3-rms-norm): the op keeps its schema,
// shape rule and reference kernel from src/ops and is now lowered to loop IR.
#define MINIC_REGISTER_COMPUTE_RULE(op, rule)                                        \
  static const ::minic::RegisterComputeRule MINIC_COMPUTE_RULE_CONCAT(minic_compute_rule_, \
                                                                      __LINE__)(op, rule)
