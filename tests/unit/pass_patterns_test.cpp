// The pattern-fusion passes fuse-gelu, fuse-layernorm and fuse-matmul-bias, and the
// matching helpers they share: each rewrite must keep the graph's outputs (checked on random
// inputs through the interpreter) and leave the node it promises.
#include "../../src/passes/graph/pattern.h"
#include "pass_test_util.h"

#include "minic/frontend/onnx.h"
#include "minic/passes/graph/fuse_gelu.h"
#include "minic/passes/graph/fuse_layernorm.h"
#include "minic/passes/graph/fuse_matmul_bias.h"

#include <algorithm>
#include <cmath>

namespace minic {
namespace {

using testing::check_pass_preserves_outputs;
using testing::count_op;
using testing::graph_from_text;


// --- the helpers -------------------------------------------------------------------------------

TEST_CASE("pattern helpers read constants and producers", "[passes][patterns]") {
  Graph graph = graph_from_text(R"(
graph g(%x: f32[2,3]) -> (%y: f32[2,3]) opset 17 {
  %half = const f32[2,3] splat<0.5>
  %one = const f32[1] dense<[1.0]>
  %mixed = const f32[2] dense<[1.0, 2.0]>
  %sqrt2 = const f32[] dense<[1.41421]>
  %a = Mul(%x, %half)
  %y = Add(%a, %one)
  return %y
})");
  Value* a = graph.find_value("a");
  CHECK(pattern::match_op(a, "Mul") == a->producer());
  CHECK(pattern::match_op(a, "Add") == nullptr);
  CHECK(pattern::match_op(graph.find_value("x"), "Mul") == nullptr);

  CHECK(pattern::splat_value(graph.find_value("half")) == 0.5);
  CHECK(pattern::splat_value(graph.find_value("one")) == 1.0);
  CHECK_FALSE(pattern::splat_value(graph.find_value("mixed")));
  CHECK_FALSE(pattern::splat_value(a));
  // 1.41421 is sqrt(2) to 1.5e-6 relative: within the tolerance; 1.4142 is 1.5e-5 off, and
  // 1.41 3e-3 off.
  CHECK(pattern::is_constant_near(graph.find_value("sqrt2"), std::sqrt(2.0)));
  CHECK(pattern::is_constant_near(graph.find_value("sqrt2"), 1.4142));
  CHECK_FALSE(pattern::is_constant_near(graph.find_value("sqrt2"), 1.41));

  Node* add = graph.find_value("y")->producer();
  CHECK(pattern::used_only_by(graph, a, add));
  CHECK_FALSE(pattern::used_only_by(graph, graph.find_value("y"), add));  // a graph output
  CHECK(pattern::sole_user(graph, a, "Add") == add);
  CHECK(pattern::sole_user(graph, a, "Mul") == nullptr);
  auto orders = pattern::both_orders(*add);
  CHECK(orders[0].first == a);
  CHECK(orders[1].first == graph.find_value("one"));
}

// --- fuse-gelu -------------------------------------------------------------------------------

// One graph with the GELU forms exporters write, each on its own input.
constexpr const char* kGeluForms = R"(
graph gelus(%a: f32[2,8], %b: f32[2,8], %c: f32[2,8], %d: f32[2,8], %e: f32[2,8])
    -> (%ya: f32[2,8], %yb: f32[2,8], %yc: f32[2,8], %yd: f32[2,8], %ye: f32[2,8]) opset 17 {
  %sqrt2 = const f32[] dense<[1.4142135]>
  %rsqrt2 = const f32[] dense<[0.70710678]>
  %one = const f32[] dense<[1.0]>
  %half = const f32[] dense<[0.5]>
  %three = const f32[] dense<[3.0]>
  %c1 = const f32[] dense<[0.044715]>
  %k = const f32[] dense<[0.7978846]>
  // (a * (1 + erf(a / sqrt2))) * 0.5
  %a1 = Div(%a, %sqrt2)
  %a2 = Erf(%a1)
  %a3 = Add(%a2, %one)
  %a4 = Mul(%a, %a3)
  %ya = Mul(%a4, %half)
  // (b * 0.5) * (1 + erf(b * rsqrt2))
  %b0 = Mul(%b, %half)
  %b1 = Mul(%rsqrt2, %b)
  %b2 = Erf(%b1)
  %b3 = Add(%one, %b2)
  %yb = Mul(%b0, %b3)
  // c * (0.5 * (1 + erf(c / sqrt2)))
  %c2 = Div(%c, %sqrt2)
  %c3 = Erf(%c2)
  %c4 = Add(%c3, %one)
  %c5 = Mul(%half, %c4)
  %yc = Mul(%c, %c5)
  // 0.5 * d * (1 + tanh(k * (d + 0.044715 * d^3)))
  %d1 = Pow(%d, %three)
  %d2 = Mul(%c1, %d1)
  %d3 = Add(%d, %d2)
  %d4 = Mul(%k, %d3)
  %d5 = Tanh(%d4)
  %d6 = Add(%one, %d5)
  %d7 = Mul(%half, %d)
  %yd = Mul(%d7, %d6)
  // e * (1 + tanh((e + e * e * e * 0.044715) * k)) * 0.5
  %e1 = Mul(%e, %e)
  %e2 = Mul(%e1, %e)
  %e3 = Mul(%e2, %c1)
  %e4 = Add(%e3, %e)
  %e5 = Mul(%e4, %k)
  %e6 = Tanh(%e5)
  %e7 = Add(%e6, %one)
  %e8 = Mul(%e, %e7)
  %ye = Mul(%e8, %half)
  return %ya, %yb, %yc, %yd, %ye
})";

TEST_CASE("fuse-gelu turns each GELU form into one Gelu", "[passes][patterns]") {
  Graph graph = graph_from_text(kGeluForms);
  check_pass_preserves_outputs(graph, fuse_gelu);
  CHECK(graph.num_nodes() == 5);
  CHECK(count_op(graph, "Gelu") == 5);
  for (const Value* output : graph.outputs()) {
    REQUIRE(output->producer() != nullptr);
    CHECK(output->producer()->op == "Gelu");
  }
  const Node* tanh_gelu = graph.find_value("yd")->producer();
  CHECK(std::get<std::string>(tanh_gelu->attributes.at("approximate")) == "tanh");
  CHECK(graph.find_value("ya")->producer()->attributes.empty());  // approximate="none"
  CHECK(graph.find_value("sqrt2") == nullptr);  // the formula's constants are gone
}

TEST_CASE("fuse-gelu's Gelu gives GELU's values", "[passes][patterns]") {
  Graph graph = graph_from_text(R"(
graph g(%x: f32[3]) -> (%y: f32[3]) opset 17 {
  %sqrt2 = const f32[] dense<[1.4142135]>
  %one = const f32[] dense<[1.0]>
  %half = const f32[] dense<[0.5]>
  %d = Div(%x, %sqrt2)
  %e = Erf(%d)
  %p = Add(%e, %one)
  %m = Mul(%x, %p)
  %y = Mul(%m, %half)
  return %y
})");
  fuse_gelu(graph);
  REQUIRE(count_op(graph, "Gelu") == 1);
  std::vector<Tensor> inputs = {Tensor::from_vector<float>({3}, {-1.0f, 0.0f, 1.0f})};
  std::vector<double> y = interpret(graph, inputs)[0].to_double_vector();
  // GELU(1) = Phi(1) = 0.8413447; GELU(-1) = -(1 - Phi(1)) = -0.1586553.
  CHECK(y[0] == Approx(-0.1586553).epsilon(1e-6));
  CHECK(y[1] == 0.0);
  CHECK(y[2] == Approx(0.8413447).epsilon(1e-6));
}

TEST_CASE("fuse-gelu leaves formulas that are not GELU or are shared", "[passes][patterns]") {
  Graph graph = graph_from_text(R"(
graph g(%x: f32[4]) -> (%y: f32[4], %y2: f32[4], %p2: f32[4]) opset 17 {
  %notsqrt2 = const f32[] dense<[1.5]>
  %sqrt2 = const f32[] dense<[1.4142135]>
  %one = const f32[] dense<[1.0]>
  %half = const f32[] dense<[0.5]>
  %d = Div(%x, %notsqrt2)
  %e = Erf(%d)
  %p = Add(%e, %one)
  %m = Mul(%x, %p)
  %y = Mul(%m, %half)
  %d2 = Div(%x, %sqrt2)
  %e2 = Erf(%d2)
  %p2 = Add(%e2, %one)
  %m2 = Mul(%x, %p2)
  %y2 = Mul(%m2, %half)
  return %y, %y2, %p2
})");
  size_t before = graph.num_nodes();
  check_pass_preserves_outputs(graph, fuse_gelu);
  CHECK(graph.num_nodes() == before);
  CHECK(count_op(graph, "Gelu") == 0);
}

// --- fuse-layernorm --------------------------------------------------------------------------

// A decomposed layer norm of x: f32[2,3,8] over `axes` (written like "[-1]"), with the square
// as "Pow" or "Mul", and * gamma + beta when `affine`. From opset 18 the axes are an input.
std::string layer_norm_text(int opset, const std::string& axes, const std::string& square,
                            bool affine) {
  auto reduce_mean = [&](const std::string& input) {
    if (opset >= 18) return fmt::format("ReduceMean(%{}, %axes)", input);
    return fmt::format("ReduceMean(%{}) {{axes={}}}", input, axes);
  };
  int64_t axis_count = std::count(axes.begin(), axes.end(), ',') + 1;
  std::string text = fmt::format("graph ln(%x: f32[2,3,8]) -> (%y: f32[2,3,8]) opset {} {{\n",
                                 opset);
  if (opset >= 18) text += fmt::format("  %axes = const i64[{}] dense<{}>\n", axis_count, axes);
  text += "  %two = const f32[] dense<[2.0]>\n";
  text += "  %eps = const f32[] dense<[1e-05]>\n";
  text += "  %gamma = const f32[8] dense<[1.0, 2.0, 3.0, 4.0, 0.5, 0.25, 1.5, -1.0]>\n";
  text += "  %beta = const f32[8] splat<0.125>\n";
  text += "  %mean = " + reduce_mean("x") + "\n";
  text += "  %d = Sub(%x, %mean)\n";
  text += square == "Pow" ? "  %sq = Pow(%d, %two)\n" : "  %sq = Mul(%d, %d)\n";
  text += "  %var = " + reduce_mean("sq") + "\n";
  text += "  %ve = Add(%var, %eps)\n";
  text += "  %std = Sqrt(%ve)\n";
  if (affine) {
    text += "  %n = Div(%d, %std)\n";
    text += "  %s = Mul(%n, %gamma)\n";
    text += "  %y = Add(%beta, %s)\n";
  } else {
    text += "  %y = Div(%d, %std)\n";
  }
  text += "  return %y\n}\n";
  return text;
}

TEST_CASE("fuse-layernorm turns the decomposition into one LayerNormalization",
          "[passes][patterns]") {
  struct Case {
    int opset;
    std::string axes;
    std::string square;
    bool affine;
    int64_t axis;
  };
  for (const Case& c : {Case{13, "[-1]", "Pow", true, -1}, Case{17, "[2]", "Mul", false, -1},
                        Case{18, "[-1]", "Pow", true, -1}, Case{18, "[1, 2]", "Mul", true, -2},
                        Case{17, "[-1, -2]", "Pow", false, -2}}) {
    INFO("opset " << c.opset << ", axes " << c.axes << ", " << c.square
                  << (c.affine ? ", gamma and beta" : ""));
    Graph graph = graph_from_text(layer_norm_text(c.opset, c.axes, c.square, c.affine));
    check_pass_preserves_outputs(graph, fuse_layernorm);
    REQUIRE(graph.num_nodes() == 1);
    const Node* node = graph.nodes()[0];
    CHECK(node->op == "LayerNormalization");
    CHECK(node->output(0)->name() == "y");
    CHECK(std::get<int64_t>(node->attributes.at("axis")) == c.axis);
    CHECK(std::get<float>(node->attributes.at("epsilon")) == 1e-5f);
    CHECK(node->inputs().size() == (c.affine ? 3u : 2u));
  }
}

TEST_CASE("fuse-layernorm needs trailing, matching axes", "[passes][patterns]") {
  for (const std::string axes : {"[1]", "[0, 2]"}) {
    INFO("axes " << axes);
    Graph graph = graph_from_text(layer_norm_text(17, axes, "Pow", true));
    size_t before = graph.num_nodes();
    check_pass_preserves_outputs(graph, fuse_layernorm);
    CHECK(graph.num_nodes() == before);
  }
  std::string mismatched = layer_norm_text(17, "[-1]", "Pow", true);
  mismatched.replace(mismatched.find("{axes=[-1]}"), 11, "{axes=[-2, -1]}");
  Graph graph = graph_from_text(mismatched);
  check_pass_preserves_outputs(graph, fuse_layernorm);
  CHECK(count_op(graph, "LayerNormalization") == 0);
}

// --- fuse-matmul-bias ------------------------------------------------------------------------

TEST_CASE("fuse-matmul-bias turns a 2-D MatMul and bias Add into Gemm", "[passes][patterns]") {
  Graph graph = graph_from_text(R"(
graph fc(%x: f32[3,4], %z: f32[1,3,4]) -> (%y: f32[3,2], %v: f32[1,3,2]) opset 17 {
  %w = const f32[4,2] dense<[0.5, -1.0, 0.25, 2.0, 1.0, -0.5, 0.75, 0.0]>
  %b = const f32[2] dense<[0.1, -0.2]>
  %w2 = const f32[2,2] splat<0.5>
  %c = const f32[3,1] dense<[1.0, 2.0, 3.0]>
  %0 = MatMul(%x, %w)
  %1 = Add(%b, %0)
  %2 = MatMul(%1, %w2)
  %y = Add(%2, %c)
  %3 = MatMul(%z, %w)
  %v = Add(%3, %b)
  return %y, %v
})");
  check_pass_preserves_outputs(graph, fuse_matmul_bias);
  CHECK(count_op(graph, "Gemm") == 2);
  CHECK(graph.find_value("y")->producer()->op == "Gemm");
  // The 3-D MatMul stays, for operator fusion to join with its Add.
  CHECK(graph.find_value("v")->producer()->op == "Add");
  CHECK(count_op(graph, "MatMul") == 1);
}

TEST_CASE("fuse-matmul-bias on the example MLP", "[passes][patterns]") {
  Graph graph = import_onnx(std::string(MINIC_SOURCE_DIR) + "/examples/models/mlp.onnx");
  REQUIRE(count_op(graph, "MatMul") == 3);
  check_pass_preserves_outputs(graph, fuse_matmul_bias);
  CHECK(count_op(graph, "MatMul") == 0);
  CHECK(count_op(graph, "Add") == 0);
  CHECK(count_op(graph, "Gemm") == 3);
  CHECK(graph.outputs()[0]->name() == "output");
}

}  // namespace
}  // namespace minic
