// What the op unit tests share: a graph of one node, tensors from value lists, and an
// element-by-element comparison. Course module 2.
#pragma once

#include "minic/ops/shape_inference.h"
#include "minic/runtime/interpreter.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace minic::test {

inline Tensor floats(Shape shape, std::vector<float> values) {
  return Tensor::from_vector<float>(std::move(shape), values);
}

inline Tensor int64s(Shape shape, std::vector<int64_t> values) {
  return Tensor::from_vector<int64_t>(std::move(shape), values);
}

// A graph of one node `op` (named "n") reading graph inputs of types `inputs`, then the
// constants `constants`, and defining `outputs` outputs (named y0, y1, ...).
struct OneNode {
  Graph graph;
  Node* node = nullptr;

  OneNode(int opset, const std::string& op, const std::vector<TensorType>& inputs,
          Attributes attributes = {}, const std::vector<Tensor>& constants = {},
          int outputs = 1) {
    graph.opset = opset;
    std::vector<Value*> args;
    for (size_t i = 0; i < inputs.size(); ++i) {
      args.push_back(graph.add_input("x" + std::to_string(i), inputs[i]));
    }
    for (size_t i = 0; i < constants.size(); ++i) {
      args.push_back(graph.add_constant("c" + std::to_string(i), constants[i]));
    }
    std::vector<std::string> names;
    for (int i = 0; i < outputs; ++i) names.push_back("y" + std::to_string(i));
    node = graph.add_node(op, args, names, std::move(attributes), "n");
    for (Value* output : node->outputs()) graph.add_output(output);
  }

  // Runs shape inference; returns output 0's shape.
  const Shape& infer() {
    infer_shapes(graph);
    return node->output(0)->type.shape;
  }

  std::vector<Tensor> run_all(const std::vector<Tensor>& inputs) {
    infer();
    return interpret(graph, inputs);
  }
  Tensor run(const std::vector<Tensor>& inputs) { return run_all(inputs).at(0); }
};

// `tensor` has `shape` and, element by element, the `expected` values within `tolerance`
// (infinities must match exactly).
inline void require_values(const Tensor& tensor, Shape shape,
                           const std::vector<double>& expected, double tolerance = 1e-5) {
  REQUIRE(tensor.shape() == shape);
  std::vector<double> actual = tensor.to_double_vector();
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO("element " << i);
    if (std::isinf(expected[i])) {
      REQUIRE(actual[i] == expected[i]);
    } else {
      REQUIRE(actual[i] == Approx(expected[i]).margin(tolerance));
    }
  }
}

}  // namespace minic::test
