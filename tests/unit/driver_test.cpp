// Tests of compile_model: whole graphs compiled with the default schedules must compute
// what the reference interpreter computes. The shapes are chosen so that the GEMM rule
// (register tile, packing, compact buffers) applies, and so that it does not. Two models
// with different thread counts run side by side; a node without a compute rule for its
// form runs its reference kernel, while an internal error in lowering stops the compile.
// Course module 8.
#include "minic/driver/compile.h"

#include "minic/ir/graph/text.h"
#include "minic/ir/loop/printer.h"
#include "minic/ops/shape_inference.h"
#include "minic/runtime/compare.h"
#include "minic/runtime/interpreter.h"
#include "minic/support/error.h"
#include "minic/support/file.h"

#include "driver_test_util.h"
#include "target_test_util.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <random>
#include <thread>

using namespace minic;

namespace {

Graph graph_from_text(const std::string& text) {
  Graph graph = parse_graph(text, "<driver test>");
  infer_shapes(graph);
  return graph;
}


}  // namespace

TEST_CASE("a MatMul tiled by the GEMM rule matches the interpreter", "[driver]") {
  const char* matmul = R"(graph g(%a: f32[64,48], %b: f32[48,96]) -> (%c: f32[64,96]) opset 17 {
  %c = MatMul(%a, %b)
  return %c
})";
  // The rule applied with the target's sizes (gemm_tile: the most multiply-adds per load
  // that the registers hold, in tiles of two or four vectors).
  // AVX2 (x86-64-v3, which every machine these tests run on has): a 3x32 accumulator tile
  // (4 vectors of 8: 12 registers) and a packed 48x32 panel of b (flattened).
  CompileOptions avx2;
  avx2.target = testing::avx2();
  std::string kernels = testing::check_against_interpreter(matmul, avx2);
  CHECK_THAT(kernels, Catch::Contains("alloc c_local: f32[96] local"));
  CHECK_THAT(kernels, Catch::Contains("alloc b_global: f32[1536]"));
  // AVX-512 (compiled, not run: this machine may lack it): 6x64 (4 vectors of 16: 24
  // registers; the last 32 columns a shorter tile), and a 48x64 panel.
  CompileOptions avx512;
  avx512.target = testing::avx512();
  std::string wide =
      loop::print_module(compile_model(graph_from_text(matmul), avx512)->kernels());
  CHECK_THAT(wide, Catch::Contains("alloc c_local: f32[384] local"));
  CHECK_THAT(wide, Catch::Contains("alloc b_global: f32[3072]"));
}

TEST_CASE("a batched MatMul with a bias and Relu epilogue matches the interpreter",
          "[driver]") {
  testing::check_against_interpreter(R"(graph g(%a: f32[2,16,40], %b: f32[40,32], %bias: f32[32]) -> (%y: f32[2,16,32]) opset 17 {
  %m = MatMul(%a, %b)
  %s = Add(%m, %bias)
  %y = Relu(%s)
  return %y
})");
}

TEST_CASE("convolutions, with and without the GEMM rule, match the interpreter", "[driver]") {
  // Output width 16 (the GEMM rule) and 7 (the reduction rule), with a pooling after.
  testing::check_against_interpreter(R"(graph g(%x: f32[1,3,18,18], %w: f32[8,3,3,3]) -> (%y: f32[1,8,16,16], %z: f32[1,8,8,8]) opset 17 {
  %y = Conv(%x, %w)
  %z = MaxPool(%y) {kernel_shape = [2, 2], strides = [2, 2]}
  return %y, %z
})");
  testing::check_against_interpreter(R"(graph g(%x: f32[1,4,9,9], %w: f32[6,4,3,3]) -> (%y: f32[1,6,7,7]) opset 17 {
  %y = Conv(%x, %w)
  return %y
})");
  // A pointwise convolution with a bias: a GEMM over the 12 x 12 flattened positions.
  std::string kernels = testing::check_against_interpreter(R"(graph g(%x: f32[1,8,12,12], %w: f32[16,8,1,1], %b: f32[16]) -> (%y: f32[1,16,12,12]) opset 17 {
  %y = Conv(%x, %w, %b)
  return %y
})");
  CHECK_THAT(kernels, Catch::Contains("local"));
  // Depthwise (stride 1 and 2) and grouped convolutions: implicit GEMMs over each group.
  testing::check_against_interpreter(R"(graph g(%x: f32[1,8,10,10], %dw: f32[8,1,3,3], %gw: f32[6,4,1,1]) -> (%a: f32[1,8,10,10], %b: f32[1,8,5,5], %c: f32[1,6,10,10]) opset 17 {
  %a = Conv(%x, %dw) {group = 8, pads = [1, 1, 1, 1]}
  %b = Conv(%x, %dw) {group = 8, pads = [1, 1, 1, 1], strides = [2, 2]}
  %c = Conv(%x, %gw) {group = 2}
  return %a, %b, %c
})");
}

TEST_CASE("every kernel runs on one thread and on several with the same results",
          "[driver]") {
  const std::string text = R"(graph g(%a: f32[128,64], %b: f32[64,64]) -> (%c: f32[128,64]) opset 17 {
  %m = MatMul(%a, %b)
  %c = Softmax(%m) {axis = 1}
  return %c
})";
  for (int threads : {1, 3}) {
    INFO(threads << " threads");
    CompileOptions options;
    options.threads = threads;
    testing::check_against_interpreter(text, options);
  }
}

TEST_CASE("two models with different thread counts run side by side in one process",
          "[driver]") {
  const std::string text = R"(graph g(%a: f32[96,64], %b: f32[64,64]) -> (%c: f32[96,64]) opset 17 {
  %m = MatMul(%a, %b)
  %c = Relu(%m)
  return %c
})";
  Graph reference = graph_from_text(text);
  std::vector<Tensor> inputs = testing::random_float_inputs(reference, 6);
  const Tensor expected = interpret(reference, inputs)[0];

  CompileOptions one_thread;
  one_thread.threads = 1;
  CompileOptions three_threads;
  three_threads.threads = 3;
  std::unique_ptr<CompiledModel> serial = compile_model(graph_from_text(text), one_thread);
  std::unique_ptr<CompiledModel> parallel = compile_model(graph_from_text(text), three_threads);
  // Each model's device owns its pool; compiling the second changed nothing of the first.
  CHECK(serial->device().describe() == "host CPU, 1 thread");
  CHECK(parallel->device().describe() == "host CPU, 3 threads");

  std::atomic<int> wrong{0};
  auto keep_running = [&](CompiledModel& model) {
    for (int run = 0; run < 20; ++run) {
      if (!compare_tensors(model.run(inputs)[0], expected, {1e-4, 1e-5}).ok()) ++wrong;
    }
  };
  std::thread first([&] { keep_running(*serial); });
  std::thread second([&] { keep_running(*parallel); });
  first.join();
  second.join();
  CHECK(wrong == 0);
}

TEST_CASE("a node without a compute rule for its form runs its reference kernel",
          "[driver]") {
  // Relu lowers; a Cast to float8 has no compute rule (NoComputeRule): the reference
  // kernel runs it, and the model still computes what the interpreter does. (Without
  // graph passes, so that the two stay two kernels.)
  const std::string text = read_file(MINIC_SOURCE_DIR "/tests/lit/lower/Inputs/no_rule.mgraph");
  Graph reference = graph_from_text(text);
  Tensor x(reference.inputs()[0]->type);
  std::vector<float> values = {-1.5f, 0.25f, 3.0f, -0.0f};
  std::copy(values.begin(), values.end(), x.values<float>().begin());
  CompileOptions options;
  options.graph_passes = {};
  std::unique_ptr<CompiledModel> model = compile_model(graph_from_text(text), options);
  CHECK(model->stats().kernels == 2);
  CHECK(model->stats().compiled_kernels == 1);
  CHECK(model->stats().reference_ops == std::vector<std::string>{"Cast"});
  std::vector<Tensor> actual = model->run({x});
  std::vector<Tensor> expected = interpret(reference, {x});
  REQUIRE(actual.size() == 1);
  CHECK(compare_tensors(actual[0], expected[0], {0, 0}).ok());
}

TEST_CASE("an internal error while lowering propagates, naming the node", "[driver]") {
  // Where's compute rule relies on its shape rule, which refuses a condition that is not
  // bool. Shape inference reports that as the user's error; a graph whose shapes were not
  // inferred (what no importer gives compile_model) reaches the rule, which then builds a
  // Select on f32: invalid loop IR, a broken invariant. That is no refusal to fall back
  // on: compile_model fails, naming the node, as an internal error.
  const char* const text = R"(graph g(%c: f32[4], %a: f32[4], %b: f32[4]) -> (%y: f32[4]) opset 17 {
  %y = Where(%c, %a, %b) : f32[4] @pick
  return %y
})";
  CHECK_THROWS_WITH(graph_from_text(text), Catch::Contains("Where needs a bool tensor"));
  CompileOptions options;
  options.graph_passes = {};
  CHECK_THROWS_AS(compile_model(parse_graph(text, "<driver test>"), options), InternalError);
  CHECK_THROWS_WITH(compile_model(parse_graph(text, "<driver test>"), options),
                    Catch::StartsWith("internal error (a bug in minic): lowering Where node "
                                      "'pick': invalid loop IR: Select on f32"));
}

TEST_CASE("Abs and Neg keep IEEE's sign of zero, compiled and interpreted", "[driver]") {
  // 1 / Neg(+0) is -inf and 1 / Abs(-0) is +inf: the sign of a zero shows in a quotient.
  const char* const text = R"(graph g(%x: f32[4], %one: f32[4]) -> (%n: f32[4], %a: f32[4]) opset 17 {
  %neg = Neg(%x)
  %abs = Abs(%x)
  %n = Div(%one, %neg)
  %a = Div(%one, %abs)
  return %n, %a
})";
  const std::vector<float> x = {0.0f, -0.0f, 1.5f, -2.0f};
  std::vector<float> by_neg, by_abs;
  for (float v : x) {
    by_neg.push_back(1.0f / -v);
    by_abs.push_back(1.0f / std::fabs(v));
  }
  std::vector<Tensor> inputs = {Tensor::from_vector<float>({4}, x),
                                Tensor::from_vector<float>({4}, {1, 1, 1, 1})};
  std::vector<Tensor> expected = {Tensor::from_vector<float>({4}, by_neg),
                                  Tensor::from_vector<float>({4}, by_abs)};
  std::vector<Tensor> interpreted = interpret(graph_from_text(text), inputs);
  std::vector<Tensor> compiled = compile_model(graph_from_text(text))->run(inputs);
  for (size_t k = 0; k < expected.size(); ++k) {
    INFO("output " << k);
    CHECK(compare_tensors(interpreted[k], expected[k], {0, 0}).ok());
    CHECK(compare_tensors(compiled[k], expected[k], {0, 0}).ok());
  }
}

TEST_CASE("kernels of one workload are compiled once, each step keeping its own name",
          "[driver]") {
  // Two MatMul + Relu of the same shapes with other weights: one workload, one function.
  const char* text = R"(graph g(%a: f32[8,32], %w1: f32[32,16], %w2: f32[32,16]) -> (%y1: f32[8,16], %y2: f32[8,16]) opset 17 {
  %m1 = MatMul(%a, %w1)
  %y1 = Relu(%m1)
  %m2 = MatMul(%a, %w2)
  %y2 = Relu(%m2)
  return %y1, %y2
})";
  testing::check_against_interpreter(text);
  std::unique_ptr<CompiledModel> model = compile_model(graph_from_text(text), {});
  CHECK(model->stats().compiled_kernels == 2);
  CHECK(model->stats().functions == 1);
  CHECK(model->kernels().functions.size() == 1);
  const std::vector<runtime::PlanStep>& steps = model->plan().steps;
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].kernel != steps[1].kernel);
  CHECK(steps[0].function == steps[0].kernel);
  CHECK(steps[1].function == steps[0].kernel);
}
