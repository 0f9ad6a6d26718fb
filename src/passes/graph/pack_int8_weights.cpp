// The `pack-int8-weights` pass. Course module 7; see the header for what and why.
//
// Algorithm: for each MatMulInteger or ConvInteger the header's conditions admit, pack
// the weights' constant bytes into words along the reduction (k for B, the input channels
// for W: pack_words, include/minic/ops/int8_words.h) and sum them per output column or
// channel, add both as constants, and replace the node by minic.MatMulIntegerWords or
// minic.ConvIntegerWords on the activations, the two constants and the activations' zero
// point (a convolution keeps its attributes). The weights themselves are left for dce when
// nothing else reads them.
//
// Chapter: docs/module7-quantisation.md#3-int8-kernels-on-vnni
#include "minic/passes/graph/pack_int8_weights.h"
#include "minic/passes/pass_registry.h"

#include "minic/ops/int8_words.h"

#include "graph_edit.h"

namespace minic {
namespace {

// True if `node` is a MatMulInteger or ConvInteger the pass rewrites (the header's
// conditions).
bool packable(const Node& node) {
  const bool conv = node.op == "ConvInteger";
  if (node.op != "MatMulInteger" && !conv) return false;
  const Value* x = node.input(0);
  const Value* w = node.input(1);
  if (x->type.dtype != DType::i8 && x->type.dtype != DType::u8) return false;
  if (!w->is_constant() || w->type.dtype != DType::i8) return false;
  const bool shapes = conv ? x->type.rank() == 4 && w->type.rank() == 4 &&
                                 edit::int_attribute(node, "group", 1) == 1
                           : x->type.rank() >= 2 && w->type.rank() == 2;
  if (!shapes) return false;
  if (!node.has_input(3)) return true;
  std::optional<double> zero = edit::splat_value(node.input(3));
  return zero && *zero == 0.0;
}

}  // namespace

void pack_int8_weights(Graph& graph, const Target& target) {
  if (target.is_cuda()) return;
  bool changed = false;
  for (Node* node : graph.nodes()) {
    if (!packable(*node)) continue;
    const bool conv = node->op == "ConvInteger";
    const Tensor& w = *node->input(1)->constant;
    const std::string& name = node->input(1)->name();
    Value* words = graph.add_constant(graph.unique_name(name + "_words"),
                                      pack_words(w, conv ? 1 : 0));
    Value* sums = graph.add_constant(graph.unique_name(name + "_sums"),
                                     conv ? weight_sums(w) : column_sums(w));
    std::vector<Value*> inputs = {node->input(0), words, sums};
    if (node->has_input(2)) inputs.push_back(node->input(2));
    Value* result = node->output(0);
    Value* y = edit::add_node_of_type(graph, conv ? kConvIntegerWordsOp : kMatMulIntegerWordsOp,
                                      inputs, result->name() + "_words", result->type,
                                      conv ? node->attributes : Attributes{});
    edit::replace_node(graph, node, result, y, /*take_name=*/true);
    changed = true;
  }
  if (!changed) return;
  graph.sort_topologically();
  graph.remove_unused_values();
}

MINIC_REGISTER_GRAPH_PASS("pack-int8-weights", pack_int8_weights,
                          "CPU: the constant int8 weights of MatMulInteger and ConvInteger "
                          "packed into VNNI's words of four bytes, and their sums, at compile "
                          "time");

}  // namespace minic
