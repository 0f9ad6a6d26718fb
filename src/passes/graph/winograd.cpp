// The `winograd` pass. Course module 4; see the header for what and why.
//
// Precondition: types are known; blocked-layout has run (the pass rewrites
// minic.NchwcConv only).
// Invariant: the graph computes the same function up to float rounding: the transforms
// add and subtract multiples of the input, which rounds differently from the direct sum
// (relative differences near 1e-5 for F(4x4, 3x3), smaller for F(2x2, 3x3)).
//
// Algorithm: for each minic.NchwcConv in order,
//   1. check that it is a Winograd convolution: a blocked input, one group, a 3x3 kernel,
//      stride 1, dilation 1, explicit pads, constant weights (and bias);
//   2. choose the tile m (below), or leave the convolution direct;
//   3. add the input transform, the MatMul against the weights in transform space and the
//      output transform (with the convolution's bias), and forward the result to it.
//
// The choice. Per output tile of m x m and per pair of input and output channels, Winograd
// multiplies (m + 2)^2 times where the direct convolution multiplies 9 m^2 times. What it
// pays for that is memory: the transformed input V and the products M, each (m + 2)^2 / m^2
// times the size of the image, are written and read back between its three kernels, and
// the weights in transform space U are (m + 2)^2 / 9 times the size of the convolution's,
// read once per inference by MatMuls that have few rows when the image has few tiles.
// And the transforms' work grows with C + K, the channels in and out, where the
// multiplications saved grow with C K. So the pass takes the larger tile, m = 4, else
// m = 2, where
//   - C K / (C + K) is at least kMinChannels (32 for 64 channels in and out: a
//     convolution of 128 channels to 32 gains too little to pay for its transforms),
//   - the image has at least kMinTiles4 tiles of 4 x 4, or kMinTiles2 of 2 x 2 (the
//     MatMuls' rows; F(2x2) saves less per tile, and on 13 x 13 images, 49 tiles, it
//     lost),
//   - V holds at most kMaxTransformBytes (it stays in the last-level cache), and
//   - U holds at most kMaxWeightBytesPerTile for each tile (reading the weights is paid
//     for by the tiles that use them),
// and leaves the convolution direct otherwise. The thresholds were measured on this
// project's benchmark machine; the chapter has the measurements.
//
// Chapter: docs/module4-schedules.md#8-winograd-convolution
#include "minic/passes/graph/winograd.h"
#include "minic/passes/pass_registry.h"

#include "minic/ops/nchwc.h"
#include "minic/ops/winograd.h"
#include "minic/support/explain.h"

#include "graph_edit.h"

#include <map>
#include <string>

namespace minic {
namespace {

// The thresholds of the choice above.
constexpr int64_t kMinChannels = 32;
constexpr int64_t kMinTiles4 = 16;  // tiles of 4 x 4
constexpr int64_t kMinTiles2 = 64;  // tiles of 2 x 2
constexpr int64_t kMaxTransformBytes = 16 << 20;
constexpr int64_t kMaxWeightBytesPerTile = 64 << 10;

// Why `conv` is not a convolution this pass computes; empty if it is.
std::string not_winograd(const Node& conv) {
  const Value* x = conv.input(0);
  const Value* w = conv.input(1);
  const Value* bias = conv.input(2);
  if (x->type.rank() != 5 || x->type.dtype != DType::f32) return "its input is not blocked f32";
  if (conv.attributes.count("group")) return "it has groups";
  if (w->type.shape[2] != 3 || w->type.shape[3] != 3) return "its kernel is not 3x3";
  if (edit::ints_attribute(conv, "strides", {1, 1}) != std::vector<int64_t>{1, 1}) {
    return "its stride is not 1";
  }
  if (edit::ints_attribute(conv, "dilations", {1, 1}) != std::vector<int64_t>{1, 1}) {
    return "it is dilated";
  }
  if (conv.attributes.count("auto_pad")) return "its pads are given by auto_pad";
  if (edit::ints_attribute(conv, "pads", {0, 0, 0, 0}).size() != 4) return "its pads are not 2-d";
  if (!w->is_constant() || (bias && !bias->is_constant())) return "its weights are not constants";
  return {};
}

// The tile m for a convolution with `channels` input and `outputs` output channels (its
// blocks' padding included) and an output [N, ., height, width, .], or 0: direct.
int64_t choose_tile(int64_t channels, int64_t outputs, const Shape& output) {
  if (channels * outputs < kMinChannels * (channels + outputs)) return 0;
  for (int64_t m : {4, 2}) {
    const int64_t points = (m + 2) * (m + 2);
    const int64_t tiles = output[0] * ((output[2] + m - 1) / m) * ((output[3] + m - 1) / m);
    const int64_t transform_bytes = points * tiles * channels * 4;
    const int64_t weight_bytes = points * channels * outputs * 4;
    if (tiles >= (m == 4 ? kMinTiles4 : kMinTiles2) && transform_bytes <= kMaxTransformBytes &&
        weight_bytes <= kMaxWeightBytesPerTile * tiles) {
      return m;
    }
  }
  return 0;
}

class Winograd {
 public:
  explicit Winograd(Graph& graph) : graph_(graph) {}

  void run() {
    bool changed = false;
    for (Node* node : graph_.nodes()) {
      if (node->op == kNchwcConvOp) changed = rewrite(*node) || changed;
    }
    if (!changed) return;
    graph_.sort_topologically();
    graph_.remove_unused_values();
  }

 private:
  bool rewrite(Node& conv) {
    if (std::string why = not_winograd(conv); !why.empty()) {                    // 1.
      explain::note("{} stays direct: {}", conv.describe(), why);
      return false;
    }
    const TensorType& result = conv.output(0)->type;  // [N, Kb, OH, OW, b]
    const Value* x = conv.input(0);
    const int64_t channels = x->type.shape[1] * x->type.shape[4];
    const int64_t outputs = result.shape[1] * result.shape[4];
    const int64_t m = choose_tile(channels, outputs, result.shape);                   // 2.
    if (m == 0) {
      explain::note("{} stays direct: its {} x {} output and {} x {} channels pay for "
                    "neither Winograd tile (too few channels or tiles, or too many bytes to "
                    "move)", conv.describe(), result.shape[2], result.shape[3], channels,
                    outputs);
      return false;
    }
    const WinogradMatrices& matrices = matrices_for(m);                               // 3.
    const int64_t a = m + 2;
    const int64_t batch = result.shape[0];
    const std::vector<int64_t> tiles = {(result.shape[2] + m - 1) / m,
                                        (result.shape[3] + m - 1) / m};
    const int64_t tile_count = batch * tiles[0] * tiles[1];
    const std::vector<int64_t> pads = edit::ints_attribute(conv, "pads", {0, 0, 0, 0});
    const std::string name = conv.output(0)->name();

    Value* v = edit::add_node_of_type(
        graph_, kWinogradInputOp, {conv.input(0), matrix("bt", m, matrices.bt)},
        name + "_winograd_v", {DType::f32, {a * a, tile_count, channels}},
        {{"pads", std::vector<int64_t>{pads[0], pads[1]}}, {"tiles", tiles}});
    const Value* w = conv.input(1);
    Value* u = graph_.add_constant(graph_.unique_name(w->name() + "_winograd"),
                                   winograd_weights(plain_conv_weights(*w->constant), matrices));
    Value* product = edit::add_node_of_type(graph_, "MatMul", {v, u}, name + "_winograd_m",
                                            {DType::f32, {a * a, tile_count, outputs}}, {});
    std::vector<Value*> inputs = {product, matrix("at", m, matrices.at)};
    if (conv.input(2)) inputs.push_back(conv.input(2));
    const std::vector<int64_t> output_shape = {batch, result.shape[2], result.shape[3]};
    Value* y = edit::add_node_of_type(
        graph_, kWinogradOutputOp, std::move(inputs), name + "_winograd", result,
        {{"block", result.shape[4]}, {"output_shape", output_shape}});
    explain::note("{} computed as Winograd F({}x{}, 3x3) over {} tiles", conv.describe(), m, m,
                  tile_count);
    edit::replace_node(graph_, &conv, conv.output(0), y, /*take_name=*/true);
    return true;
  }

  const WinogradMatrices& matrices_for(int64_t m) {
    auto it = matrices_.find(m);
    if (it == matrices_.end()) it = matrices_.emplace(m, winograd_matrices(m)).first;
    return it->second;
  }

  // The constant BT or AT of F(m x m, 3 x 3), one per graph.
  Value* matrix(const std::string& which, int64_t m, const Tensor& data) {
    const std::string key = which + std::to_string(m);
    auto it = constants_.find(key);
    if (it != constants_.end()) return it->second;
    Value* value = graph_.add_constant(graph_.unique_name("winograd_" + key), data);
    constants_.emplace(key, value);
    return value;
  }

  Graph& graph_;
  std::map<int64_t, WinogradMatrices> matrices_;
  std::map<std::string, Value*> constants_;
};

}  // namespace

void winograd(Graph& graph, const Target& target) {
  if (!target.is_cpu()) return;
  Winograd(graph).run();
}

MINIC_REGISTER_GRAPH_PASS("winograd", winograd,
                          "compute 3x3 stride-1 convolutions with Winograd's minimal filtering, "
                          "F(4x4, 3x3) or F(2x2, 3x3), where the image has the tiles for it");

}  // namespace minic
