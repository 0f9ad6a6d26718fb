// Tests of pretranspose-weights: the rewritten Gemm computes what it did, on random inputs.
// Course module 2.
#include "minic/passes/graph/pretranspose_weights.h"

#include "minic/ir/graph/text.h"
#include "minic/ops/shape_inference.h"
#include "minic/runtime/interpreter.h"

#include <catch2/catch.hpp>

#include <random>

using namespace minic;

TEST_CASE("pretranspose-weights keeps a Gemm's results and drops transB", "[passes]") {
  const std::string text = R"(graph g(%x: f32[3,5]) -> (%y: f32[3,4]) opset 17 {
  %w = const f32[4,5] dense<[1.0, -2.0, 0.5, 3.0, 1.5, 0.25, 2.0, -1.0, 0.0, 4.0,
                             -0.5, 1.0, 2.5, -3.0, 0.75, 1.25, -1.5, 3.5, 2.0, -0.25]>
  %b = const f32[4] dense<[0.1, 0.2, 0.3, 0.4]>
  %y = Gemm(%x, %w, %b) {transB=1, alpha=0.5}
  return %y
})";
  Graph before = parse_graph(text);
  infer_shapes(before);
  Graph after = parse_graph(text);
  infer_shapes(after);
  pretranspose_weights(after);
  const Node* gemm = after.nodes().at(0);
  CHECK(gemm->attributes.count("transB") == 0);
  CHECK(gemm->input(1)->constant->shape() == Shape{5, 4});

  std::mt19937 rng(3);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  Tensor x(DType::f32, {3, 5});
  for (float& v : x.values<float>()) v = value(rng);
  CHECK(interpret(after, {x}).at(0).identical(interpret(before, {x}).at(0)));
}
