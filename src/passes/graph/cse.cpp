// The `cse` pass: common-subexpression elimination.
//
// Course module 2. Two nodes with the same op, the same inputs (the same values, in the
// same order), equal attributes and the same number of outputs compute the same tensors,
// because every op minic supports is a pure function of its inputs and attributes. (No
// supported op draws random numbers: training-mode Dropout is rejected when a graph is
// built, and ONNX's Random* ops are not supported. Such an op would have to be left out.)
// The later node can use the earlier node's results instead. Exporters repeat work this
// way -- one Shape of the same tensor per Reshape, the same weight stored twice -- and so
// do other passes. Equal constants are merged too: two constants with the same type and
// the same bytes are one constant.
//
// Precondition: none beyond a valid graph.
// Invariant kept: the graph computes the same outputs, bit for bit. A value keeps its
// uses when renaming them would show: a node or constant that defines a graph output (whose
// name the caller sees), or a value read by a fused node (whose body's inputs are named
// like the node's, and distinct), is never merged away; `minic explain` says so.
//
// Algorithm:
//   1. constants, in creation order: look the constant up among the earlier ones by a
//      hash of its type and bytes; if an earlier one is identical, send every use to it;
//   2. nodes, in order: look the node up among the earlier nodes by a hash of its op and
//      input values; if an earlier node is equivalent (same op, inputs, attributes and
//      output count), send every use of each output to the earlier node's output and
//      erase the node. Its users come later in the walk, and by then their inputs are the
//      earlier node's outputs, so whole duplicated chains merge in one walk;
//   3. drop the constants nothing uses any more.
// Fused nodes are left as they are.
//
// Before:
//   %a = Relu(%x) : f32[4]
//   %b = Relu(%x) : f32[4]
//   %y = Add(%a, %b) : f32[4]
// After:
//   %a = Relu(%x) : f32[4]
//   %y = Add(%a, %a) : f32[4]
//
// Chapter: docs/module2-graph-passes.md#2-cleaning-up-simplify-fold-constants-dce-cse
#include "minic/passes/graph/cse.h"
#include "minic/passes/pass_registry.h"

#include "minic/support/explain.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <variant>

namespace minic {

namespace {

// Mixes `value` into the running hash `seed` (the boost::hash_combine recipe).
void hash_combine(size_t& seed, size_t value) {
  seed ^= value + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2);
}

size_t hash_tensor(const Tensor& tensor) {
  size_t seed = std::hash<int>()(static_cast<int>(tensor.dtype()));
  for (int64_t dim : tensor.shape()) hash_combine(seed, std::hash<int64_t>()(dim));
  std::span<const std::byte> bytes = tensor.bytes();
  std::string_view data(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  hash_combine(seed, std::hash<std::string_view>()(data));
  return seed;
}

// The op and the input values: what equivalent nodes must share (attributes are compared
// only within a bucket).
size_t hash_node(const Node& node) {
  size_t seed = std::hash<std::string>()(node.op);
  for (const Value* input : node.inputs()) hash_combine(seed, std::hash<const Value*>()(input));
  hash_combine(seed, node.outputs().size());
  return seed;
}

// Floats compare by their bits: 0.0 and -0.0 differ, a NaN equals the same NaN.
bool same_float(float a, float b) {
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

bool same_attribute(const AttributeValue& a, const AttributeValue& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&]<typename T>(const T& x) {
        const T& y = std::get<T>(b);
        if constexpr (std::is_same_v<T, Tensor>) {
          return x.identical(y);
        } else if constexpr (std::is_same_v<T, float>) {
          return same_float(x, y);
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          return std::ranges::equal(x, y, same_float);
        } else {
          return x == y;
        }
      },
      a);
}

bool same_attributes(const Attributes& a, const Attributes& b) {
  // Both maps are sorted by name, so equal maps pair up entry by entry.
  return std::ranges::equal(a, b, [](const auto& x, const auto& y) {
    return x.first == y.first && same_attribute(x.second, y.second);
  });
}

bool equivalent(const Node& a, const Node& b) {
  return a.op == b.op && a.inputs() == b.inputs() && a.outputs().size() == b.outputs().size() &&
         same_attributes(a.attributes, b.attributes);
}

// True if the uses of `value` must stay as they are (see the invariant above).
bool must_keep_uses(const Graph& graph, const Value* value) {
  return graph.is_graph_output(value) ||
         std::ranges::any_of(value->users(), [](const Node* user) { return user->is_fused(); });
}

// Step 1: every use of a constant goes to the first constant identical to it.
void merge_constants(Graph& graph) {
  // Buckets by hash; the lookups never show their order, only the values' order does.
  std::unordered_map<size_t, std::vector<Value*>> seen;
  for (Value* value : graph.values()) {
    if (!value->is_constant() || graph.is_graph_input(value)) continue;
    std::vector<Value*>& bucket = seen[hash_tensor(*value->constant)];
    auto same = std::ranges::find_if(bucket, [&](const Value* earlier) {
      return earlier->constant == value->constant ||
             earlier->constant->identical(*value->constant);
    });
    if (same == bucket.end()) {
      bucket.push_back(value);
    } else if (!must_keep_uses(graph, value)) {
      graph.replace_all_uses_with(value, *same);
    }
  }
}

// Step 2: every node equivalent to an earlier one is replaced by it.
void merge_nodes(Graph& graph) {
  std::unordered_map<size_t, std::vector<Node*>> seen;
  for (Node* node : graph.nodes()) {
    if (node->is_fused() || node->outputs().empty()) continue;
    std::vector<Node*>& bucket = seen[hash_node(*node)];
    auto same = std::ranges::find_if(bucket, [&](const Node* earlier) {
      return equivalent(*earlier, *node);
    });
    if (same == bucket.end()) {
      bucket.push_back(node);
      continue;
    }
    auto kept = std::ranges::find_if(node->outputs(), [&](const Value* output) {
      return must_keep_uses(graph, output);
    });
    if (kept != node->outputs().end()) {
      explain::note("{} %{} stays: it computes what %{} computes, but %{} {}", node->op,
                    node->output(0)->name(), (*same)->output(0)->name(), (*kept)->name(),
                    graph.is_graph_output(*kept) ? "is a graph output"
                                                 : "is read by a fused node");
      continue;
    }
    for (size_t i = 0; i < node->outputs().size(); ++i) {
      graph.replace_all_uses_with(node->output(i), (*same)->output(i));
    }
    graph.erase_node(node);
  }
}

}  // namespace

void eliminate_common_subexpressions(Graph& graph) {
  merge_constants(graph);
  merge_nodes(graph);
  graph.remove_unused_values();
}

MINIC_REGISTER_GRAPH_PASS("cse", eliminate_common_subexpressions,
                          "merge nodes that compute the same op on the same inputs");

}  // namespace minic
