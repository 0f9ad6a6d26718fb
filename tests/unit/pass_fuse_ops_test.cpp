// Unit tests for the `fuse-ops` pass and the post-dominator tree it is built on: the
// groups it forms on hand-written graphs, on random graphs and on the light models, each
// checked differentially (same outputs before and after) and through the text form.
// Course module 2.
#include "pass_test_util.h"

#include "../../src/passes/graph/dominators.h"
#include "minic/frontend/onnx.h"
#include "minic/passes/graph/fold_batchnorm.h"
#include "minic/passes/graph/fold_constants.h"
#include "minic/passes/graph/fuse_ops.h"
#include "minic/support/explain.h"

#include <map>
#include <random>
#include <set>

using namespace minic;
using minic::testing::check_pass_preserves_outputs;
using minic::testing::graph_from_text;

namespace {

// fuse-ops for a CPU target (on a CUDA target only ops with their own CUDA kernel differ:
// ops_custom_op_test.cpp).
void fuse_for_cpu(Graph& graph) { fuse_operators(graph, Target(CpuTarget{})); }

std::vector<std::string> ops_of(const Graph& graph) {
  std::vector<std::string> ops;
  for (const Node* node : graph.nodes()) ops.push_back(node->op);
  return ops;
}

std::vector<std::string> names_of(const std::vector<Value*>& values) {
  std::vector<std::string> names;
  for (const Value* value : values) names.push_back(value->name());
  return names;
}

std::vector<const Node*> fused_nodes(const Graph& graph) {
  std::vector<const Node*> fused;
  for (const Node* node : graph.nodes()) {
    if (node->is_fused()) fused.push_back(node);
  }
  return fused;
}

// The text form survives the pass's result: print, parse, print gives the same text.
void require_text_round_trip(const Graph& graph) {
  std::string text = print_graph(graph);
  REQUIRE(print_graph(parse_graph(text)) == text);
}

const char* kResidualBlock = R"(graph block(%x: f32[1,4,6,6]) -> (%y: f32[1,4,6,6]) opset 17 {
  %w = const f32[4,4,3,3] splat<0.125>
  %b = const f32[4] dense<[0.5, -0.5, 1.0, -1.0]>
  %0 = Conv(%x, %w, %b) {kernel_shape=[3,3], pads=[1,1,1,1]}
  %1 = Add(%0, %x)
  %y = Relu(%1)
  return %y
})";

}  // namespace

TEST_CASE("the post-dominator tree of a diamond and of a fork to the exit", "[fuse_ops]") {
  // 0 → 1 → 3, 0 → 2 → 3, 3 → exit(4): the branches meet at 3.
  PostDominatorTree diamond = build_post_dominator_tree({{1, 2}, {3}, {3}, {}});
  REQUIRE(diamond.parent == std::vector<int>{3, 3, 3, 4, -1});
  REQUIRE(diamond.depth == std::vector<int>{2, 2, 2, 1, 0});
  // 0 → 1 → exit and 0 → 2 → 3 → exit: only the exit post-dominates 0; 2's is 3.
  PostDominatorTree fork = build_post_dominator_tree({{1, 2}, {4}, {3}, {}});
  REQUIRE(fork.parent == std::vector<int>{4, 4, 3, 4, -1});
  REQUIRE(fork.common_post_dominator(2, 1) == 4);
  REQUIRE(fork.common_post_dominator(2, 3) == 3);
}

TEST_CASE("Conv, the residual Add and Relu become one fused node", "[fuse_ops]") {
  Graph graph = graph_from_text(kResidualBlock);
  check_pass_preserves_outputs(graph, fuse_for_cpu);
  REQUIRE(graph.num_nodes() == 1);
  const Node* fused = graph.nodes()[0];
  REQUIRE(fused->op == kFusedOp);
  REQUIRE(fused->name == "conv_add_relu");
  REQUIRE(ops_of(*fused->body) == std::vector<std::string>{"Conv", "Add", "Relu"});
  // The constants come in as inputs; the output keeps its name.
  REQUIRE(names_of(fused->inputs()) == std::vector<std::string>{"x", "w", "b"});
  REQUIRE(names_of(fused->outputs()) == std::vector<std::string>{"y"});
  REQUIRE(graph.outputs()[0] == fused->output(0));
  require_text_round_trip(graph);

  // A second run changes nothing: a fused node is opaque.
  std::string once = print_graph(graph);
  fuse_for_cpu(graph);
  REQUIRE(print_graph(graph) == once);
}

TEST_CASE("a BatchNormalization between Conv and Relu joins the group", "[fuse_ops]") {
  Graph graph = graph_from_text(R"(graph g(%x: f32[1,3,5,5]) -> (%y: f32[1,3,5,5]) opset 15 {
    %w = const f32[3,3,1,1] splat<0.5>
    %s = const f32[3] dense<[1.0, 2.0, 0.5]>
    %m = const f32[3] dense<[0.1, -0.2, 0.3]>
    %v = const f32[3] dense<[1.0, 4.0, 0.25]>
    %0 = Conv(%x, %w) {kernel_shape=[1,1]}
    %1 = BatchNormalization(%0, %s, %m, %m, %v)
    %2 = Sum(%1, %x)
    %y = Relu(%2)
    return %y
  })");
  check_pass_preserves_outputs(graph, fuse_for_cpu);
  REQUIRE(graph.num_nodes() == 1);
  REQUIRE(ops_of(*graph.nodes()[0]->body) ==
          std::vector<std::string>{"Conv", "BatchNormalization", "Sum", "Relu"});
}

TEST_CASE("two anchors never share a group", "[fuse_ops]") {
  // Both Convs post-dominate into the Add; the first takes Add and Relu, the second stays.
  Graph graph = graph_from_text(R"(graph g(%x: f32[1,2,4,4]) -> (%y: f32[1,2,4,4]) opset 17 {
    %w = const f32[2,2,1,1] splat<0.5>
    %v = const f32[2,2,1,1] splat<-0.25>
    %a = Conv(%x, %w) {kernel_shape=[1,1]}
    %b = Conv(%x, %v) {kernel_shape=[1,1]}
    %s = Add(%a, %b)
    %y = Relu(%s)
    return %y
  })");
  check_pass_preserves_outputs(graph, fuse_for_cpu);
  REQUIRE(ops_of(graph) == std::vector<std::string>{"Conv", "Fused"});
  REQUIRE(ops_of(*graph.nodes()[1]->body) == std::vector<std::string>{"Conv", "Add", "Relu"});
  REQUIRE(graph.nodes()[1]->body->nodes()[0]->output(0)->name() == "a");
}

TEST_CASE("a reduction takes its producers, not its consumers; opaque ops stay alone",
          "[fuse_ops]") {
  Graph graph = graph_from_text(R"(graph g(%x: f32[2,8]) -> (%y: f32[2,1]) opset 17 {
    %axes = const i64[1] dense<[1]>
    %idx = const i64[2] dense<[1, 0]>
    %0 = Neg(%x)
    %1 = Exp(%0)
    %2 = ReduceSum(%1, %axes)
    %3 = Log(%2)
    %4 = Gather(%3, %idx) {axis=0}
    %y = Relu(%4)
    return %y
  })");
  check_pass_preserves_outputs(graph, fuse_for_cpu);
  REQUIRE(ops_of(graph) == std::vector<std::string>{"Fused", "Log", "Gather", "Relu"});
  const Node* reduction = graph.nodes()[0];
  REQUIRE(reduction->name == "neg_exp_reducesum");
  REQUIRE(ops_of(*reduction->body) == std::vector<std::string>{"Neg", "Exp", "ReduceSum"});
  REQUIRE(names_of(reduction->inputs()) == std::vector<std::string>{"x", "axes"});
}

TEST_CASE("values a group's nodes make for outside become its outputs", "[fuse_ops]") {
  // Relu joins the Split after it; both halves leave the group, %a also as a graph output.
  Graph graph = graph_from_text(R"(graph g(%x: f32[2,6]) -> (%a: f32[2,3], %c: f32[3,3]) opset 18 {
    %0 = Relu(%x)
    %a, %b = Split(%0) {axis=1, num_outputs=2}
    %t = Transpose(%b) {perm=[1,0]}
    %c = MatMul(%t, %a)
    return %a, %c
  })");
  check_pass_preserves_outputs(graph, fuse_for_cpu);
  REQUIRE(ops_of(graph) == std::vector<std::string>{"Fused", "Transpose", "MatMul"});
  const Node* group = graph.nodes()[0];
  REQUIRE(ops_of(*group->body) == std::vector<std::string>{"Relu", "Split"});
  REQUIRE(names_of(group->outputs()) == std::vector<std::string>{"a", "b"});
  REQUIRE(names_of(group->body->outputs()) == std::vector<std::string>{"a", "b"});
  REQUIRE(graph.is_graph_output(group->output(0)));
  REQUIRE(group->output(0)->users().size() == 1);
  REQUIRE(group->output(1)->users()[0]->op == "Transpose");
  REQUIRE(graph.find_value("0") == nullptr);
  require_text_round_trip(graph);
}

namespace {

// A random graph on f32[1,4,5,5] values mixing every fusion kind: elementwise (Relu,
// Sigmoid, Neg, Tanh), broadcast (Add, Mul of two values, Add of a per-channel bias, and
// Mul by a ReduceMean's [1,4,1,1] result), injective (Transpose), reduction (ReduceMean,
// Softmax), out_fusable (Conv 1x1, MaxPool 3x3) and opaque (Gather). Each node reads one or
// two earlier values; the last value and a few others are the outputs.
std::string random_graph_text(uint64_t seed, int num_nodes) {
  std::mt19937_64 random(seed);
  auto pick = [&](int n) { return static_cast<int>(random() % static_cast<uint64_t>(n)); };
  std::string text =
      "graph r(%x: f32[1,4,5,5], %z: f32[1,4,5,5]) -> (OUTPUTS) opset 17 {\n"
      "  %w = const f32[4,4,1,1] dense<[0.5, -0.25, 0.125, 0.3, -0.5, 0.25, 0.2, 0.1, "
      "0.4, -0.1, 0.3, -0.2, 0.1, 0.2, -0.3, 0.5]>\n"
      "  %bias = const f32[1,4,1,1] dense<[0.1, -0.2, 0.3, -0.4]>\n"
      "  %idx = const i64[4] dense<[3, 1, 2, 0]>\n";
  std::vector<std::string> values = {"x", "z"};
  auto any = [&] { return "%" + values[pick(static_cast<int>(values.size()))]; };
  auto recent = [&] {
    int n = static_cast<int>(values.size());
    return "%" + values[n - 1 - pick(std::min(n, 3))];
  };
  for (int i = 0; i < num_nodes; ++i) {
    std::string name = fmt::format("v{}", i);
    std::string a = recent();
    std::string line;
    switch (pick(12)) {
      case 0: line = fmt::format("Relu({})", a); break;
      case 1: line = fmt::format("Sigmoid({})", a); break;
      case 2: line = fmt::format("Tanh({})", a); break;
      case 3: line = fmt::format("Add({}, {})", a, any()); break;
      case 4: line = fmt::format("Mul({}, {})", a, any()); break;
      case 5: line = fmt::format("Add({}, %bias)", a); break;
      case 6: line = fmt::format("Conv({}, %w) {{kernel_shape=[1,1]}}", a); break;
      case 7: line = fmt::format("MaxPool({}) {{kernel_shape=[3,3], pads=[1,1,1,1]}}", a); break;
      case 8: line = fmt::format("Transpose({}) {{perm=[0,1,3,2]}}", a); break;
      case 9: line = fmt::format("Softmax({}) {{axis=1}}", a); break;
      case 10: line = fmt::format("Gather({}, %idx) {{axis=1}}", a); break;
      default:
        text += fmt::format("  %{}.mean = ReduceMean({}) {{axes=[2,3]}}\n", name, a);
        line = fmt::format("Mul({}, %{}.mean)", any(), name);
        break;
    }
    text += fmt::format("  %{} = {}\n", name, line);
    values.push_back(name);
  }
  std::vector<std::string> outputs = {values.back()};
  for (int k = 0; k < 2; ++k) {
    std::string extra = values[2 + pick(num_nodes)];
    if (std::find(outputs.begin(), outputs.end(), extra) == outputs.end()) {
      outputs.push_back(extra);
    }
  }
  std::vector<std::string> signature;
  std::vector<std::string> refs;
  for (const std::string& output : outputs) {
    signature.push_back(fmt::format("%{}: f32[1,4,5,5]", output));
    refs.push_back("%" + output);
  }
  text += fmt::format("  return {}\n}}\n", fmt::join(refs, ", "));
  text.replace(text.find("OUTPUTS"), 7, fmt::format("{}", fmt::join(signature, ", ")));
  return text;
}

}  // namespace

TEST_CASE("fuse-ops keeps the outputs of random graphs, one anchor a group at most",
          "[fuse_ops]") {
  int fused_total = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    std::string text = random_graph_text(seed, 14);
    INFO("seed " << seed << "\n" << text);
    Graph graph = graph_from_text(text);
    size_t nodes_before = graph.num_nodes();
    check_pass_preserves_outputs(graph, fuse_for_cpu, seed);
    size_t nodes_inside = 0;
    for (const Node* node : graph.nodes()) {
      if (!node->is_fused()) {
        ++nodes_inside;
        continue;
      }
      ++fused_total;
      const Graph& body = *node->body;
      REQUIRE(body.num_nodes() >= 2);
      REQUIRE_FALSE(node->outputs().empty());
      nodes_inside += body.num_nodes();
      int anchors = 0;
      for (const Node* inner : body.nodes()) {
        const OpSchema* schema = op_registry().find(inner->op);
        REQUIRE(schema->fusion != FusionKind::opaque);
        if (schema->fusion == FusionKind::out_fusable) ++anchors;
      }
      REQUIRE(anchors <= 1);
    }
    REQUIRE(nodes_inside == nodes_before);
    require_text_round_trip(graph);
  }
  REQUIRE(fused_total > 60);  // the graphs do fuse: about two groups a graph
}

// Over the same random graphs, what `minic explain` shows: at most one note for each node,
// each saying which group the node stays out of and why; together they give every reason
// the rule has (the exit, opaque ops, reductions, an edge, a group on the way or at the end).
TEST_CASE("fuse-ops says once why a node stays out of its post-dominator's group",
          "[fuse_ops]") {
  const std::vector<std::string> reasons = {
      "it is a graph output",        "is opaque",      "a reduction takes in its producers",
      "the path there reads through", "on the way there", ", and that group"};
  std::map<std::string, int> seen;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    std::string text = random_graph_text(seed, 14);
    INFO("seed " << seed << "\n" << text);
    Graph graph = graph_from_text(text);
    explain::Recorder recorder;
    fuse_for_cpu(graph);
    std::set<std::string> noted;
    for (const std::string& note : recorder.take()) {
      INFO(note);
      size_t stays = note.find(" stays out of the group");
      REQUIRE(stays != std::string::npos);
      REQUIRE(noted.insert(note.substr(0, stays)).second);
      for (const std::string& reason : reasons) {
        if (note.find(reason) != std::string::npos) ++seen[reason];
      }
    }
  }
  for (const std::string& reason : reasons) {
    INFO(reason);
    REQUIRE(seen[reason] > 0);
  }
}

// The light models build their weights with ConstantOfShape; fold-constants makes them
// constants first, so that fusion sees the graph a compiler would.
TEST_CASE("fuse-ops on ResNet-50 and SqueezeNet", "[fuse_ops][models][heavy]") {
  const std::string dir = MINIC_ONNX_LIGHT_DIR "/";
  SECTION("ResNet-50: each Conv with its BatchNormalization, Sum and Relu is one kernel") {
    Graph graph = import_onnx(dir + "light_resnet50.onnx");
    fold_constants(graph);
    check_pass_preserves_outputs(graph, fuse_for_cpu);
    std::map<std::string, int> groups;
    for (const Node* node : fused_nodes(graph)) {
      ++groups[fmt::format("{}", fmt::join(ops_of(*node->body), ","))];
    }
    REQUIRE(groups == std::map<std::string, int>{{"Conv,BatchNormalization", 4},
                                                 {"Conv,BatchNormalization,Relu", 33},
                                                 {"Conv,BatchNormalization,Sum,Relu", 16}});
    require_text_round_trip(graph);
  }
  SECTION("ResNet-50 with BatchNormalization folded: Conv, Sum and Relu") {
    Graph graph = import_onnx(dir + "light_resnet50.onnx");
    fold_constants(graph);
    fold_batchnorm(graph);
    fold_constants(graph);
    check_pass_preserves_outputs(graph, fuse_for_cpu);
    int residual = 0;
    for (const Node* node : fused_nodes(graph)) {
      if (ops_of(*node->body) == std::vector<std::string>{"Conv", "Sum", "Relu"}) ++residual;
    }
    REQUIRE(residual == 16);
    REQUIRE(fused_nodes(graph).size() == 49);
  }
  SECTION("SqueezeNet: each Conv takes its Relu; the last Concat its Dropout") {
    Graph graph = import_onnx(dir + "light_squeezenet.onnx");
    fold_constants(graph);
    check_pass_preserves_outputs(graph, fuse_for_cpu);
    std::map<std::string, int> groups;
    for (const Node* node : fused_nodes(graph)) {
      ++groups[fmt::format("{}", fmt::join(ops_of(*node->body), ","))];
    }
    // (Dropout is elementwise and injective Concat takes it; simplify would remove it.)
    REQUIRE(groups ==
            std::map<std::string, int>{{"Conv,Relu", 26}, {"Concat,Dropout", 1}});
  }
}
