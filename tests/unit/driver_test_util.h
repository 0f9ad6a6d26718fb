// What the compile_model tests share: random float inputs for a graph, to run it compiled
// and on the interpreter alike. Course module 1.
#pragma once

#include "minic/ir/graph/graph.h"
#include "minic/tensor/tensor.h"

#include <random>
#include <vector>

namespace minic::testing {

// One tensor per input of `graph` (all f32), uniform in [-1, 1), reproducible by `seed`.
inline std::vector<Tensor> random_float_inputs(const Graph& graph, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<Tensor> inputs;
  for (const Value* input : graph.inputs()) {
    Tensor tensor(input->type);
    for (float& x : tensor.values<float>()) x = value(rng);
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}

}  // namespace minic::testing
