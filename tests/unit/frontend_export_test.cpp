// Unit tests for the ONNX exporter (src/frontend/onnx_writer.cpp): graphs written as ONNX
// models and imported back. Course module 2.
//
//   - every ONNX node test the reference interpreter passes (tests/onnx/expected_pass.txt),
//     bodies of If, Loop and Scan included: imported as the conformance runner does,
//     exported, imported again; both graphs print the same text, and the interpreter gives
//     identical outputs for both on the test's inputs;
//   - the nine light models: the same text after the round trip, before and after the
//     graph passes that keep to ONNX ops (the interpreter is too slow to run them here);
//   - the model's header, types, omitted inputs and attribute kinds as ONNX reads them;
//     body names that clash with outer ones;
//   - refusals: a fused node, an op of minic's own, a graph without an opset.
#include "minic/codegen/llvm.h"
#include "minic/frontend/onnx.h"
#include "minic/ir/graph/text.h"
#include "minic/ops/op.h"
#include "minic/passes/pass_manager.h"
#include "minic/runtime/interpreter.h"

#include "onnx_test_util.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace minic;
using namespace minic::testing;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

// `graph` exported to a file and imported again with `options`.
Graph round_trip(const Graph& graph, const OnnxImportOptions& options = {}) {
  TempDir dir;
  std::string path = dir.file("exported.onnx");
  export_onnx(graph, path);
  return import_onnx(path, options);
}

// The ModelProto export writes for `graph`.
onnx::ModelProto exported_proto(const Graph& graph) {
  onnx::ModelProto model;
  REQUIRE(model.ParseFromString(export_onnx_bytes(graph)));
  return model;
}

std::string export_error(const Graph& graph) {
  try {
    export_onnx_bytes(graph);
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

// True if a node of `graph` passes a constant to its bodies as a capture: an input that
// the import froze after the body was built. The file holds it as an initializer, which
// import copies into the body, so the text changes (and the bodies' constants and captures
// may come in another order).
bool captures_a_constant(const Graph& graph) {
  for (const Node* node : graph.nodes()) {
    auto it = node->attributes.find("captures");
    if (it == node->attributes.end()) continue;
    size_t captures = static_cast<size_t>(std::get<int64_t>(it->second));
    for (size_t i = node->inputs().size() - captures; i < node->inputs().size(); ++i) {
      if (node->input(i)->is_constant()) return true;
    }
  }
  return false;
}

struct NodeCaseResult {
  std::string problem;        // empty when the outputs are identical and the text agrees
  bool second_trip = false;   // the text agrees only from the second round trip on
};

// One node test through the round trip: both graphs compute identical outputs and print
// the same text, or, where a body captured a frozen input, the round-tripped graph prints
// the same text after another round trip.
NodeCaseResult run_node_case(const fs::path& folder) {
  const std::string model = (folder / "model.onnx").string();
  OnnxImportOptions options = node_case_import_options(folder);
  Graph graph = import_onnx(model, options);
  // Inputs frozen into constants on import are initializers in the exported file.
  OnnxImportOptions again;
  std::vector<Tensor> inputs;
  for (const Value* input : graph.inputs()) {
    again.known_inputs[input->name()] = options.known_inputs.at(input->name());
    inputs.push_back(options.known_inputs.at(input->name()));
  }
  Graph back = round_trip(graph, again);
  NodeCaseResult result;
  std::vector<Tensor> expected = interpret(graph, inputs);
  std::vector<Tensor> actual = interpret(back, inputs);
  for (size_t k = 0; k < expected.size(); ++k) {
    if (!actual[k].identical(expected[k])) result.problem = fmt::format("output {} differs", k);
  }
  std::string text = print_graph(graph);
  if (print_graph(back) != text && captures_a_constant(graph)) {
    result.second_trip = true;
    text = print_graph(back);
    back = round_trip(back, again);
  }
  if (result.problem.empty() && print_graph(back) != text) {
    result.problem = fmt::format("the text differs:\n{}\nafter the round trip:\n{}", text,
                                 print_graph(back));
  }
  return result;
}

// The graph passes of the default pipeline that keep to ONNX ops: those before
// blocked-layout, which makes minic's own ops, and fuse-ops, which makes fused nodes.
std::vector<std::string> onnx_passes() {
  std::vector<std::string> passes;
  for (const std::string& pass : default_pipeline()) {
    if (pass == "blocked-layout" || pass == "winograd" || pass == "fuse-ops") continue;
    passes.push_back(pass);
  }
  return passes;
}

}  // namespace

TEST_CASE("every passing ONNX node test round-trips through export", "[frontend][export]") {
  fs::path root = fs::path(MINIC_ONNX_NODE_DIR);
  int cases = 0;
  std::vector<std::string> second_trip;
  std::vector<std::string> problems;
  const std::string list = MINIC_SOURCE_DIR "/tests/onnx/expected_pass.txt";
  for (const std::string& name : read_case_names(list)) {
    ++cases;
    try {
      NodeCaseResult result = run_node_case(root / name);
      if (!result.problem.empty()) problems.push_back(name + ": " + result.problem);
      if (result.second_trip) second_trip.push_back(name);
    } catch (const Error& error) {
      problems.push_back(name + ": " + error.what());
    }
  }
  std::ofstream(fs::temp_directory_path() / "minic-export-node-failures.txt")
      << fmt::format("{}\n", fmt::join(problems, "\n\n"));
  WARN(cases << " node tests exported and imported back with identical outputs, "
             << cases - static_cast<int>(second_trip.size() + problems.size())
             << " to the same text, " << second_trip.size()
             << " (bodies capturing a frozen input) to the same text from the second round "
                "trip on: "
             << fmt::format("{}", fmt::join(second_trip, ", ")) << "; " << problems.size()
             << " failed");
  CAPTURE(problems);
  CHECK(problems.empty());
  CHECK(cases >= 1500);
  CHECK(second_trip.size() <= 10);
}

TEST_CASE("the light models round-trip through export, before and after the ONNX passes",
          "[frontend][export][heavy]") {
  fs::path root = fs::path(MINIC_ONNX_LIGHT_DIR);
  for (const char* name : {"bvlc_alexnet", "densenet121", "inception_v1", "inception_v2",
                           "resnet50", "shufflenet", "squeezenet", "vgg19", "zfnet512"}) {
    CAPTURE(name);
    Graph graph = import_onnx((root / fmt::format("light_{}.onnx", name)).string());
    CHECK(print_graph(round_trip(graph)) == print_graph(graph));
    run_passes(graph, onnx_passes(), codegen::host_target());
    CHECK(print_graph(round_trip(graph)) == print_graph(graph));
  }
}

TEST_CASE("the exported model: header, types, initializers, omitted inputs, attributes",
          "[frontend][export]") {
  Graph graph = parse_graph(R"(
graph clip(%x: f32[2,3]) -> (%y: f32[2,3], %n: i64[2]) opset 21 {
  %max = const f32[] dense<[6.0]>
  %c = Clip(%x, _, %max) : f32[2,3] @clip6
  %y = LeakyRelu(%c) {alpha=0.25} : f32[2,3]
  %n = Shape(%y) {end=2, start=0} : i64[2]
  return %y, %n
})");
  CHECK(print_graph(round_trip(graph)) == print_graph(graph));
  // Unused, but an initializer all the same. (The text form has no int4 elements.)
  graph.add_constant("q", Tensor(DType::i4, {2}));
  onnx::ModelProto model = exported_proto(graph);
  CHECK(model.ir_version() == 10);  // opset 21; int4 needs IR version 10 too
  CHECK(model.producer_name() == "minic");
  REQUIRE(model.opset_import_size() == 1);
  CHECK(model.opset_import(0).domain().empty());
  CHECK(model.opset_import(0).version() == 21);

  const onnx::GraphProto& g = model.graph();
  CHECK(g.name() == "clip");
  REQUIRE(g.input_size() == 1);
  CHECK(g.input(0).name() == "x");
  const onnx::TypeProto::Tensor& x = g.input(0).type().tensor_type();
  CHECK(x.elem_type() == onnx::TensorProto::FLOAT);
  REQUIRE(x.shape().dim_size() == 2);
  CHECK(x.shape().dim(1).dim_value() == 3);
  REQUIRE(g.output_size() == 2);
  CHECK(g.output(1).type().tensor_type().elem_type() == onnx::TensorProto::INT64);
  REQUIRE(g.initializer_size() == 2);
  CHECK(g.initializer(0).name() == "max");
  CHECK(g.initializer(0).has_raw_data());
  CHECK(g.initializer(1).raw_data().size() == 1);  // two int4 elements in one byte

  REQUIRE(g.node_size() == 3);
  const onnx::NodeProto& clip = g.node(0);
  CHECK(clip.op_type() == "Clip");
  CHECK(clip.name() == "clip6");
  REQUIRE(clip.input_size() == 3);
  CHECK(clip.input(1).empty());
  const onnx::AttributeProto& alpha = g.node(1).attribute(0);
  CHECK(alpha.type() == onnx::AttributeProto::FLOAT);
  CHECK(alpha.f() == 0.25f);
  CHECK(g.node(2).attribute(0).type() == onnx::AttributeProto::INT);
}

TEST_CASE("the IR version is the oldest that holds the opset", "[frontend][export]") {
  auto ir_version = [](int opset) {
    Graph graph = parse_graph(fmt::format(R"(
graph g(%x: f32[2]) -> (%y: f32[2]) opset {} {{
  %y = Relu(%x) : f32[2]
  return %y
}})", opset));
    return exported_proto(graph).ir_version();
  };
  CHECK(ir_version(7) == 3);
  CHECK(ir_version(13) == 7);
  CHECK(ir_version(17) == 8);
  CHECK(ir_version(19) == 9);
  CHECK(ir_version(23) == 11);
  CHECK(ir_version(kMaxOpset) == kMaxIrVersion);
}

TEST_CASE("bodies read outer values by name; clashing body names get fresh ones",
          "[frontend][export]") {
  // Branch e defines %o, a name the outer graph has: in the file it is o_1. The outer
  // constant %k that branch t reads stays one initializer of the outer graph.
  Graph graph = parse_graph(R"(
graph g(%c: bool[], %x: f32[3]) -> (%y: f32[3], %z: f32[3]) opset 17 {
  %k = const f32[3] dense<[1.0, 2.0, 3.0]>
  %o = Neg(%x) : f32[3]
  %z = Add(%o, %k) : f32[3]
  %y = If(%c, %o) {captures=1, else_branch=graph e(%v: ?) -> (%o: ?) {
      %o = Abs(%v) : ?
      return %o
    }, then_branch=graph t(%v: ?) -> (%w: ?) {
      %k = const f32[3] dense<[1.0, 2.0, 3.0]>
      %w = Mul(%v, %k) : ?
      return %w
    }} : f32[3]
  return %y, %z
})");
  onnx::ModelProto model = exported_proto(graph);
  const onnx::NodeProto& node = model.graph().node(2);
  REQUIRE(node.op_type() == "If");
  CHECK(node.input_size() == 1);  // the captured %o is read by name inside
  CHECK(node.attribute_size() == 2);  // no `captures`
  const onnx::GraphProto& else_branch = node.attribute(0).g();
  CHECK(else_branch.input_size() == 0);
  CHECK(else_branch.node(0).input(0) == "o");
  CHECK(else_branch.node(0).output(0) == "o_1");
  CHECK(else_branch.output(0).name() == "o_1");
  const onnx::GraphProto& then_branch = node.attribute(1).g();
  CHECK(then_branch.initializer_size() == 0);
  CHECK(then_branch.node(0).input(1) == "k");

  Graph back = round_trip(graph);
  Tensor x = Tensor::from_vector<float>({3}, {1.0f, -2.0f, 3.0f});
  for (bool c : {false, true}) {
    std::vector<Tensor> inputs = {Tensor::scalar<bool>(c), x};
    std::vector<Tensor> expected = interpret(graph, inputs);
    std::vector<Tensor> actual = interpret(back, inputs);
    CHECK(actual[0].identical(expected[0]));
    CHECK(actual[1].identical(expected[1]));
  }
}

TEST_CASE("export refuses what ONNX cannot hold, naming the node and op", "[frontend][export]") {
  SECTION("a fused node, after the default pipeline") {
    Graph graph = import_onnx(MINIC_SOURCE_DIR "/examples/models/mlp.onnx");
    run_passes(graph, default_pipeline(), codegen::host_target());
    const Node* fused = nullptr;
    for (const Node* node : graph.nodes()) {
      if (node->is_fused() && !fused) fused = node;
    }
    REQUIRE(fused);
    std::string message = export_error(graph);
    CHECK_THAT(message, Contains(fused->describe() + ": a fused node"));
    CHECK_THAT(message, Contains("export the graph before fuse-ops"));
  }
  SECTION("an op of minic's own") {
    Graph graph = parse_graph(R"(
graph g(%x: f32[1,8,4,4]) -> (%y: f32[1,1,4,4,8]) opset 17 {
  %y = minic.ToNchwc(%x) : f32[1,1,4,4,8] @to_blocks
  return %y
})");
    CHECK_THAT(export_error(graph),
               Contains("minic.ToNchwc node 'to_blocks': op minic.ToNchwc is minic's own"));
  }
  SECTION("a graph without an opset") {
    Graph graph = parse_graph(R"(
graph g(%x: f32[2]) -> (%y: f32[2]) {
  %y = Relu(%x) : f32[2]
  return %y
})");
    CHECK_THAT(export_error(graph), Contains("graph 'g' has no opset"));
  }
}
