// Unit tests for the fold-constants, dce and cse passes: each rewrite checked for its
// structure (what is left, with what value) and differentially (the interpreter's outputs
// on random inputs before and after agree), on small text graphs and on real models.
// Course module 2.
#include "minic/frontend/onnx.h"
#include "minic/passes/graph/cse.h"
#include "minic/passes/graph/dce.h"
#include "minic/passes/graph/fold_constants.h"
#include "pass_test_util.h"

#include <algorithm>

using namespace minic;
using minic::testing::check_pass_preserves_outputs;
using minic::testing::graph_from_text;
using Catch::Matchers::Contains;

namespace {

using testing::count_op;

// The node defining the value named `name`.
const Node* producer_of(const Graph& graph, const std::string& name) {
  const Value* value = graph.find_value(name);
  REQUIRE(value);
  return value->producer();
}

// True if some node other than a fused one reads only constants: fold-constants leaves none.
bool has_foldable_node(const Graph& graph) {
  for (const Node* node : graph.nodes()) {
    if (node->is_fused()) continue;
    auto constant_or_omitted = [](const Value* v) { return !v || v->is_constant(); };
    if (std::ranges::all_of(node->inputs(), constant_or_omitted)) {
      return true;
    }
  }
  return false;
}

void fold_dce(Graph& graph) {
  fold_constants(graph);
  eliminate_dead_code(graph);
}

}  // namespace

// --- fold-constants -----------------------------------------------------------------------------

TEST_CASE("fold-constants turns a ConstantOfShape weight into a splat constant", "[passes][fold]") {
  Graph graph = graph_from_text(R"(
graph conv(%x: f32[1,2,5,5]) -> (%y: f32[1,3,5,5]) opset 17 {
  %shape = const i64[4] dense<[3, 2, 3, 3]>
  %b = const f32[3] dense<[0.25, -1.0, 2.0]>
  %w = ConstantOfShape(%shape) {value=tensor<f32[1] dense<[0.5]>>}
  %y = Conv(%x, %w, %b) {kernel_shape=[3,3], pads=[1,1,1,1]}
  return %y
})");
  check_pass_preserves_outputs(graph, fold_constants);
  REQUIRE(count_op(graph, "ConstantOfShape") == 0);
  const Value* w = graph.find_value("w");
  REQUIRE(w);
  REQUIRE(w->is_constant());
  REQUIRE(w->constant->type() == TensorType{DType::f32, {3, 2, 3, 3}});
  std::vector<double> elements = w->constant->to_double_vector();
  REQUIRE(std::ranges::all_of(elements, [](double e) { return e == 0.5; }));
  // The shape constant was read only by the folded node.
  REQUIRE(graph.find_value("shape") == nullptr);
  REQUIRE(print_graph(graph).find("%w = const f32[3,2,3,3] splat<0.5>") != std::string::npos);
}

TEST_CASE("fold-constants folds a Shape-Gather-Unsqueeze-Concat chain into a Reshape's shape",
          "[passes][fold]") {
  Graph graph = graph_from_text(R"(
graph flatten(%x: f32[2,3,4]) -> (%y: f32[2,12]) opset 17 {
  %zero = const i64[] dense<[0]>
  %axes = const i64[1] dense<[0]>
  %minus_one = const i64[1] dense<[-1]>
  %shape = Shape(%x)
  %batch = Gather(%shape, %zero) {axis=0}
  %batch1 = Unsqueeze(%batch, %axes)
  %target = Concat(%batch1, %minus_one) {axis=0}
  %y = Reshape(%x, %target)
  return %y
})");
  check_pass_preserves_outputs(graph, fold_constants);
  REQUIRE(graph.num_nodes() == 1);
  const Node* reshape = producer_of(graph, "y");
  REQUIRE(reshape->op == "Reshape");
  REQUIRE(reshape->input(1)->is_constant());
  REQUIRE(reshape->input(1)->name() == "target");
  REQUIRE(reshape->input(1)->constant->to_int64_vector() == std::vector<int64_t>{2, -1});
}

TEST_CASE("fold-constants folds Shape and Size of a non-constant value", "[passes][fold]") {
  Graph graph = graph_from_text(R"(
graph g(%x: f32[2,3,5]) -> (%s: i64[2], %n: i64[], %y: f32[6,5]) opset 17 {
  %r = Relu(%x)
  %s = Shape(%r) {end=2}
  %n = Size(%r)
  %rows = ReduceProd(%s) {axes=[0], keepdims=1}
  %cols = const i64[1] dense<[-1]>
  %target = Concat(%rows, %cols) {axis=0}
  %y = Reshape(%r, %target)
  return %s, %n, %y
})");
  check_pass_preserves_outputs(graph, fold_constants);
  REQUIRE(count_op(graph, "Shape") == 0);
  REQUIRE(count_op(graph, "Size") == 0);
  // Graph outputs that became constants stay graph outputs, under their names.
  REQUIRE(graph.outputs()[0]->name() == "s");
  REQUIRE(graph.outputs()[0]->constant->to_int64_vector() == std::vector<int64_t>{2, 3});
  REQUIRE(graph.outputs()[1]->name() == "n");
  REQUIRE(graph.outputs()[1]->constant->as_int64(0) == 30);
  REQUIRE(producer_of(graph, "y")->input(1)->constant->to_int64_vector() ==
          std::vector<int64_t>{6, -1});
  // Relu reads the graph input: it stays.
  REQUIRE(count_op(graph, "Relu") == 1);
  REQUIRE_FALSE(has_foldable_node(graph));
}

TEST_CASE("fold-constants evaluates arithmetic on constants exactly", "[passes][fold]") {
  Graph graph = graph_from_text(R"(
graph g(%x: f32[2,3]) -> (%y: f32[2,3]) opset 17 {
  %a = const f32[3,2] dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]>
  %t = Transpose(%a) {perm=[1,0]}
  %half = const f32[] dense<[0.5]>
  %scaled = Mul(%t, %half)
  %y = Add(%x, %scaled)
  return %y
})");
  check_pass_preserves_outputs(graph, fold_constants);
  REQUIRE(graph.num_nodes() == 1);
  const Value* scaled = producer_of(graph, "y")->input(1);
  REQUIRE(scaled->name() == "scaled");
  REQUIRE(scaled->constant->to_double_vector() ==
          std::vector<double>{0.5, 1.5, 2.5, 1.0, 2.0, 3.0});
}

TEST_CASE("fold-constants reports a kernel error on constant inputs, naming the node",
          "[passes][fold]") {
  // Too large for shape inference to evaluate, so the bad index first shows when folding.
  Graph graph = graph_from_text(R"(
graph g(%x: f32[3000,2]) -> (%y: f32[3000,2]) opset 17 {
  %d = const f32[10,2] splat<1.0>
  %i = const i64[3000] splat<12>
  %g = Gather(%d, %i) {axis=0} @bad_gather
  %y = Add(%x, %g)
  return %y
})");
  REQUIRE_THROWS_WITH(fold_constants(graph), Contains("Gather node 'bad_gather'") &&
                                                 Contains("out of range"));
}

TEST_CASE("fold-constants leaves fused nodes alone", "[passes][fold]") {
  Graph graph = graph_from_text(R"(
graph g() -> (%y: f32[3]) opset 17 {
  %a = const f32[3] dense<[1.0, -2.0, 3.0]>
  %r = fused(%a) @group {
    %r = Relu(%a)
  }
  %y = Neg(%r)
  return %y
})");
  check_pass_preserves_outputs(graph, fold_constants);
  REQUIRE(graph.num_nodes() == 2);
  REQUIRE(producer_of(graph, "r")->is_fused());
  REQUIRE(producer_of(graph, "r")->body->num_nodes() == 1);
}

// --- dce ----------------------------------------------------------------------------------------

TEST_CASE("dce removes dead chains and the constants only they read", "[passes][dce]") {
  Graph graph = graph_from_text(R"(
graph g(%x: f32[4]) -> (%y: f32[4], %z: f32[4]) opset 17 {
  %w = const f32[4] splat<2.0>
  %a = Mul(%x, %w)
  %b = Relu(%a)
  %c = Sigmoid(%b)
  %y = Neg(%x)
  %z = Abs(%y)
  %e = Exp(%z)
  return %y, %z
})");
  check_pass_preserves_outputs(graph, eliminate_dead_code);
  REQUIRE(graph.num_nodes() == 2);
  REQUIRE(producer_of(graph, "y")->op == "Neg");  // a graph output read by a node
  REQUIRE(producer_of(graph, "z")->op == "Abs");  // a graph output nothing reads
  REQUIRE(graph.find_value("w") == nullptr);
  REQUIRE(graph.find_value("e") == nullptr);
  REQUIRE(graph.inputs().size() == 1);
}

TEST_CASE("dce keeps a live node whole, unused outputs included", "[passes][dce]") {
  Graph graph = graph_from_text(R"(
graph g(%x: f32[6]) -> (%y: f32[2]) opset 17 {
  %sizes = const i64[2] dense<[2, 4]>
  %p, %q = Split(%x, %sizes) {axis=0}
  %y = Relu(%p)
  return %y
})");
  check_pass_preserves_outputs(graph, eliminate_dead_code);
  REQUIRE(graph.num_nodes() == 2);
  REQUIRE(producer_of(graph, "q")->op == "Split");
}

TEST_CASE("dce cleans the bodies of fused nodes and removes dead fused nodes", "[passes][dce]") {
  Graph graph = graph_from_text(R"(
graph g(%x: f32[4]) -> (%y: f32[4]) opset 17 {
  %d = fused(%x) @dead {
    %d = Exp(%x)
  }
  %y = fused(%x) @live {
    %0 = Relu(%x)
    %1 = Sigmoid(%0)
    %k = const f32[4] splat<3.0>
    %2 = Mul(%1, %k)
    %y = Neg(%0)
  }
  return %y
})");
  check_pass_preserves_outputs(graph, eliminate_dead_code);
  REQUIRE(graph.num_nodes() == 1);
  const Graph& body = *producer_of(graph, "y")->body;
  REQUIRE(body.num_nodes() == 2);
  REQUIRE(body.find_value("k") == nullptr);
  REQUIRE(body.inputs().size() == 1);
}

// --- cse ----------------------------------------------------------------------------------------

TEST_CASE("cse merges identical nodes, and whole duplicated chains", "[passes][cse]") {
  Graph graph = graph_from_text(R"(
graph g(%x: f32[4]) -> (%y: f32[4]) opset 17 {
  %a = Relu(%x)
  %b = Relu(%x)
  %sa = LeakyRelu(%a) {alpha=0.1}
  %sb = LeakyRelu(%b) {alpha=0.1}
  %y = Add(%sa, %sb)
  return %y
})");
  check_pass_preserves_outputs(graph, eliminate_common_subexpressions);
  REQUIRE(graph.num_nodes() == 3);
  const Node* add = producer_of(graph, "y");
  REQUIRE(add->input(0) == add->input(1));
  REQUIRE(add->input(0)->name() == "sa");
  REQUIRE(graph.find_value("b") == nullptr);
}

TEST_CASE("cse keeps nodes that differ in attributes or in input order",
          "[passes][cse]") {
  Graph graph = graph_from_text(R"(
graph g(%x: f32[4]) -> (%y: f32[4]) opset 17 {
  %a = LeakyRelu(%x) {alpha=0.0}
  %b = LeakyRelu(%x) {alpha=-0.0}
  %c = Sub(%a, %b)
  %d = Sub(%b, %a)
  %z = const i64[1] dense<[4]>
  %e = ConstantOfShape(%z) {value=tensor<f32[1] dense<[1.0]>>}
  %f = ConstantOfShape(%z) {value=tensor<f32[1] dense<[2.0]>>}
  %g = ConstantOfShape(%z) {value=tensor<f32[1] dense<[2.0]>>}
  %h = Add(%c, %d)
  %i = Add(%e, %f)
  %j = Add(%h, %i)
  %y = Add(%j, %g)
  return %y
})");
  check_pass_preserves_outputs(graph, eliminate_common_subexpressions);
  REQUIRE(count_op(graph, "LeakyRelu") == 2);  // 0.0 and -0.0 are different floats
  REQUIRE(count_op(graph, "Sub") == 2);
  REQUIRE(count_op(graph, "ConstantOfShape") == 2);  // tensor attributes compared by value
  REQUIRE(producer_of(graph, "y")->input(1)->name() == "f");
}

TEST_CASE("cse merges identical constants, large ones too", "[passes][cse]") {
  Graph graph;
  graph.opset = 17;
  TensorType type{DType::f32, {1000}};
  Value* x = graph.add_input("x", type);
  std::vector<float> values(1000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.25f;
  Value* w1 = graph.add_constant("w1", Tensor::from_vector<float>({1000}, values));
  Value* w2 = graph.add_constant("w2", Tensor::from_vector<float>({1000}, values));
  values.back() = -1.0f;
  Value* w3 = graph.add_constant("w3", Tensor::from_vector<float>({1000}, values));
  Value* w4 = graph.add_constant("w4", Tensor::from_vector<float>({10, 100}, values));
  Node* a = graph.add_node("Add", {x, w1}, {"a"});
  Node* b = graph.add_node("Add", {x, w2}, {"b"});
  Node* c = graph.add_node("Add", {x, w3}, {"c"});
  Node* r = graph.add_node("Reshape", {w4, graph.add_constant("s", Tensor::from_vector<int64_t>(
                                                                      {1}, {1000}))},
                           {"r"});
  Node* ab = graph.add_node("Mul", {a->output(0), b->output(0)}, {"ab"});
  Node* abc = graph.add_node("Sub", {ab->output(0), c->output(0)}, {"abc"});
  Node* y = graph.add_node("Add", {abc->output(0), r->output(0)}, {"y"});
  graph.add_output(y->output(0));
  infer_shapes(graph);
  verify_graph(graph);

  check_pass_preserves_outputs(graph, eliminate_common_subexpressions);
  REQUIRE(graph.find_value("w2") == nullptr);
  REQUIRE(graph.find_value("w3") != nullptr);  // differs in its last element
  REQUIRE(graph.find_value("w4") != nullptr);  // the same bytes as w3, another shape
  REQUIRE(count_op(graph, "Add") == 3);        // %b merged into %a
  const Node* mul = producer_of(graph, "ab");
  REQUIRE(mul->input(0) == mul->input(1));
}

TEST_CASE("cse keeps duplicates that define graph outputs or feed fused nodes",
          "[passes][cse]") {
  Graph graph = graph_from_text(R"(
graph g(%x: f32[4]) -> (%y: f32[4], %z: f32[4], %f: f32[4]) opset 17 {
  %y = Relu(%x)
  %z = Relu(%x)
  %a = Exp(%x) : f32[4]
  %b = Exp(%x) : f32[4]
  %f = fused(%a, %b) {
    %f = Add(%a, %b)
  }
  return %y, %z, %f
})");
  check_pass_preserves_outputs(graph, eliminate_common_subexpressions);
  REQUIRE(graph.num_nodes() == 5);
  REQUIRE(graph.outputs()[0]->name() == "y");
  REQUIRE(graph.outputs()[1]->name() == "z");
}

// --- real models --------------------------------------------------------------------------------

// The ONNX "light" models build every weight with ConstantOfShape. After fold-constants and
// dce no ConstantOfShape is left, nothing foldable remains, and the outputs are unchanged.
// The interpreter runs each model twice, so the slowest (VGG-19, ResNet-50) are checked for
// structure only.
TEST_CASE("fold-constants, cse and dce on the light models", "[passes][fold][models][heavy]") {
  const std::string dir = MINIC_ONNX_LIGHT_DIR "/";
  for (const char* name : {"bvlc_alexnet", "densenet121", "inception_v1", "inception_v2",
                           "shufflenet", "squeezenet", "zfnet512", "resnet50", "vgg19"}) {
    INFO(name);
    Graph graph = import_onnx(dir + "light_" + name + ".onnx");
    size_t nodes_before = graph.num_nodes();
    REQUIRE(count_op(graph, "ConstantOfShape") > 0);
    auto passes = [](Graph& g) {
      fold_dce(g);
      verify_graph(g);
      eliminate_common_subexpressions(g);
    };
    if (std::string_view(name) == "resnet50" || std::string_view(name) == "vgg19") {
      passes(graph);
      verify_graph(graph);
    } else {
      check_pass_preserves_outputs(graph, passes);
    }
    REQUIRE(count_op(graph, "ConstantOfShape") == 0);
    REQUIRE_FALSE(has_foldable_node(graph));
    REQUIRE(graph.num_nodes() < nodes_before);
  }
}

TEST_CASE("the three passes keep the MLP example's outputs", "[passes][models]") {
  Graph graph = import_onnx(MINIC_SOURCE_DIR "/examples/models/mlp.onnx");
  check_pass_preserves_outputs(graph, [](Graph& g) {
    fold_constants(g);
    eliminate_common_subexpressions(g);
    eliminate_dead_code(g);
  });
  REQUIRE_FALSE(has_foldable_node(graph));
}
