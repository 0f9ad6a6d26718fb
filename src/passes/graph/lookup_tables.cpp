// The `lookup-tables` pass: an elementwise chain from one 8-bit tensor to a QuantizeLinear
// becomes a table of its 256 results.
//
// Course module 7. A QDQ model as ONNX Runtime's quantiser writes it quantises the result
// of every op, elementwise ones included. A BERT encoder's GELU reads the 8-bit tensor %a
// and computes, element by element,
//
//   %x = DQ(%a)   %e = Q(Erf(%x / sqrt2))   %p = Q(DQ(%e) + 1)   %m = Q(%x * DQ(%p))
//   %g = Q(DQ(%m) * 0.5)
//
// eleven ops, four of them roundings, where every input but %a is a scalar constant. So
// each element of %g is a function of one element of %a, which takes 256 values: the pass
// computes that function once for each, with the ops' reference kernels, and writes
//
//   %g = minic.LookupTable(%a, %g_table)        %g_table: u8[256], a constant
//
// (src/ops/lookup_table.cpp). The result is the one the chain's reference kernels give, to
// the bit; operator fusion then puts the lookup into the kernel that makes %a.
//
// A chain: starting at a QuantizeLinear whose result is 8-bit, the values it reads back
// through ops that are elementwise (OpSchema::fusion elementwise or broadcast, one result,
// not a custom op), each of the chain's shape, until each value read is either
//   - a constant with one element (a scale, a zero point, sqrt 2), or
//   - the chain's root: one 8-bit tensor of the chain's shape, the same for every path.
// An 8-bit value whose own chain reaches a second root, or anything else, is a root itself.
// The pass rewrites a chain worth its table: one that computes a function other than
// arithmetic (Erf, Tanh, Sigmoid, ...) or rounds inside (two QuantizeLinear or more), on a
// tensor of more than 256 elements. A lookup costs a load per element (a vector gather of
// bytes is a load per lane on x86), which a few vector additions and multiplications, a
// division and one rounding cost less than: an attention's scaling by 1 / sqrt(d) stays
// as it is. Chains are taken from the last
// QuantizeLinear of the graph backwards, so that each is the longest there is; the values
// of a rewritten chain that other nodes read stay.
//
// Precondition: types are known, and constants folded (a DequantizeLinear of a constant
// scalar is a constant).
//
// Chapter: docs/module7-quantisation.md#lookup-tables-for-8-bit-functions
#include "minic/passes/graph/lookup_tables.h"
#include "minic/passes/pass_registry.h"

#include "minic/ops/custom_op.h"
#include "minic/ops/shape_inference.h"

#include "graph_edit.h"

#include <cstring>
#include <set>
#include <unordered_map>

namespace minic {

namespace {

bool is_8bit(const Value* value) {
  return value->type.dtype == DType::u8 || value->type.dtype == DType::i8;
}

// True for a node that may be in a chain: elementwise, one result.
bool chainable(const Node& node) {
  if (node.is_fused() || node.outputs().size() != 1 || is_custom_op(node.op)) return false;
  const OpSchema* schema = op_registry().find(node.op);
  return schema && (schema->fusion == FusionKind::elementwise ||
                    schema->fusion == FusionKind::broadcast);
}

// The chain that ends in one QuantizeLinear: its root and its nodes.
struct Chain {
  Value* root = nullptr;
  std::set<const Node*> nodes;
};

// Extends `chain` by what `value` is computed from; false if it is no function of the
// chain's root alone (see the top of this file).
bool trace(Value* value, const Shape& shape, Chain& chain) {
  if (edit::is_scalar_constant(value) || value == chain.root) return true;
  if (value->type.shape != shape) return false;
  const Node* node = value->producer();
  if (node && chain.nodes.count(node)) return true;
  if (node && chainable(*node)) {
    Chain extended = chain;
    extended.nodes.insert(node);
    bool ok = true;
    for (Value* input : node->inputs()) ok = ok && input && trace(input, shape, extended);
    if (ok) {
      chain = std::move(extended);
      return true;
    }
  }
  if (!is_8bit(value) || (chain.root && chain.root != value)) return false;
  chain.root = value;
  return true;
}

// The chain that ends in `quantize`, if it is one the pass rewrites.
std::optional<Chain> find_chain(const Node& quantize) {
  const Value* result = quantize.output(0);
  if (quantize.op != "QuantizeLinear" || !is_8bit(result) || !chainable(quantize) ||
      result->type.num_elements() <= 256) {
    return std::nullopt;
  }
  Chain chain;
  chain.nodes.insert(&quantize);
  for (Value* input : quantize.inputs()) {
    if (input && !trace(input, result->type.shape, chain)) return std::nullopt;
  }
  if (!chain.root) return std::nullopt;
  // Worth a table: a function other than arithmetic, or a rounding inside the chain.
  static const std::set<std::string_view> arithmetic = {
      "QuantizeLinear", "DequantizeLinear", "Cast", "Add", "Sub", "Mul", "Div", "Neg",
      "Abs", "Relu", "Max", "Min", "Clip"};
  int roundings = 0;
  bool function = false;
  for (const Node* node : chain.nodes) {
    roundings += node->op == "QuantizeLinear";
    function = function || !arithmetic.count(node->op);
  }
  if (function || roundings > 1) return chain;
  return std::nullopt;
}

// The 256 results of the chain ending in `quantize`: its nodes, copied into a graph whose
// input is every value of the root's type in order (of the root's rank, so that an axis
// attribute stays in range), run by their reference kernels.
Tensor chain_table(const Graph& graph, const Node& quantize, const Chain& chain) {
  Graph table_graph;
  table_graph.opset = graph.opset;
  const DType root_type = chain.root->type.dtype;
  Shape row(chain.root->type.shape.size(), 1);
  row.back() = 256;
  Value* input = table_graph.add_input(chain.root->name(), {root_type, row});
  std::unordered_map<const Value*, Value*> inner = {{chain.root, input}};
  for (const Node* node : graph.nodes()) {
    if (!chain.nodes.count(node)) continue;
    std::vector<Value*> inputs;
    for (const Value* value : node->inputs()) {
      if (value && !inner.count(value)) {
        inner[value] = table_graph.add_constant(value->name(), *value->constant);
      }
      inputs.push_back(value ? inner.at(value) : nullptr);
    }
    Node* copy = table_graph.add_node(node->op, std::move(inputs), {node->output(0)->name()},
                                      node->attributes, node->name);
    inner[node->output(0)] = copy->output(0);
  }
  table_graph.add_output(inner.at(quantize.output(0)));
  infer_shapes(table_graph);
  Tensor values(root_type, row);
  const int64_t lowest = root_type == DType::i8 ? -128 : 0;
  for (int64_t k = 0; k < 256; ++k) {
    if (root_type == DType::i8) values.values<int8_t>()[k] = static_cast<int8_t>(k + lowest);
    else values.values<uint8_t>()[k] = static_cast<uint8_t>(k);
  }
  const Tensor* feed = &values;
  Tensor results = std::move(evaluate_graph(table_graph, {&feed, 1})[0]);
  Tensor table(results.dtype(), {256});
  std::memcpy(table.bytes().data(), results.bytes().data(), results.bytes().size());
  return table;
}

// Rewrites the last chain of the graph; false if there is none.
bool rewrite_last_chain(Graph& graph) {
  std::vector<Node*> nodes = graph.nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    Node* quantize = *it;
    std::optional<Chain> chain = find_chain(*quantize);
    if (!chain) continue;
    Value* result = quantize->output(0);
    Value* table = graph.add_constant(graph.unique_name(result->name() + "_table"),
                                      chain_table(graph, *quantize, *chain));
    Value* lookup = edit::add_node_of_type(
        graph, "minic.LookupTable", {chain->root, table},
        result->name() + "_lookup", result->type, {});
    edit::replace_node(graph, quantize, result, lookup, /*take_name=*/true);
    graph.sort_topologically();
    return true;
  }
  return false;
}

}  // namespace

void lookup_tables(Graph& graph) {
  while (rewrite_last_chain(graph)) {
  }
  graph.remove_unused_values();
}

MINIC_REGISTER_GRAPH_PASS("lookup-tables", lookup_tables,
                          "elementwise chains from one 8-bit tensor to a QuantizeLinear → "
                          "a 256-entry table");

}  // namespace minic
