// Lowering every kernel of real models to loop IR, tested differentially. Course module 3.
//
//   - every ONNX backend node test that the reference interpreter passes
//     (tests/onnx/expected_pass.txt) and whose ops all have compute rules: each node
//     lowered, the functions run by the loop interpreter in graph order, the outputs
//     compared with ONNX's expected outputs at the conformance runner's tolerances;
//   - every kernel of the nine light models after the default pipeline: lowered,
//     verified, printed and parsed back to the same text; and, where the loop interpreter
//     can run it quickly (see kMaxBlockRuns), run on random inputs and compared with the
//     reference kernels of the same node.
// Small hand-made graphs are lower_test.cpp.
#include "lower_test_util.h"
#include "onnx_test_util.h"

#include "minic/frontend/onnx.h"
#include "minic/ops/compute.h"
#include "minic/passes/pass_manager.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unordered_map>

using namespace minic;
using namespace minic::testing;
namespace fs = std::filesystem;

namespace {

// The node tests the reference interpreter passes (tests/onnx/expected_pass.txt).
struct NodeCaseResult {
  bool lowered = false;  // false: an op has no compute rule
  std::string problem;   // empty when the outputs match
};

// One node test: import as the conformance runner does, lower every node, run them in
// order with the loop interpreter, compare the graph outputs.
NodeCaseResult run_node_case(const fs::path& folder) {
  NodeCaseResult result;
  const std::string model = (folder / "model.onnx").string();
  OnnxImportOptions options = node_case_import_options(folder);
  Graph graph = import_onnx(model, options);
  for (const Node* node : graph.nodes()) {
    if (!can_lower(*node)) return result;
  }
  result.lowered = true;
  try {
    std::unordered_map<const Value*, Tensor> values;
    for (const Value* input : graph.inputs()) values[input] = options.known_inputs.at(input->name());
    for (const Node* node : graph.nodes()) {
      loop::PrimFunc func;
      try {
        func = lower_node(*node, graph.opset, testing::avx512());
      } catch (const NoComputeRule&) {
        // A rule may refuse a form of its op (a Cast to float8): no rule for that form.
        result.lowered = false;
        return result;
      }
      std::string problem = round_trip_problem(func);
      if (problem.empty()) problem = region_problem(func);
      if (!problem.empty()) {
        result.problem = node->describe() + ": " + problem;
        return result;
      }
      std::vector<const Tensor*> inputs;
      for (const Value* input : node->inputs()) {
        inputs.push_back(!input            ? nullptr
                         : input->constant ? input->constant.get()
                                           : &values.at(input));
      }
      std::vector<Tensor> outputs = run_lowered(func, *node, inputs);
      for (size_t k = 0; k < outputs.size(); ++k) values[node->output(k)] = std::move(outputs[k]);
    }
    for (size_t k = 0; k < graph.outputs().size(); ++k) {
      fs::path file = folder / "test_data_set_0" / fmt::format("output_{}.pb", k);
      const Value* output = graph.outputs()[k];
      const Tensor& actual = output->constant ? *output->constant : values.at(output);
      TensorComparison comparison =
          compare_tensors(actual, read_tensor_proto(file.string()), Tolerance{1e-3, 1e-7});
      if (!comparison.ok()) {
        result.problem = fmt::format("output {}: {}", k, describe(comparison));
        return result;
      }
    }
  } catch (const Error& error) {
    result.problem = error.what();
  }
  return result;
}

}  // namespace

TEST_CASE("every ONNX node test with compute rules runs lowered", "[lower][onnx]") {
  fs::path root = fs::path(MINIC_ONNX_NODE_DIR);
  int lowered = 0;
  int without_rule = 0;
  std::vector<std::string> problems;
  for (const std::string& name : read_case_names(MINIC_SOURCE_DIR "/tests/onnx/expected_pass.txt")) {
    NodeCaseResult result = run_node_case(root / name);
    if (!result.lowered) {
      ++without_rule;
      continue;
    }
    ++lowered;
    if (!result.problem.empty()) problems.push_back(name + ": " + result.problem);
  }
  // The failures one a line, for reading when the check below fails.
  std::ofstream(fs::temp_directory_path() / "minic-lower-node-failures.txt")
      << fmt::format("{}\n", fmt::join(problems, "\n"));
  WARN(lowered << " node tests lowered and compared, " << without_rule
                << " have an op without a compute rule, " << problems.size() << " failed");
  CAPTURE(problems);
  CHECK(problems.empty());
  CHECK(lowered >= 400);
}

TEST_CASE("every kernel of the light models lowers, and the small ones run",
          "[lower][onnx][heavy]") {
  fs::path root = fs::path(MINIC_ONNX_LIGHT_DIR);
  ModelCounts total;
  std::vector<std::string> problems;
  for (const char* name : {"bvlc_alexnet", "densenet121", "inception_v1", "inception_v2",
                           "resnet50", "shufflenet", "squeezenet", "vgg19", "zfnet512"}) {
    Graph graph = import_onnx((root / fmt::format("light_{}.onnx", name)).string());
    run_passes(graph, default_pipeline(), codegen::host_target());
    ModelCounts counts = check_kernels(graph, name, problems);
    int seen = counts.kernels + static_cast<int>(problems.size());
    CHECK(seen >= static_cast<int>(graph.num_nodes()));
    total.kernels += counts.kernels;
    total.compared += counts.compared;
  }
  // The example MLP (examples/models), whose kernels are all small enough to run.
  Graph mlp = import_onnx(MINIC_SOURCE_DIR "/examples/models/mlp.onnx");
  run_passes(mlp, default_pipeline(), codegen::host_target());
  ModelCounts counts = check_kernels(mlp, "mlp", problems);
  CHECK(counts.compared == static_cast<int>(mlp.num_nodes()));
  WARN(total.kernels << " kernels of the light models lowered, verified and round-tripped; "
                     << total.compared << " of them run and compared");
  CAPTURE(problems);
  CHECK(problems.empty());
  CHECK(total.compared >= 200);
}
