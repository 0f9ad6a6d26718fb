// The `blocked-layout` pass. Course module 4; see the header for what and why.
//
// Precondition: types are known, and the folds have run, so that a Conv's weights and
// bias are constants.
// Invariant: the graph computes the same function. Elements are moved, not recomputed,
// and the channels that pad a last block (when b does not divide C) are read only by
// zero weights, by pools that keep them within their block, and by FromNchwc, which
// drops them; the ops that carry them keep them finite (the padding starts as zeros, and
// no op of the chain divides or takes a logarithm).
//
// Algorithm: b is the target's f32 lanes (a GPU target: nothing changes).
//   1. walk the nodes in order and give each that can compute in blocks a blocked twin,
//      a new node reading the blocked twins of its inputs:
//        - Conv (2-D, f32, constant weights): a minic.NchwcConv with its weights and bias
//          in blocks, for one group, a depthwise convolution, or groups of whole blocks,
//          unless its output channels would fill their blocks less than two thirds (the
//          padding would cost more than blocks gain); a one-group convolution with fewer
//          than b input channels (the image) reads its input plain;
//        - an elementwise op of the list below: the same op on the blocked operands,
//          a per-channel constant operand laid out in blocks too;
//        - MaxPool, AveragePool and their Global forms: the same pool over the
//          blocked tensor's rows, columns and lanes, with a window of 1 along the lanes;
//        - Concat along the channels, when b divides every input's channels;
//      a convolution starts a chain (an input without a twin gets one from a ToNchwc); the
//      other ops only continue one (one of their inputs has a twin already);
//   2. walk the converted nodes backwards: where a plain op (or the graph's output) still
//      reads a converted node's result, it reads a minic.FromNchwc of the twin instead;
//      the original node goes;
//   3. sort the graph, and drop the constants nothing reads any more.
//
// Chapter: docs/module4-schedules.md#7-blocked-layouts-nchwc
#include "minic/passes/graph/blocked_layout.h"
#include "minic/passes/pass_registry.h"

#include "minic/ops/nchwc.h"
#include "minic/support/explain.h"

#include "graph_edit.h"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace minic {
namespace {

// Elementwise ops that compute in blocks as they are: they read each element once at its
// own position, and keep finite values finite.
const std::set<std::string, std::less<>>& elementwise_ops() {
  static const std::set<std::string, std::less<>> ops = {
      "Abs",     "Add",     "Clip",        "Elu",      "Gelu",  "HardSigmoid", "HardSwish",
      "Identity", "LeakyRelu", "Max",      "Mean",     "Min",   "Mul",         "Neg",
      "PRelu",   "Relu",    "Selu",        "Sigmoid",  "Softplus", "Sub",      "Sum",
      "Tanh"};
  return ops;
}

bool is_image(const Value* value) {
  return value->type.rank() == 4 && value->type.dtype == DType::f32;
}

// The type of `plain` ([N, C, H, W]) in blocks of `block`.
TensorType blocked_type(const TensorType& plain, int64_t block) {
  return {plain.dtype,
          {plain.shape[0], channel_blocks(plain.shape[1], block), plain.shape[2], plain.shape[3],
           block}};
}

class BlockedLayout {
 public:
  BlockedLayout(Graph& graph, int64_t block) : graph_(graph), block_(block) {}

  void run() {
    for (Node* node : graph_.nodes()) {                                       // 1.
      if (node->outputs().size() == 1 && is_image(node->output(0)) && add_twin(*node)) {
        converted_.push_back(node);
      }
    }
    std::vector<std::pair<Value*, std::string>> renames;
    for (auto it = converted_.rbegin(); it != converted_.rend(); ++it) {      // 2.
      Node* node = *it;
      Value* result = node->output(0);
      if (!result->users().empty() || graph_.is_graph_output(result)) {
        Value* plain = add(kFromNchwcOp, {twin_.at(result)}, result->name() + "_plain",
                           result->type, {{"channels", result->type.shape[1]}});
        if (graph_.is_graph_output(result)) renames.emplace_back(plain, result->name());
        graph_.replace_all_uses_with(result, plain);
      }
      graph_.erase_node(node);
    }
    graph_.sort_topologically();                                              // 3.
    graph_.remove_unused_values();
    for (auto& [value, name] : renames) graph_.rename_value(value, name);
  }

 private:
  // Adds the blocked twin of `node`'s result; false if the node stays plain.
  bool add_twin(const Node& node) {
    if (node.op == "Conv") return add_conv(node);
    if (node.op == "MaxPool" || node.op == "AveragePool") return add_pool(node, false);
    if (node.op == "GlobalMaxPool" || node.op == "GlobalAveragePool") return add_pool(node, true);
    if (node.op == "Concat") return add_concat(node);
    if (elementwise_ops().count(node.op)) return add_elementwise(node);
    return false;
  }

  // Conv → minic.NchwcConv.
  bool add_conv(const Node& node) {
    Value* x = node.input(0);
    const Value* w = node.input(1);
    const Value* bias = node.input(2);
    if (!is_image(x) || !w->is_constant() || (bias && !bias->is_constant())) {
      explain::note("{} stays plain: a 2-d f32 convolution with constant weights computes "
                    "in blocks", node.describe());
      return false;
    }
    const int64_t channels = x->type.shape[1];
    const int64_t outputs = w->type.shape[0];
    const int64_t padding = channel_blocks(outputs, block_) * block_ - outputs;
    if (2 * padding > outputs) {
      explain::note("{} stays plain: its {} output channels would fill blocks of {} less "
                    "than two thirds", node.describe(), outputs, block_);
      return false;
    }
    const int64_t group = edit::int_attribute(node, "group", 1);
    const int64_t group_out = outputs / group;
    const int64_t group_in = w->type.shape[1];
    bool plain_input = false;
    int64_t input_block = block_;
    int64_t blocked_group = group;
    if (group == 1) {
      plain_input = channels < block_ && !twin_.count(x);
    } else if (group_in == 1 && group_out == 1) {  // depthwise: lane j reads lane j
      input_block = 1;
      blocked_group = channel_blocks(channels, block_) * block_;
    } else if (group_in % block_ != 0 || group_out % block_ != 0) {
      explain::note("{} stays plain: its {} groups of {} input and {} output channels are "
                    "not whole blocks of {}", node.describe(), group, group_in, group_out, block_);
      return false;
    }
    if (plain_input) input_block = channels;
    Attributes attributes = node.attributes;
    attributes.erase("kernel_shape");  // W's shape says it
    attributes.erase("group");
    if (blocked_group != 1) attributes["group"] = blocked_group;
    std::vector<Value*> inputs = {
        plain_input ? x : blocked(x),
        constant(w->name() + "_nchwc", nchwc_conv_weights(*w->constant, block_, input_block))};
    if (bias) inputs.push_back(constant(bias->name() + "_nchwc", nchwc_channels(*bias->constant, block_)));
    add_twin_node(node, kNchwcConvOp, std::move(inputs), std::move(attributes));
    return true;
  }

  // MaxPool and AveragePool → the same pool over [N, Cb, H, W, b], its window extended by
  // one lane; GlobalMaxPool and GlobalAveragePool → MaxPool and AveragePool whose window
  // is the whole image.
  bool add_pool(const Node& node, bool global) {
    Value* x = node.input(0);
    if (!twin_.count(x) || !is_image(x)) return false;
    Attributes attributes;
    if (global) {
      attributes["kernel_shape"] = std::vector<int64_t>{x->type.shape[2], x->type.shape[3], 1};
    } else {
      attributes = node.attributes;
      for (const char* name : {"kernel_shape", "strides", "dilations"}) {
        auto it = attributes.find(name);
        if (it == attributes.end()) continue;
        auto& values = std::get<std::vector<int64_t>>(it->second);
        if (values.size() != 2) return false;
        values.push_back(1);
      }
      if (auto it = attributes.find("pads"); it != attributes.end()) {
        auto& pads = std::get<std::vector<int64_t>>(it->second);
        if (pads.size() != 4) return false;
        pads = {pads[0], pads[1], 0, pads[2], pads[3], 0};
      }
    }
    const bool max = node.op == "MaxPool" || node.op == "GlobalMaxPool";
    add_twin_node(node, max ? "MaxPool" : "AveragePool", {twin_.at(x)}, std::move(attributes));
    return true;
  }

  // Concat along the channels, when every input's channels are whole blocks.
  bool add_concat(const Node& node) {
    const int64_t axis = edit::int_attribute(node, "axis", 0);
    if (axis != 1 && axis != -3) return false;
    bool continues = false;
    for (const Value* input : node.inputs()) {
      if (!input || !is_image(input) || input->type.shape[1] % block_ != 0) return false;
      continues = continues || twin_.count(input);
    }
    if (!continues) return false;
    std::vector<Value*> inputs;
    for (Value* input : node.inputs()) inputs.push_back(blocked(input));
    add_twin_node(node, "Concat", std::move(inputs), {{"axis", int64_t{1}}});
    return true;
  }

  // An elementwise op whose operands are images of the result's batch and channels (a
  // spatial extent of 1 broadcasts, as in a squeeze-and-excitation scale), scalars, or
  // constants per channel.
  bool add_elementwise(const Node& node) {
    const TensorType& result = node.output(0)->type;
    bool continues = false;
    std::vector<Value*> inputs;
    for (Value* input : node.inputs()) {
      if (!input) {
        inputs.push_back(nullptr);
      } else if (input->is_constant()) {
        Value* operand = blocked_constant(input, result);
        if (!operand) return false;
        inputs.push_back(operand);
      } else if (is_image(input) && input->type.shape[0] == result.shape[0] &&
                 input->type.shape[1] == result.shape[1]) {
        continues = continues || twin_.count(input);
        inputs.push_back(input);
      } else {
        return false;
      }
    }
    if (!continues) return false;
    for (Value*& input : inputs) {
      if (input && !input->is_constant()) input = blocked(input);
    }
    add_twin_node(node, node.op, std::move(inputs), node.attributes);
    return true;
  }

  // A constant operand of an elementwise op with result type `result`, as the blocked op
  // reads it: itself when it has one element; [Cb, 1, 1, b] when, aligned at the end with
  // the result, it varies along the channels only; null otherwise.
  Value* blocked_constant(Value* value, const TensorType& result) {
    const Tensor& data = *value->constant;
    if (data.num_elements() == 1) return value;
    const Shape& shape = data.shape();
    const int64_t offset = result.rank() - data.rank();
    if (offset < 0 || data.rank() < 3) return nullptr;
    for (int64_t axis = 0; axis < data.rank(); ++axis) {
      const int64_t extent = shape[static_cast<size_t>(axis)];
      if (offset + axis == 1 ? extent != result.shape[1] : extent != 1) return nullptr;
    }
    Tensor blocks = nchwc_channels(data.reshaped({result.shape[1]}), block_);
    return constant(value->name() + "_nchwc", blocks.reshaped({blocks.shape()[0], 1, 1, block_}));
  }

  // The blocked twin of `value`: its own, or a new ToNchwc of it.
  Value* blocked(Value* value) {
    if (auto it = twin_.find(value); it != twin_.end()) return it->second;
    Value* result = add(kToNchwcOp, {value}, value->name() + "_nchwc",
                        blocked_type(value->type, block_), {{"block", block_}});
    twin_[value] = result;
    return result;
  }

  void add_twin_node(const Node& node, const std::string& op, std::vector<Value*> inputs,
                     Attributes attributes) {
    Value* result = node.output(0);
    twin_[result] = add(op, std::move(inputs), result->name() + "_nchwc",
                        blocked_type(result->type, block_), std::move(attributes));
  }

  Value* add(const std::string& op, std::vector<Value*> inputs, const std::string& name,
             const TensorType& type, Attributes attributes) {
    return edit::add_node_of_type(graph_, op, std::move(inputs), name, type,
                                  std::move(attributes));
  }

  Value* constant(const std::string& name, Tensor data) {
    return graph_.add_constant(graph_.unique_name(name), std::move(data));
  }

  Graph& graph_;
  const int64_t block_;
  std::unordered_map<const Value*, Value*> twin_;  // a plain value → its blocked twin
  std::vector<Node*> converted_;                   // nodes with a twin, in graph order
};

}  // namespace

void blocked_layout(Graph& graph, const Target& target) {
  if (!target.is_cpu()) return;
  BlockedLayout(graph, target.vector_lanes(DType::f32)).run();
}

MINIC_REGISTER_GRAPH_PASS("blocked-layout", blocked_layout,
                          "compute convolutions and the ops between them in blocks of channels "
                          "(NCHWc): one vector of output channels at a time");

}  // namespace minic
