// Tests of the blocked layout (NCHWc): the `blocked-layout` pass keeps what a graph
// computes for every form of convolution it rewrites and every op it carries on a chain
// (interpreter before and after, same random inputs), the weights land where
// minic.NchwcConv reads them, and the compiled kernels -- the blocked convolution rule
// with its epilogue folded in -- compute what the interpreter computes. Course module 4.
#include "minic/passes/graph/blocked_layout.h"

#include "minic/ops/nchwc.h"

#include "driver_test_util.h"
#include "pass_test_util.h"
#include "target_test_util.h"

#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <random>

using namespace minic;

namespace {

// One convolution of a test: its input and weights, the attributes as text.
struct ConvCase {
  std::string name;
  Shape input;    // [1, C, H, W]
  Shape weights;  // [M, C / group, KH, KW]
  std::string attributes;
  bool bias = true;
};

// The convolution, a Relu after it, and the Relu's result as the graph's output.
std::string conv_graph(const ConvCase& test, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string text = fmt::format("graph g(%x: f32[{}]) -> (%y: ?) opset 17 {{\n",
                                 fmt::join(test.input, ","));
  text += testing::random_constant("w", test.weights, rng);
  if (test.bias) text += testing::random_constant("b", {test.weights[0]}, rng);
  text += fmt::format("  %c = Conv(%x, %w{}) {{{}}}\n", test.bias ? ", %b" : "", test.attributes);
  text += "  %y = Relu(%c)\n  return %y\n}\n";
  return text;
}

const std::vector<ConvCase>& conv_cases() {
  static const std::vector<ConvCase> cases = {
      {"image input (3 channels, read plain), stride 2", {1, 3, 17, 17}, {24, 3, 7, 7},
       "pads=[3,3,3,3], strides=[2,2]"},
      {"one group, whole blocks", {1, 32, 9, 9}, {48, 32, 3, 3}, "pads=[1,1,1,1]"},
      {"one group, padded blocks in and out", {1, 24, 6, 6}, {40, 24, 1, 1}, ""},
      {"depthwise, stride 2", {1, 32, 10, 10}, {32, 1, 3, 3}, "group=32, pads=[1,1,1,1], strides=[2,2]"},
      {"depthwise, padded block", {1, 24, 7, 7}, {24, 1, 3, 3}, "group=24, pads=[1,1,1,1]"},
      {"two groups of two blocks", {1, 64, 6, 6}, {64, 32, 3, 3}, "group=2, pads=[1,1,1,1]"},
      {"dilated, asymmetric pads", {1, 16, 11, 9}, {16, 16, 3, 3},
       "dilations=[2,2], pads=[2,1,0,2]"},
      {"auto_pad SAME_UPPER, stride 2, no bias", {1, 16, 9, 9}, {32, 16, 3, 3},
       "auto_pad=\"SAME_UPPER\", strides=[2,2]", false},
      {"a 5x3 kernel on a tall image", {1, 16, 13, 7}, {16, 16, 5, 3}, "pads=[2,1,2,1]"},
      {"a 1-d convolution stored as [N, C, L, 1]", {1, 16, 20, 1}, {32, 16, 5, 1},
       "pads=[2,0,2,0]"},
  };
  return cases;
}

void block_for(Graph& graph, const Target& target) { blocked_layout(graph, target); }

}  // namespace

TEST_CASE("blocked-layout keeps each form of convolution's results", "[passes][nchwc]") {
  for (const Target* target : {&testing::avx512(), &testing::avx2()}) {
    for (const ConvCase& test : conv_cases()) {
      INFO(test.name << " on " << target->str());
      Graph graph = testing::graph_from_text(conv_graph(test, 7));
      testing::check_pass_preserves_outputs(
          graph, [&](Graph& g) { block_for(g, *target); }, 3, {1e-4, 1e-5});
      CHECK(testing::count_op(graph, "Conv") == 0);
      CHECK(testing::count_op(graph, kNchwcConvOp) == 1);
      CHECK(testing::count_op(graph, kFromNchwcOp) == 1);
      // The image is read as it is; any other input goes into blocks first.
      CHECK(testing::count_op(graph, kToNchwcOp) == (test.input[1] == 3 ? 0 : 1));
    }
  }
}

TEST_CASE("blocked-layout leaves groups of partial blocks and GPU targets plain", "[passes][nchwc]") {
  ConvCase quarter{"four groups of 4 channels", {1, 16, 6, 6}, {32, 4, 3, 3}, "group=4"};
  Graph graph = testing::graph_from_text(conv_graph(quarter, 1));
  std::string before = print_graph(graph);
  blocked_layout(graph, testing::avx512());
  CHECK(print_graph(graph) == before);
  Graph gpu = testing::graph_from_text(conv_graph(conv_cases()[1], 1));
  before = print_graph(gpu);
  blocked_layout(gpu, cuda_target("sm_90"));
  CHECK(print_graph(gpu) == before);
}

// A chain in the style of the light models: an image convolution, a max pool, two
// branches concatenated, Caffe's scale and shift as per-channel Mul and Add, a squeeze-
// and-excitation gate (a global pool, a sigmoid, a broadcast Mul), an average pool, a
// residual Sum; one value of the chain is also a graph output, and the chain ends in a
// Flatten. Everything between the first convolution and the Flatten computes in blocks.
TEST_CASE("blocked-layout carries a chain of pools, concatenations and elementwise ops",
          "[passes][nchwc]") {
  std::mt19937 rng(11);
  std::string text = "graph g(%x: f32[1,3,20,20]) -> (%f: ?, %mid: ?) opset 17 {\n";
  text += testing::random_constant("w0", {32, 3, 3, 3}, rng);
  text += testing::random_constant("b0", {32}, rng);
  text += testing::random_constant("w1", {16, 32, 1, 1}, rng);
  text += testing::random_constant("w2", {16, 32, 3, 3}, rng);
  text += testing::random_constant("s", {32, 1, 1}, rng);
  text += testing::random_constant("t", {1, 32, 1, 1}, rng);
  text += R"(  %c0 = Conv(%x, %w0, %b0) {pads=[1,1,1,1]}
  %r0 = Relu(%c0)
  %p0 = MaxPool(%r0) {kernel_shape=[3,3], pads=[1,1,1,1], strides=[2,2]}
  %c1 = Conv(%p0, %w1)
  %c2 = Conv(%p0, %w2) {pads=[1,1,1,1]}
  %cat = Concat(%c1, %c2) {axis=1}
  %scaled = Mul(%cat, %s)
  %mid = Add(%scaled, %t)
  %g = GlobalAveragePool(%mid)
  %gate = Sigmoid(%g)
  %se = Mul(%mid, %gate)
  %a = AveragePool(%se) {kernel_shape=[3,3], pads=[1,1,1,1], strides=[2,2], count_include_pad=1}
  %m = MaxPool(%se) {kernel_shape=[2,2], strides=[2,2], ceil_mode=1}
  %sum = Sum(%a, %m)
  %f = Flatten(%sum)
  return %f, %mid
}
)";
  Graph graph = testing::graph_from_text(text);
  testing::check_pass_preserves_outputs(graph, [](Graph& g) { block_for(g, testing::avx512()); });
  CHECK(testing::count_op(graph, kNchwcConvOp) == 3);
  CHECK(testing::count_op(graph, kToNchwcOp) == 0);
  // One FromNchwc for the Flatten and one for the graph output %mid, which keeps its name.
  CHECK(testing::count_op(graph, kFromNchwcOp) == 2);
  CHECK(graph.outputs().at(1)->name() == "mid");
  CHECK(graph.outputs().at(1)->producer()->op == kFromNchwcOp);
  // A second run finds nothing more to do.
  std::string once = print_graph(graph);
  blocked_layout(graph, testing::avx512());
  CHECK(print_graph(graph) == once);
}

TEST_CASE("nchwc_conv_weights puts W[m, c, kh, kw] at [m / b, c / bi, kh, kw, c % bi, m % b]",
          "[ops][nchwc]") {
  // W [3, 5, 1, 2] with W[m, c, 0, k] = 100 m + 10 c + k, in blocks of 2 outputs and 2
  // inputs: [2, 3, 1, 2, 2, 2], zero past m = 2 and c = 4.
  Tensor w(DType::f32, {3, 5, 1, 2});
  auto values = w.values<float>();
  for (int64_t m = 0; m < 3; ++m) {
    for (int64_t c = 0; c < 5; ++c) {
      for (int64_t k = 0; k < 2; ++k) values[(m * 5 + c) * 2 + k] = float(100 * m + 10 * c + k);
    }
  }
  Tensor blocked = nchwc_conv_weights(w, 2, 2);
  REQUIRE(blocked.shape() == Shape{2, 3, 1, 2, 2, 2});
  auto at = [&](int64_t mb, int64_t cb, int64_t k, int64_t i, int64_t j) {
    return blocked.values<float>()[(((mb * 3 + cb) * 2 + k) * 2 + i) * 2 + j];
  };
  CHECK(at(0, 0, 0, 0, 0) == 0.0f);     // m 0, c 0
  CHECK(at(0, 1, 1, 1, 1) == 131.0f);   // m 1, c 3, k 1
  CHECK(at(1, 2, 0, 0, 0) == 240.0f);   // m 2, c 4
  CHECK(at(1, 2, 0, 0, 1) == 0.0f);     // m 3: padding
  CHECK(at(1, 2, 0, 1, 0) == 0.0f);     // c 5: padding
  Tensor bias = Tensor::from_vector<float>({3}, {1.0f, 2.0f, 3.0f});
  CHECK(nchwc_channels(bias, 2).values<float>()[3] == 0.0f);
}

// The default pipeline (blocked-layout among its passes) and the default CPU schedules,
// compiled for this machine: each convolution form and the chain above against the
// interpreter on the same inputs.
TEST_CASE("compiled blocked convolutions match the interpreter", "[passes][nchwc][driver]") {
  for (const ConvCase& test : conv_cases()) {
    INFO(test.name);
    testing::check_against_interpreter(conv_graph(test, 5), {}, 9, {1e-4, 1e-5});
  }
}
