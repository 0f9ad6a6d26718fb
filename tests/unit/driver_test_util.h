// What the compile_model tests share: random float inputs for a graph, to run it compiled
// and on the interpreter alike, and the comparison of the two. Course module 1.
#pragma once

#include "minic/driver/compile.h"
#include "minic/ir/graph/graph.h"
#include "minic/ir/loop/printer.h"
#include "minic/tensor/tensor.h"

#include "pass_test_util.h"

#include <memory>
#include <random>
#include <string>
#include <vector>

namespace minic::testing {

// One tensor per input of `graph` (all f32), uniform in [low, high), reproducible by
// `seed`.
inline std::vector<Tensor> random_float_inputs(const Graph& graph, unsigned seed,
                                               float low = -1.0f, float high = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(low, high);
  std::vector<Tensor> inputs;
  for (const Value* input : graph.inputs()) {
    Tensor tensor(input->type);
    for (float& x : tensor.values<float>()) x = value(rng);
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}

// Compiles the graph of `text` (`options`: the default pipeline, this machine) and runs it
// beside the interpreter on random_float_inputs(seed): every kernel compiled, every output
// within `tolerance`. Returns the compiled kernels as text.
inline std::string check_against_interpreter(const std::string& text,
                                             const CompileOptions& options = {},
                                             unsigned seed = 5,
                                             Tolerance tolerance = {1e-4, 1e-5}) {
  Graph reference = graph_from_text(text);
  std::vector<Tensor> inputs = random_float_inputs(reference, seed);
  std::vector<Tensor> expected = interpret(reference, inputs);
  std::unique_ptr<CompiledModel> model = compile_model(graph_from_text(text), options);
  CHECK(model->stats().compiled_kernels == model->stats().kernels);
  std::vector<Tensor> actual = model->run(inputs);
  REQUIRE(actual.size() == expected.size());
  for (size_t k = 0; k < actual.size(); ++k) {
    TensorComparison comparison = compare_tensors(actual[k], expected[k], tolerance);
    INFO("output " << k << ": " << describe(comparison));
    CHECK(comparison.ok());
  }
  return loop::print_module(model->kernels());
}

}  // namespace minic::testing
