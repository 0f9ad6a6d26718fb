// Small graph edits shared by the rewrite passes (simplify, fold-batchnorm,
// fold-conv-affine, pretranspose-weights, blocked-layout, winograd, qdq-to-integer):
// forward a node's result to another value, drop what a rewrite left unused, read a node's
// attributes, add a node whose result type the rewrite knows, and read or build the
// constants the folds compute with. (One input is rewired with
// Graph::set_input.)
//
// Course module 2. Every edit keeps the Graph invariants (users lists, producers, names),
// so a pass built from them stays readable: it says what replaces what, not how the
// pointers move.
//
// Chapter: docs/module2-graph-passes.md#2-cleaning-up-simplify-fold-constants-dce-cse
#pragma once

#include "minic/ir/graph/graph.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace minic::edit {

// True if `value` is read only by `user` (once or more) and is not a graph output: a
// rewrite of `user` may then change or remove it.
bool used_only_by(const Graph& graph, const Value* value, const Node* user);

// True if no node reads `value` and it is not a graph output.
bool is_unused(const Graph& graph, const Value* value);

// Replaces `node` by `replacement`: every use of `output` (one of the node's outputs, the
// only one in use) then reads `replacement`, and the node is erased. Both values must
// have the same type. When `output` is a graph output and `replacement` is the result of
// another node, the output value takes the replacement's place as that node's result, so
// the graph output keeps its name (`%logits` stays `%logits`); the replacement's own value
// is left unused. `take_name` asks for that exchange for any `output`: for a replacement
// the pass has just created, whose name says nothing. Producers that lose their last use
// are erased too (see erase_if_dead).
void replace_node(Graph& graph, Node* node, Value* output, Value* replacement,
                  bool take_name = false);

// Erases `node` if none of its results is used, then, in turn, the producers of its inputs
// that this leaves unused. Constants left unused stay until remove_unused_values.
void erase_if_dead(Graph& graph, Node* node);

// True for a constant of one element (a scale, a zero point, a scalar operand).
bool is_scalar_constant(const Value* value);

// The one number every element of a constant equals (a scalar, a one-element tensor or a
// splat), as a double; nullopt for a non-constant, an empty constant, or differing elements.
std::optional<double> splat_value(const Value* value);

// The elements of a constant as int64 (axes, pads, shapes); nullopt if it is not a constant
// of an integer type of rank 0 or 1.
std::optional<std::vector<int64_t>> constant_ints(const Value* value);

// The int attribute `name` of `node`; `fallback` where it is absent or not an int.
int64_t int_attribute(const Node& node, std::string_view name, int64_t fallback);

// The float attribute `name` of `node` (Gemm's alpha and beta); `fallback` where it is
// absent or not a float.
double float_attribute(const Node& node, std::string_view name, double fallback);

// The ints attribute `name` of `node`; `fallback` where it is absent, and empty where it is
// not a list of ints (so that a check against the expected list fails).
std::vector<int64_t> ints_attribute(const Node& node, std::string_view name,
                                    std::vector<int64_t> fallback);

// A 2-d constant's data transposed: [rows, columns] -> [columns, rows], any element type
// (the bytes of each element are moved, not converted).
Tensor transposed(const Tensor& matrix);

// A new node `op` reading `inputs`, with one result named from `name` whose type is
// `type` (a rewrite knows it, so no shape rule runs), and `attributes`; returns the result.
Value* add_node_of_type(Graph& graph, const std::string& op, std::vector<Value*> inputs,
                        const std::string& name, const TensorType& type, Attributes attributes);

// A new constant of element type `dtype` and shape `shape` holding `values` (computed in
// double, rounded once to `dtype`), named from `hint`.
Value* add_constant_from_doubles(Graph& graph, const std::string& hint, DType dtype,
                                 Shape shape, const std::vector<double>& values);

// The elements of `data` as doubles, each multiplied by factors[i] where i is its index
// along `axis` (factors has data.shape()[axis] entries): a Conv weight scaled per output
// channel (axis 0), a [K, N] matrix scaled per column (axis 1).
std::vector<double> scale_along_axis(const Tensor& data, int64_t axis,
                                     const std::vector<double>& factors);

}  // namespace minic::edit
