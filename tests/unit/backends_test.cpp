// External back ends (include/minic/backends/backend.h) and the toy NPU
// (src/backends/toy_npu/toy_npu.cpp): what the partitioner hands each back end, the
// compiled model with their steps beside minic's, the same outputs as the interpreter, and
// the NPU's simulated cycles equal to its estimate. Course module 6.
#include "minic/backends/backend.h"

#include "minic/driver/compile.h"
#include "minic/runtime/interpreter.h"

#include "driver_test_util.h"

#include <catch2/catch.hpp>

#include <regex>

using namespace minic;

namespace {

// An MLP layer with a bias and Relu (fused: the NPU's), a MatMul whose B is transposed by
// a Gemm attribute (the NPU's), a Softmax (minic's) and a Conv (minic's).
const char* const kGraph = R"(graph g(%x: f32[3,40], %w1: f32[40,20], %b1: f32[20], %w2: f32[33,20], %img: f32[1,2,6,6], %k: f32[4,2,3,3]) -> (%p: f32[3,33], %c: f32[1,4,4,4]) opset 17 {
  %h = Gemm(%x, %w1, %b1)
  %r = Relu(%h)
  %g = Gemm(%r, %w2) {transB = 1}
  %p = Softmax(%g) {axis = -1}
  %c = Conv(%img, %k)
  return %p, %c
})";

// The estimate of one run of each claimed kernel, from `minic inspect --partition`'s text.
int64_t estimated_cycles(const Partition& partition, const Graph& graph) {
  int64_t cycles = 0;
  for (const auto& [node, backend] : partition.claimed) {
    std::string text = partition.backends[backend]->describe(*node, graph.opset);
    std::smatch match;
    REQUIRE(std::regex_search(text, match, std::regex("^(\\d+) simulated cycles a run")));
    cycles += std::stoll(match[1]);
  }
  return cycles;
}

}  // namespace

TEST_CASE("the toy NPU takes the GEMMs, minic the rest, with the same results",
          "[backends]") {
  CompileOptions options;
  options.backends = {"toy-npu"};
  std::unique_ptr<CompiledModel> model = compile_model(testing::graph_from_text(kGraph), options);
  // Two GEMM kernels to the NPU; the Softmax and the Conv compiled by minic.
  CHECK(model->stats().backend_kernels.at("toy-npu") == 2);
  CHECK(model->stats().compiled_kernels == model->stats().kernels - 2);
  Graph reference = testing::graph_from_text(kGraph);
  std::vector<Tensor> inputs = testing::random_float_inputs(reference, 3);
  std::vector<Tensor> expected = interpret(reference, inputs);
  std::vector<runtime::StepProfile> profile;
  std::vector<Tensor> actual = model->run(inputs, &profile);
  for (size_t k = 0; k < expected.size(); ++k) {
    INFO("output " << k);
    CHECK(compare_tensors(actual[k], expected[k], {1e-4, 1e-5}).ok());
  }
  int npu_steps = 0;
  for (const runtime::StepProfile& step : profile) npu_steps += step.backend == "toy-npu";
  CHECK(npu_steps == 2);

  // The simulator counted, over two runs, twice the cycles the back end estimates.
  model->run(inputs);
  Graph optimized = testing::graph_from_text(kGraph);
  run_passes(optimized, default_pipeline(), codegen::host_target());
  Partition partition({"toy-npu"});
  partition.claim(optimized, codegen::host_target());
  REQUIRE(partition.claimed.size() == 2);
  const std::vector<std::string> reports = model->backend_reports();
  REQUIRE(reports.size() == 1);
  CHECK(reports[0] == fmt::format("toy-npu: 2 programs, {} cycles simulated so far",
                                  2 * estimated_cycles(partition, optimized)));
}

TEST_CASE("back ends are named, and claim nothing they cannot run", "[backends]") {
  CompileOptions options;
  options.backends = {"no-such-npu"};
  CHECK_THROWS_WITH(compile_model(testing::graph_from_text(kGraph), options),
                    Catch::Contains("unknown back end 'no-such-npu' (available: ") &&
                        Catch::Contains("toy-npu"));
  // A GEMM with alpha 2, or A transposed, is no job for the NPU; nor is a CUDA target's.
  const char* const scaled = R"(graph g(%x: f32[4,8], %w: f32[8,4]) -> (%y: f32[4,4], %z: f32[4,4]) opset 17 {
  %y = Gemm(%x, %w) {alpha = 2.0}
  %xt = Transpose(%x)
  %z = Gemm(%xt, %w) {transA = 1}
  return %y, %z
})";
  auto claimed = [](const char* text, const Target& target) {
    Graph graph = testing::graph_from_text(text);
    Partition partition({"toy-npu"});
    partition.claim(graph, target);
    return partition.claimed.size();
  };
  CHECK(claimed(scaled, codegen::host_target()) == 0);
  CHECK(claimed(kGraph, cuda_target("sm_90")) == 0);
  CHECK(claimed(kGraph, codegen::host_target()) == 2);
}

TEST_CASE("oneDNN takes convolutions and GEMMs with their epilogues, with the same results",
          "[backends]") {
  // Convolutions strided, padded, dilated and grouped, one with a residual Add and a Relu
  // (the sum and eltwise post-ops), and a Gemm with a transposed B and a Relu.
  const char* const text = R"(graph g(%x: f32[1,8,12,12], %w1: f32[16,8,3,3], %b1: f32[16], %w2: f32[16,4,3,3], %w3: f32[16,16,1,1], %r: f32[1,16,6,6], %a: f32[5,24], %w: f32[7,24]) -> (%y: f32[1,16,6,6], %z: f32[1,16,12,12], %m: f32[5,7]) opset 17 {
  %c1 = Conv(%x, %w1, %b1) {pads = [1, 1, 1, 1], strides = [2, 2]}
  %c2 = Conv(%c1, %w3)
  %s = Add(%c2, %r)
  %y = Relu(%s)
  %z = Conv(%x, %w2) {group = 2, dilations = [2, 2], pads = [2, 2, 2, 2]}
  %g = Gemm(%a, %w) {transB = 1}
  %m = Relu(%g)
  return %y, %z, %m
})";
  CompileOptions options;
  options.backends = {"onednn"};
  std::unique_ptr<CompiledModel> model = compile_model(testing::graph_from_text(text), options);
  CHECK(model->stats().backend_kernels.at("onednn") == 4);
  Graph reference = testing::graph_from_text(text);
  std::vector<Tensor> inputs = testing::random_float_inputs(reference, 4);
  std::vector<Tensor> expected = interpret(reference, inputs);
  std::vector<Tensor> actual = model->run(inputs);
  for (size_t k = 0; k < expected.size(); ++k) {
    INFO("output " << k);
    CHECK(compare_tensors(actual[k], expected[k], {1e-4, 1e-4}).ok());
  }
}
