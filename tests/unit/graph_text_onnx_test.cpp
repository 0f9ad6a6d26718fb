// The graph text form over real graphs: every ONNX backend node test that minic imports
// and every light model must print, parse back, print identically and verify.
// Course module 2.
#include "onnx_test_util.h"

#include "minic/frontend/onnx.h"
#include "minic/codegen/llvm.h"
#include "minic/ir/graph/text.h"
#include "minic/ir/graph/verifier.h"
#include "minic/ops/shape_inference.h"
#include "minic/passes/pass_manager.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

using namespace minic;
namespace fs = std::filesystem;

namespace {

// Empty if `graph` survives print → parse → print unchanged and verifies; else why not.
std::string round_trip_problem(const Graph& graph, const std::string& source) {
  try {
    verify_graph(graph);
    std::string text = print_graph(graph);
    Graph parsed = parse_graph(text, source);
    // Types are inferred again from the text alone (constants, fused bodies and all), so
    // the text says everything shape inference needs.
    infer_shapes(parsed);
    verify_graph(parsed);
    if (print_graph(parsed) != text) return "printing the parsed graph gives other text";
    return "";
  } catch (const Error& error) {
    return error.what();
  }
}

}  // namespace

TEST_CASE("ONNX node tests round-trip through the text form", "[graph_text][onnx]") {
  std::vector<fs::path> folders;
  for (const std::string& name : testing::read_case_names(MINIC_NODE_CASES)) {
    folders.push_back(fs::path(MINIC_ONNX_NODE_DIR) / name);
    REQUIRE(fs::exists(folders.back() / "model.onnx"));
  }

  int round_tripped = 0;
  int not_imported = 0;
  std::vector<std::string> problems;
  for (const fs::path& folder : folders) {
    std::string model = (folder / "model.onnx").string();
    Graph graph;
    try {
      graph = import_onnx(model, testing::node_case_import_options(folder));
    } catch (const Error&) {
      ++not_imported;  // an op or case minic does not support: not this test's concern
      continue;
    }
    std::string problem = round_trip_problem(graph, folder.filename().string());
    if (problem.empty()) {
      ++round_tripped;
    } else {
      problems.push_back(folder.filename().string() + ": " + problem);
    }
  }
  INFO(round_tripped << " round-tripped, " << not_imported << " not imported");
  CAPTURE(problems);
  REQUIRE(problems.empty());
  REQUIRE(round_tripped >= 550);
}

TEST_CASE("the light models round-trip through the text form", "[graph_text][onnx]") {
  fs::path root = fs::path(MINIC_ONNX_LIGHT_DIR);
  for (const char* name : {"bvlc_alexnet", "densenet121", "inception_v1", "inception_v2",
                           "resnet50", "shufflenet", "squeezenet", "vgg19", "zfnet512"}) {
    INFO(name);
    Graph graph = import_onnx((root / fmt::format("light_{}.onnx", name)).string());
    REQUIRE(round_trip_problem(graph, name).empty());
  }
}

TEST_CASE("the light models round-trip after the default pipeline", "[graph_text][onnx]") {
  fs::path root = fs::path(MINIC_ONNX_LIGHT_DIR);
  for (const char* name : {"bvlc_alexnet", "densenet121", "inception_v1", "inception_v2",
                           "resnet50", "shufflenet", "squeezenet", "vgg19", "zfnet512"}) {
    INFO(name);
    Graph graph = import_onnx((root / fmt::format("light_{}.onnx", name)).string());
    run_passes(graph, default_pipeline(), codegen::host_target());
    REQUIRE(round_trip_problem(graph, name).empty());
  }
}
