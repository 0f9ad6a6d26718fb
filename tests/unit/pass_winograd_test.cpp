// Tests of Winograd convolution: the matrices of F(2x2, 3x3) and F(4x4, 3x3) compute a
// correlation, the `winograd` pass keeps what a graph computes (the interpreter runs the
// ops' reference kernels before and after, on the same random inputs) and chooses the
// tile as it says, and the compiled kernels (the ops' compute rules under the default
// schedules) compute what the interpreter computes. Course module 4.
#include "minic/passes/graph/winograd.h"

#include "minic/ops/nchwc.h"
#include "minic/ops/winograd.h"
#include "minic/passes/graph/blocked_layout.h"

#include "driver_test_util.h"
#include "pass_test_util.h"
#include "target_test_util.h"

#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <random>

using namespace minic;

namespace {

struct ConvCase {
  std::string name;
  Shape input;    // [N, C, H, W]
  Shape weights;  // [M, C / group, KH, KW]
  std::string attributes;
  int64_t tile;   // the tile the pass should choose; 0: the convolution stays direct
};

// A convolution with a bias, and a Relu after it.
std::string conv_graph(const ConvCase& test, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string text = fmt::format("graph g(%x: f32[{}]) -> (%y: ?) opset 17 {{\n",
                                 fmt::join(test.input, ","));
  text += testing::random_constant("w", test.weights, rng);
  text += testing::random_constant("b", {test.weights[0]}, rng);
  text += fmt::format("  %c = Conv(%x, %w, %b) {{{}}}\n", test.attributes);
  text += "  %y = Relu(%c)\n  return %y\n}\n";
  return text;
}

const std::vector<ConvCase>& winograd_cases() {
  static const std::vector<ConvCase> cases = {
      {"F(4x4): 16 x 16, 16 tiles", {1, 64, 16, 16}, {64, 64, 3, 3}, "pads=[1,1,1,1]", 4},
      {"F(4x4): partial tiles at the bottom and the right", {1, 64, 18, 17}, {64, 64, 3, 3},
       "pads=[1,1,1,1]", 4},
      {"F(2x2): padded channel blocks in and out (U too large a tile for F(4x4))",
       {1, 88, 16, 16}, {104, 88, 3, 3}, "pads=[1,1,1,1]", 2},
      {"F(4x4): asymmetric pads, two images", {2, 64, 12, 12}, {64, 64, 3, 3},
       "pads=[2,0,0,1]", 4},
      {"F(2x2): 128 channels on 16 x 16 (U too large a tile for F(4x4))", {1, 128, 16, 16},
       {128, 128, 3, 3}, "pads=[1,1,1,1]", 2},
      {"direct: 10 x 10, too few tiles of 4 and of 2", {1, 64, 12, 12}, {64, 64, 3, 3}, "", 0},
      {"direct: stride 2", {1, 64, 33, 33}, {64, 64, 3, 3}, "pads=[1,1,1,1], strides=[2,2]", 0},
      {"direct: a 1x1 kernel", {1, 64, 32, 32}, {64, 64, 1, 1}, "", 0},
      {"direct: dilated", {1, 64, 20, 20}, {64, 64, 3, 3}, "dilations=[2,2], pads=[2,2,2,2]", 0},
      {"direct: two groups", {1, 64, 16, 16}, {64, 32, 3, 3}, "group=2, pads=[1,1,1,1]", 0},
      {"direct: a 5 x 5 image", {1, 64, 5, 5}, {64, 64, 3, 3}, "pads=[1,1,1,1]", 0},
      {"direct: 64 channels to 16", {1, 64, 16, 16}, {16, 64, 3, 3}, "pads=[1,1,1,1]", 0},
  };
  return cases;
}

// The tile m of the graph's Winograd convolution (the rows of the AT its output transform
// reads), or 0 where there is none.
int64_t tile_of(const Graph& graph) {
  for (const Node* node : graph.nodes()) {
    if (node->op == kWinogradOutputOp) return node->input(1)->type.shape[0];
  }
  return 0;
}

}  // namespace

TEST_CASE("F(m x m, 3 x 3)'s matrices compute a correlation", "[ops][winograd]") {
  // One dimension: y[i] = sum over k of d[i + k] g[k] is AT ((G g) .* (BT d)).
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  for (int64_t m : {2, 4}) {
    INFO("m = " << m);
    const int64_t a = m + 2;
    WinogradMatrices matrices = winograd_matrices(m);
    REQUIRE(matrices.bt.shape() == Shape{a, a});
    REQUIRE(matrices.g.shape() == Shape{a, 3});
    REQUIRE(matrices.at.shape() == Shape{m, a});
    std::vector<double> bt = matrices.bt.to_double_vector();
    std::vector<double> g = matrices.g.to_double_vector();
    std::vector<double> at = matrices.at.to_double_vector();
    std::vector<double> d(static_cast<size_t>(a));
    std::vector<double> filter(3);
    for (double& x : d) x = value(rng);
    for (double& x : filter) x = value(rng);
    std::vector<double> product(static_cast<size_t>(a));
    for (int64_t xi = 0; xi < a; ++xi) {
      double gg = 0;
      double bd = 0;
      for (int64_t k = 0; k < 3; ++k) gg += g[xi * 3 + k] * filter[k];
      for (int64_t p = 0; p < a; ++p) bd += bt[xi * a + p] * d[p];
      product[xi] = gg * bd;
    }
    for (int64_t i = 0; i < m; ++i) {
      double expected = 0;
      double actual = 0;
      for (int64_t k = 0; k < 3; ++k) expected += d[i + k] * filter[k];
      for (int64_t xi = 0; xi < a; ++xi) actual += at[i * a + xi] * product[xi];
      CHECK(actual == Approx(expected).margin(1e-6));
    }
  }
}

TEST_CASE("winograd keeps each convolution's results and chooses its tile", "[passes][winograd]") {
  for (const Target* target : {&testing::avx512(), &testing::avx2()}) {
    for (const ConvCase& test : winograd_cases()) {
      INFO(test.name << " on " << target->str());
      Graph graph = testing::graph_from_text(conv_graph(test, 5));
      blocked_layout(graph, *target);
      // The outputs are sums of 576 products of values near 1, so of size near 16; the
      // transforms' rounding leaves differences near 1e-5 of that (the interpreter's Conv
      // sums in double).
      testing::check_pass_preserves_outputs(
          graph, [&](Graph& g) { winograd(g, *target); }, 3, {1e-3, 1e-3});
      CHECK(testing::count_op(graph, kWinogradInputOp) == (test.tile ? 1 : 0));
      CHECK(testing::count_op(graph, kNchwcConvOp) == (test.tile ? 0 : 1));
      CHECK(tile_of(graph) == test.tile);
      // A second run finds nothing more to do.
      std::string once = print_graph(graph);
      winograd(graph, *target);
      CHECK(print_graph(graph) == once);
    }
  }
}

TEST_CASE("winograd leaves plain convolutions and GPU targets alone", "[passes][winograd]") {
  // Without the blocked layout there is no minic.NchwcConv to rewrite.
  Graph graph = testing::graph_from_text(conv_graph(winograd_cases()[0], 1));
  std::string before = print_graph(graph);
  winograd(graph, testing::avx512());
  CHECK(print_graph(graph) == before);
  winograd(graph, cuda_target("sm_90"));
  CHECK(print_graph(graph) == before);
}

TEST_CASE("the bad Winograd op is refused with the node's name", "[ops][winograd]") {
  // A WinogradOutput whose M holds more tiles than its output_shape has.
  const std::string text = R"(graph g(%m: f32[36,5,16]) -> (%y: ?) opset 17 {
  %at = const f32[4,6] splat<1.0>
  %y = minic.WinogradOutput(%m, %at) {block=16, output_shape=[1,8,8]}
  return %y
}
)";
  CHECK_THROWS_WITH(testing::graph_from_text(text),
                    Catch::Contains("%y") && Catch::Contains("holds 5 tiles") &&
                        Catch::Contains("has 4"));
}

// The default pipeline (blocked-layout, then winograd) and the default CPU schedules,
// compiled for this machine: each case against the interpreter on the same inputs.
TEST_CASE("compiled Winograd convolutions match the interpreter", "[passes][winograd][driver]") {
  for (const ConvCase& test : winograd_cases()) {
    if (test.tile == 0) continue;
    INFO(test.name);
    testing::check_against_interpreter(conv_graph(test, 8), {}, 2, {1e-3, 1e-3});
  }
}
