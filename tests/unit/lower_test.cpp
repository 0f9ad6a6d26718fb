// Lowering small hand-made graphs to loop IR (src/lower/):
// every kernel is checked against its reference on random inputs (lower_test_util.h), and
// the structure is what the rules promise: fusion inlines producers, anchors and
// reductions keep buffers, each output is written; ops without a rule are named. The
// kernels of real models are lower_onnx_test.cpp. Course module 3.
#include "lower_test_util.h"

#include "minic/ir/graph/text.h"
#include "minic/ops/compute.h"
#include "minic/passes/pass_manager.h"

#include <catch2/catch.hpp>

using namespace minic;
using namespace minic::testing;

namespace {

// How many blocks and allocations a function has.
struct Structure {
  int blocks = 0;
  int allocations = 0;
};

class StructureCounter : public loop::IRVisitor {
 public:
  Structure counts;
  void visit_Block(const loop::Block* node) override {
    ++counts.blocks;
    loop::IRVisitor::visit_Block(node);
  }
  void visit_Allocate(const loop::Allocate* node) override {
    ++counts.allocations;
    loop::IRVisitor::visit_Allocate(node);
  }
};

Structure structure(const loop::PrimFunc& func) {
  StructureCounter counter;
  counter.visit(func.body);
  return counter.counts;
}

// Parses `text`, runs the default pipeline, lowers every kernel and checks each against the
// reference on random inputs. Returns the functions.
std::vector<loop::PrimFunc> lower_and_check(const std::string& text) {
  Graph graph = parse_graph(text);
  infer_shapes(graph);
  run_passes(graph, default_pipeline(), testing::avx512());
  require_kernels_agree(graph);
  std::vector<loop::PrimFunc> functions;
  for (const Node* node : graph.nodes()) {
    functions.push_back(lower_node(*node, graph.opset, testing::avx512()));
    CHECK(region_problem(functions.back()).empty());
  }
  return functions;
}

}  // namespace

TEST_CASE("a fused elementwise chain is one block with its producers inlined", "[lower]") {
  auto functions = lower_and_check(R"(
graph chain(%x: f32[3,5], %b: f32[5]) -> (%y: f32[3,5]) opset 17 {
  %s = Add(%x, %b)
  %t = Mul(%s, %s)
  %u = Sigmoid(%t)
  %y = Relu(%u)
  return %y
}
)");
  REQUIRE(functions.size() == 1);
  CHECK(structure(functions[0]).blocks == 1);
  CHECK(structure(functions[0]).allocations == 0);
  CHECK(functions[0].params.size() == 3);
}

TEST_CASE("anchors and reductions keep buffers; epilogues are stages after them", "[lower]") {
  auto functions = lower_and_check(R"(
graph net(%x: f32[1,2,6,6], %w: f32[3,2,3,3], %b: f32[3], %r: f32[1,3,3,3])
    -> (%y: f32[1,3,3,3], %p: f32[1,3,3,3]) opset 17 {
  %c = Conv(%x, %w, %b) {kernel_shape=[3,3], pads=[1,1,1,1], strides=[2,2]}
  %a = Add(%c, %r)
  %y = Relu(%a)
  %p = Softmax(%y) {axis=1}
  return %y, %p
}
)");
  REQUIRE(functions.size() == 2);
  // The zero-bordered input, Conv (a reduction into a buffer), then bias + residual + Relu
  // in one stage.
  CHECK(structure(functions[0]).blocks == 3);
  CHECK(structure(functions[0]).allocations == 2);
  // Softmax: max and sum of exponentials in buffers, the division into the output.
  CHECK(structure(functions[1]).blocks == 3);
  CHECK(structure(functions[1]).allocations == 2);
}

TEST_CASE("fused groups with several outputs write each of them", "[lower]") {
  auto functions = lower_and_check(R"(
graph g(%x: f32[2,6], %z: f32[2,3])
    -> (%a: f32[2,3], %b: f32[2,3], %r: f32[2,3], %s: f32[2,3]) opset 18 {
  %0 = Relu(%x)
  %a, %b = Split(%0) {axis=1, num_outputs=2}
  %w = const f32[3,3] splat<0.5>
  %m = MatMul(%z, %w)
  %r = Relu(%m)
  %s = Add(%r, %z)
  return %a, %b, %r, %s
}
)");
  CHECK(functions.size() == 3);
  CHECK(structure(functions[0]).blocks == 2);  // one stage per output
}

TEST_CASE("an expression that doubles at every op is kept in buffers", "[lower]") {
  std::string text = "graph square(%x: f32[4]) -> (%y: f32[4]) opset 17 {\n  %v0 = Relu(%x)\n";
  for (int k = 1; k <= 12; ++k) text += fmt::format("  %v{} = Mul(%v{}, %v{})\n", k, k - 1, k - 1);
  text += "  %y = Relu(%v12)\n  return %y\n}\n";
  auto functions = lower_and_check(text);
  REQUIRE(functions.size() == 1);
  CHECK(structure(functions[0]).allocations >= 1);
  CHECK(loop::print_func(functions[0]).size() < 20'000);
}

TEST_CASE("lowering names the op without a compute rule and the node", "[lower]") {
  // Every op has a rule; a Cast to float8 is a form of one that has none.
  Graph graph = parse_graph(R"(
graph g(%x: f32[4]) -> (%y: f8e4m3fn[4]) opset 17 {
  %r = Relu(%x)
  %y = Cast(%r) {to=17} @"layer/cast"
  return %y
}
)");
  infer_shapes(graph);
  CHECK(has_compute_rule("Relu"));
  // The schema's rule; an op whose schema has none and for which no file registers one
  // (MINIC_REGISTER_COMPUTE_RULE) has none.
  CHECK(find_compute_rule("Relu") == &op_registry().find("Relu")->compute);
  CHECK(find_compute_rule("TopK") == nullptr);
  CHECK_FALSE(has_compute_rule("TopK"));
  const Node* cast = graph.nodes()[1];
  CHECK_THROWS_WITH(lower_node(*cast, graph.opset, testing::avx512()),
                    Catch::Contains("no compute rule for op Cast (node 'layer/cast')"));
  CHECK_THROWS_AS(lower_node(*cast, graph.opset, testing::avx512()), NoComputeRule);
  CHECK_THROWS_WITH(lower_graph(graph, testing::avx512()),
                    Catch::Contains("no compute rule for op Cast"));
  std::vector<const Node*> skipped;
  loop::LoopModule module = lower_graph(graph, testing::avx512(), &skipped);
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0] == cast);
  REQUIRE(module.functions.size() == 1);
  CHECK(module.functions[0].name == "Relu_r");
  CHECK(kernel_name(*cast) == "layer_cast");
}

TEST_CASE("a rule refusing a form of its op gives NoComputeRule, and lower_graph skips it",
          "[lower]") {
  Graph graph = parse_graph(R"(
graph g(%x: f32[1,1,4,4]) -> (%y: f32[1,1,2,2], %i: i64[1,1,2,2], %q: f8e4m3fn[1,1,4,4]) opset 17 {
  %y, %i = MaxPool(%x) {kernel_shape=[2,2], strides=[2,2]}
  %q = Cast(%x) {to=17}
  return %y, %i, %q
}
)");
  infer_shapes(graph);
  for (const Node* node : graph.nodes()) {
    CHECK(can_lower(*node));  // the ops have rules ...
    // ... not these forms
    CHECK_THROWS_AS(lower_node(*node, graph.opset, testing::avx512()), NoComputeRule);
  }
  std::vector<const Node*> skipped;
  CHECK(lower_graph(graph, testing::avx512(), &skipped).functions.empty());
  CHECK(skipped.size() == 2);
}

TEST_CASE("kernel names are identifiers, unique within a module", "[lower]") {
  Graph graph = parse_graph(R"(
graph g(%x: f32[4]) -> (%y: f32[4]) opset 17 {
  %a = Relu(%x) @"0/relu"
  %b = Relu(%a) @"0/relu!"
  %y = Neg(%b)
  return %y
}
)");
  infer_shapes(graph);
  loop::LoopModule module = lower_graph(graph, testing::avx512());
  REQUIRE(module.functions.size() == 3);
  CHECK(module.functions[0].name == "k_0_relu");
  CHECK(module.functions[1].name == "k_0_relu_1");
  CHECK(module.functions[2].name == "Neg_y");
  std::string text = loop::print_module(module);
  CHECK(loop::print_module(loop::parse_loop_module(text, "module")) == text);
}

TEST_CASE("the trigonometric and hyperbolic rules agree with their kernels", "[lower]") {
  std::string text = "graph trig(%x: f32[3,4], %h: f16[5]) -> (";
  std::string body;
  std::string outputs;
  int count = 0;
  for (const char* op : {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh",
                         "Acosh", "Atanh"}) {
    text += fmt::format("{}%y{}: f32[3,4], %z{}: f16[5]", count == 0 ? "" : ", ", count, count);
    body += fmt::format("  %y{} = {}(%x)\n  %z{} = {}(%h)\n", count, op, count, op);
    outputs += fmt::format("{}%y{}, %z{}", count == 0 ? "" : ", ", count, count);
    ++count;
  }
  text += ") opset 17 {\n" + body + "  return " + outputs + "\n}\n";
  auto functions = lower_and_check(text);
  CHECK(functions.size() == 2 * static_cast<size_t>(count));
}

TEST_CASE("the Hardmax rule agrees with its kernel for both forms of the axis", "[lower]") {
  for (int opset : {11, 13}) {
    for (int axis : {0, 1, -1}) {
      CAPTURE(opset, axis);
      lower_and_check(fmt::format(R"(
graph hardmax(%x: f32[3,4,5]) -> (%y: f32[3,4,5]) opset {} {{
  %y = Hardmax(%x) {{axis={}}}
  return %y
}}
)",
                                  opset, axis));
    }
  }
}

TEST_CASE("the BitShift rule agrees with its kernel", "[lower]") {
  lower_and_check(R"(
graph shifts(%a: u8[2,3], %b: u8[3], %c: u32[4], %d: u64[4]) -> (%l: u8[2,3], %r: u8[2,3],
             %s: u32[4], %t: u64[4]) opset 17 {
  %l = BitShift(%a, %b) {direction="LEFT"}
  %r = BitShift(%a, %b) {direction="RIGHT"}
  %c2 = Add(%c, %c)
  %d2 = Add(%d, %d)
  %s = BitShift(%c, %c2) {direction="LEFT"}
  %t = BitShift(%d, %d2) {direction="RIGHT"}
  return %l, %r, %s, %t
}
)");
}

TEST_CASE("the Einsum rule agrees with its kernel for every form of equation", "[lower]") {
  auto functions = lower_and_check(R"(
graph einsums(%m: f32[3,4], %s: f32[4,4], %b: f32[2,3,3], %x: f32[2,1,3,4], %w: f32[3,4,5],
              %u: f32[3], %v: f32[5], %h: f16[3,4], %e: f16[4,2], %g: bf16[4,2], %n: i32[3,4],
              %p: i32[4,2], %c: f32[2,4], %q: f32[4,1], %z: f32[])
    -> (%transpose: f32[4,3], %trace: f32[], %diagonal: f32[4], %batch_diagonal: f32[2,3],
        %ellipsis: f32[2,3,3,5], %outer: f32[3,5], %total: f32[], %implicit: f32[3,5],
        %one_side: f32[3], %chain: f32[3,1], %half: f16[3,2], %brain: bf16[2,4],
        %integer: i32[3,2], %scalar: f32[]) opset 17 {
  %transpose = Einsum(%m) {equation="ij->ji"}
  %trace = Einsum(%s) {equation="ii"}
  %diagonal = Einsum(%s) {equation="ii->i"}
  %batch_diagonal = Einsum(%b) {equation="bii->bi"}
  %ellipsis = Einsum(%x, %w) {equation="...ij,...jk->...ik"}
  %outer = Einsum(%u, %v) {equation="i,j->ij"}
  %total = Einsum(%m) {equation="ij->"}
  %implicit = Einsum(%m, %w) {equation="ij,kjl"}
  %one_side = Einsum(%m, %c) {equation="ij,kj->i"}
  %chain = Einsum(%m, %s, %q) {equation="ij, jk, kl -> il"}
  %half = Einsum(%h, %e) {equation="ij,jk->ik"}
  %brain = Einsum(%g) {equation="ji"}
  %integer = Einsum(%n, %p) {equation="ij,jk->ik"}
  %scalar = Einsum(%z, %u) {equation=",i->"}
  return %transpose, %trace, %diagonal, %batch_diagonal, %ellipsis, %outer, %total, %implicit,
         %one_side, %chain, %half, %brain, %integer, %scalar
}
)");
  REQUIRE(functions.size() == 14);
  // No summed letter: one elementwise stage; summed letters: a reduction with an init; a
  // half-precision sum: a float32 buffer and a conversion stage.
  CHECK(structure(functions[0]).blocks == 1);
  CHECK(loop::print_func(functions[0]).find("init") == std::string::npos);
  CHECK(structure(functions[1]).blocks == 1);
  CHECK(loop::print_func(functions[1]).find("init {") != std::string::npos);
  CHECK(structure(functions[10]).blocks == 2);
  CHECK(structure(functions[10]).allocations == 1);
}
