// Helpers for testing graph passes differentially: the same random inputs through the
// reference interpreter before and after a pass must give the same outputs.
#pragma once

#include "minic/ir/graph/text.h"
#include "minic/ir/graph/verifier.h"
#include "minic/ops/shape_inference.h"
#include "minic/runtime/compare.h"
#include "minic/runtime/interpreter.h"

#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <random>

namespace minic::testing {

// A graph from its text form, with types inferred and verified.
inline Graph graph_from_text(const std::string& text) {
  Graph graph = parse_graph(text, "<test>");
  infer_shapes(graph);
  verify_graph(graph);
  return graph;
}

// `%name = const f32[shape] dense<[...]>` (a line of a graph's text form) holding uniform
// values in [-1, 1) from `rng`: the random weights of a test graph.
inline std::string random_constant(const std::string& name, const Shape& shape,
                                   std::mt19937& rng) {
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<std::string> values;
  for (int64_t k = 0; k < num_elements(shape); ++k) values.push_back(fmt::format("{}", value(rng)));
  return fmt::format("  %{} = const f32[{}] dense<[{}]>\n", name, fmt::join(shape, ","),
                     fmt::join(values, ", "));
}

// How many top-level nodes of `graph` apply `op`.
inline int count_op(const Graph& graph, std::string_view op) {
  int count = 0;
  for (const Node* node : graph.nodes()) count += node->op == op ? 1 : 0;
  return count;
}

// Random inputs for every graph input: uniform [-2, 2) for floats, 0..3 for integers.
inline std::vector<Tensor> random_inputs(const Graph& graph, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  std::vector<Tensor> inputs;
  for (const Value* input : graph.inputs()) {
    Tensor tensor(input->type);
    visit_dtype(input->type.dtype, [&]<typename T>() {
      for (T& element : tensor.values<T>()) {
        if constexpr (std::is_same_v<T, bool>) {
          element = random() % 2 == 0;
        } else if constexpr (std::is_integral_v<T>) {
          element = static_cast<T>(random() % 4);
        } else {
          element = T(static_cast<compute_t<T>>(real(random)));
        }
      }
    });
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}

// Runs `pass` on `graph`, verifies the result, and checks that its outputs on random
// inputs agree with the outputs before the pass, within `tolerance`.
inline void check_pass_preserves_outputs(Graph& graph, const std::function<void(Graph&)>& pass,
                                         uint64_t seed = 1,
                                         Tolerance tolerance = Tolerance{1e-4, 1e-5}) {
  std::vector<Tensor> inputs = random_inputs(graph, seed);
  std::vector<Tensor> before = interpret(graph, inputs);
  pass(graph);
  verify_graph(graph);
  std::vector<Tensor> after = interpret(graph, inputs);
  REQUIRE(after.size() == before.size());
  for (size_t k = 0; k < before.size(); ++k) {
    TensorComparison comparison = compare_tensors(after[k], before[k], tolerance);
    INFO("output " << k << ": " << describe(comparison));
    CHECK(comparison.ok());
  }
}

// A case for a pass: a graph, how many nodes the pass must leave, and how many nodes of
// one op.
struct PassCase {
  std::string name;
  std::string text;
  int nodes_after;
  std::string op;
  int op_after;
};

// Runs `pass` on the case's graph: the outputs must stay (check_pass_preserves_outputs),
// the node counts must be the case's, and a second run must find nothing more to do.
inline void run_case(const PassCase& test, const std::function<void(Graph&)>& pass) {
  INFO(test.name);
  Graph graph = graph_from_text(test.text);
  check_pass_preserves_outputs(graph, pass);
  CHECK(static_cast<int>(graph.num_nodes()) == test.nodes_after);
  CHECK(count_op(graph, test.op) == test.op_after);
  std::string once = print_graph(graph);
  pass(graph);
  CHECK(print_graph(graph) == once);
}

}  // namespace minic::testing
