// Models of old opsets brought up to one minic reads, with ONNX's own version converter.
// Course module 2.
//
// minic handles each op from some opset on (OpSchema::min_opset): Add, Mul, Gemm, PRelu
// and Pow of opset 6 and earlier broadcast only with their `broadcast` attribute, a form
// minic does not implement. Rather than a second form of each op, a model with such a
// node is converted, whole, by libonnx's version converter (onnx/version_converter), which
// rewrites every node from one opset to the next with ONNX's own adapters. The target is
// the lowest opset at which minic has every op of the model, so the graph changes as little
// as it can; what the converter cannot convert is an error naming the file and both opsets.
//
// Chapter: docs/module2-graph-ir.md#2-the-frontend-srcfrontend
#include "onnx_proto.h"

#include "minic/ops/op.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <unordered_set>

namespace minic {
namespace {

// The newest opset libonnx's converter has adapters up to (ONNX 1.12: opset 17).
constexpr int kConverterMaxOpset = 17;

// An op minic has, but not at `opset`: too old a form.
bool too_old(const onnx::NodeProto& node, int opset) {
  if (!is_default_domain(node.domain()) || node.op_type() == "Constant") return false;
  const OpSchema* schema = op_registry().find(node.op_type());
  return schema && opset < schema->min_opset;
}

// The lowest opset above `opset` at which minic has every default-domain op of the graph
// that it has at all; 0 if there is none the converter reaches.
int upgrade_target(const onnx::GraphProto& graph, int opset) {
  for (int target = opset + 1; target <= kConverterMaxOpset; ++target) {
    bool all = true;
    for (const onnx::NodeProto& node : graph.node()) {
      if (!is_default_domain(node.domain()) || !op_registry().find(node.op_type())) continue;
      all = all && is_supported(node, target);
    }
    if (all) return target;
  }
  return 0;
}

// ONNX's converter builds a graph of its own from the proto, and crashes (a null
// dereference, not an exception) on a node input or graph output that nothing defines:
// such a model is refused here, naming the value.
void require_defined_inputs(const onnx::GraphProto& graph, const std::string& path) {
  std::unordered_set<std::string> defined;
  for (const onnx::ValueInfoProto& input : graph.input()) defined.insert(input.name());
  for (const onnx::TensorProto& tensor : graph.initializer()) defined.insert(tensor.name());
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& input : node.input()) {
      if (!input.empty() && !defined.contains(input)) {
        fail("{}: {} reads '{}', which no graph input, initializer or earlier node defines",
             path, describe_node(node), input);
      }
    }
    for (const std::string& output : node.output()) defined.insert(output);
  }
  for (const onnx::ValueInfoProto& output : graph.output()) {
    if (!defined.contains(output.name())) {
      fail("{}: graph output '{}' is defined by no graph input, initializer or node", path,
           output.name());
    }
  }
}

// The converter's adapters take each node to be a valid one of its op and opset (libonnx
// 1.12's broadcasting adapter reads a Mul's second input without checking that there is
// one), so each node is checked first against ONNX's schema of its op at `opset`: the
// number of inputs and outputs, and the attributes' names and kinds.
void require_valid_nodes(const onnx::GraphProto& graph, int opset, const std::string& path) {
  for (const onnx::NodeProto& node : graph.node()) {
    if (!is_default_domain(node.domain())) continue;
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), opset, "");
    if (!schema) continue;  // an op newer than the model's opset: find_unsupported_ops says so
    try {
      schema->Verify(node);
    } catch (const std::exception& error) {
      fail("{}: {} is not a valid {} of opset {}: {}", path, describe_node(node), node.op_type(),
           opset, error.what());
    }
  }
}

// The value types the converter's broadcasting adapters read, from ONNX's shape inference.
// libonnx 1.12's inference of RNN, GRU and LSTM at their first opsets reads dimensions of
// X, W and R without checking their rank, and crashes on a model that gives them another
// one. So inference runs on a copy in which each such node is gone and its outputs are
// graph inputs of unknown type, and only the types it finds come back to the model: no
// broadcasting adapter needs a recurrent op's shapes, and minic's own shape rules check
// those ops once the model is converted.
void infer_value_types(onnx::ModelProto& model) {
  onnx::ModelProto copy = model;
  onnx::GraphProto& graph = *copy.mutable_graph();
  graph.clear_node();
  std::unordered_set<std::string> unknown;
  for (const onnx::NodeProto& node : model.graph().node()) {
    const bool recurrent = is_default_domain(node.domain()) &&
                           (node.op_type() == "RNN" || node.op_type() == "GRU" ||
                            node.op_type() == "LSTM");
    if (!recurrent) {
      *graph.add_node() = node;
      continue;
    }
    for (const std::string& output : node.output()) {
      if (output.empty() || !unknown.insert(output).second) continue;
      graph.add_input()->set_name(output);
    }
  }
  onnx::shape_inference::InferShapes(copy);
  model.mutable_graph()->clear_value_info();
  for (const onnx::ValueInfoProto& value : copy.graph().value_info()) {
    if (!unknown.contains(value.name())) *model.mutable_graph()->add_value_info() = value;
  }
}

}  // namespace

namespace {

// Converts `model` from `opset` to `target` with ONNX's converter, after the checks above;
// `asked` says the target is the caller's minimum rather than what minic's ops need.
void convert(onnx::ModelProto& model, int opset, int target, bool asked,
             const std::string& path) {
  require_defined_inputs(model.graph(), path);
  require_valid_nodes(model.graph(), opset, path);
  try {
    // The converter's broadcasting adapters read the shapes of the values they rewrite.
    infer_value_types(model);
    model = onnx::version_conversion::ConvertVersion(model, target);
  } catch (const std::exception& error) {
    if (asked) {
      fail("{}: ONNX's version converter cannot bring the model from opset {} to opset {}: {}",
           path, opset, target, error.what());
    }
    fail("{}: the model's opset {} is older than minic reads for some of its ops, and ONNX's "
         "version converter cannot bring it to opset {}: {}",
         path, opset, target, error.what());
  }
}

}  // namespace

int upgrade_old_opset(onnx::ModelProto& model, const std::string& path, int minimum) {
  const int opset = default_opset(model);
  bool needed = false;
  for (const onnx::NodeProto& node : model.graph().node()) needed = needed || too_old(node, opset);
  int target = needed ? upgrade_target(model.graph(), opset) : opset;
  if (target == 0) return opset;  // find_unsupported_ops then names the ops
  const bool asked = minimum > target;
  if (asked) {
    if (minimum > kConverterMaxOpset) {
      fail("{}: the model's opset {} cannot be converted to opset {}: ONNX's version "
           "converter here goes up to opset {}", path, opset, minimum, kConverterMaxOpset);
    }
    target = minimum;
  }
  if (target == opset) return opset;
  convert(model, opset, target, asked, path);
  return target;
}

}  // namespace minic
