// Unit tests for the shape and data-movement ops: Reshape, Flatten, Squeeze, Unsqueeze,
// Transpose, Concat, Split, Slice, Gather, Expand, Tile, Shape, ConstantOfShape, Range,
// Pad, Trilu. Course module 2.
//
// Each test builds a small graph by hand, runs shape inference and the reference
// interpreter, and compares with values worked out by hand (or with numpy, noted where
// so).
#include "minic/ops/shape_inference.h"
#include "minic/runtime/interpreter.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>

using namespace minic;

namespace {

// An f32 tensor of `shape` holding 0, 1, 2, ...
Tensor iota(const Shape& shape) {
  std::vector<float> values(static_cast<size_t>(num_elements(shape)));
  std::iota(values.begin(), values.end(), 0.0f);
  return Tensor::from_vector<float>(shape, values);
}

Value* ints(Graph& graph, const std::string& name, const std::vector<int64_t>& values) {
  return graph.add_constant(
      name, Tensor::from_vector<int64_t>({static_cast<int64_t>(values.size())}, values));
}

std::vector<double> doubles(const Tensor& tensor) { return tensor.to_double_vector(); }

// A one-node graph: op(x, extra...) with x an f32 graph input of `shape`; returns the
// interpreter's outputs on iota(shape) after shape inference.
std::vector<Tensor> run_one(Graph& graph, const std::string& op, const Shape& shape,
                            std::vector<Value*> extra, Attributes attributes = {},
                            size_t outputs = 1) {
  Value* x = graph.add_input("x", {DType::f32, shape});
  extra.insert(extra.begin(), x);
  std::vector<std::string> names;
  for (size_t i = 0; i < outputs; ++i) names.push_back("y" + std::to_string(i));
  Node* node = graph.add_node(op, extra, names, std::move(attributes), "the_node");
  for (Value* output : node->outputs()) graph.add_output(output);
  infer_shapes(graph);
  return interpret(graph, {iota(shape)});
}

}  // namespace

TEST_CASE("Reshape copies a 0 dimension and infers the -1", "[ops][reshape]") {
  Graph graph;
  graph.opset = 14;
  auto y = run_one(graph, "Reshape", {2, 3, 4}, {ints(graph, "shape", {0, -1, 2})});
  REQUIRE(y[0].shape() == Shape{2, 6, 2});
  REQUIRE(doubles(y[0]) == doubles(iota({2, 3, 4})));
}

TEST_CASE("Reshape with allowzero keeps a 0 as an empty dimension", "[ops][reshape]") {
  Graph graph;
  graph.opset = 14;
  auto y = run_one(graph, "Reshape", {0, 3, 4}, {ints(graph, "shape", {3, 4, 0})},
                   {{"allowzero", int64_t{1}}});
  REQUIRE(y[0].shape() == Shape{3, 4, 0});
}

TEST_CASE("Reshape to a different element count is an error naming the node",
          "[ops][reshape]") {
  Graph graph;
  graph.opset = 14;
  REQUIRE_THROWS_WITH(run_one(graph, "Reshape", {2, 3}, {ints(graph, "shape", {4, -1})}),
                      Catch::Contains("the_node") && Catch::Contains("cannot reshape"));
  Graph graph2;
  graph2.opset = 14;
  REQUIRE_THROWS_WITH(run_one(graph2, "Reshape", {2, 3}, {ints(graph2, "shape", {4, 2})}),
                      Catch::Contains("Reshape") && Catch::Contains("6 elements"));
}

TEST_CASE("Flatten, Squeeze and Unsqueeze move dimensions around", "[ops][reshape]") {
  Graph flatten;
  flatten.opset = 13;
  REQUIRE(run_one(flatten, "Flatten", {2, 3, 4}, {}, {{"axis", int64_t{-1}}})[0].shape() ==
          Shape{6, 4});
  Graph squeeze;
  squeeze.opset = 13;
  REQUIRE(run_one(squeeze, "Squeeze", {1, 3, 1, 2}, {ints(squeeze, "axes", {-2})})[0].shape() ==
          Shape{1, 3, 2});
  Graph squeeze_all;
  squeeze_all.opset = 11;
  REQUIRE(run_one(squeeze_all, "Squeeze", {1, 3, 1, 2}, {})[0].shape() == Shape{3, 2});
  Graph unsqueeze;
  unsqueeze.opset = 11;  // axes as an attribute
  REQUIRE(run_one(unsqueeze, "Unsqueeze", {3, 4}, {}, {{"axes", std::vector<int64_t>{2, 0}}})[0]
              .shape() == Shape{1, 3, 1, 4});
  Graph bad;
  bad.opset = 13;
  REQUIRE_THROWS_WITH(run_one(bad, "Squeeze", {2, 3}, {ints(bad, "axes", {0})}),
                      Catch::Contains("its size is 2"));
}

TEST_CASE("Transpose permutes dimensions", "[ops][transpose]") {
  Graph graph;
  graph.opset = 13;
  auto y = run_one(graph, "Transpose", {2, 3}, {});  // default: reversed
  REQUIRE(y[0].shape() == Shape{3, 2});
  REQUIRE(doubles(y[0]) == std::vector<double>{0, 3, 1, 4, 2, 5});
}

TEST_CASE("Slice with negative steps walks backwards", "[ops][slice]") {
  // numpy: np.arange(12).reshape(3, 4)[2::-1, -1:0:-2] == [[11, 9], [7, 5], [3, 1]]
  Graph graph;
  graph.opset = 13;
  const int64_t int_min = std::numeric_limits<int64_t>::min();
  auto y = run_one(graph, "Slice", {3, 4},
                   {ints(graph, "starts", {2, -1}), ints(graph, "ends", {int_min, 0}),
                    ints(graph, "axes", {0, 1}), ints(graph, "steps", {-1, -2})});
  REQUIRE(y[0].shape() == Shape{3, 2});
  REQUIRE(doubles(y[0]) == std::vector<double>{11, 9, 7, 5, 3, 1});
}

TEST_CASE("Slice clamps out-of-range starts and ends", "[ops][slice]") {
  Graph graph;
  graph.opset = 13;
  const int64_t int_max = std::numeric_limits<int64_t>::max();
  auto y = run_one(graph, "Slice", {10},
                   {ints(graph, "starts", {-100}), ints(graph, "ends", {int_max}),
                    ints(graph, "axes", {0}), ints(graph, "steps", {4})});
  REQUIRE(doubles(y[0]) == std::vector<double>{0, 4, 8});
  Graph empty;
  empty.opset = 13;
  auto z = run_one(empty, "Slice", {10}, {ints(empty, "starts", {20}), ints(empty, "ends", {30})});
  REQUIRE(z[0].shape() == Shape{0});
}

TEST_CASE("Split: opset 13 takes sizes as an input, opset 18 num_outputs", "[ops][split]") {
  Graph v13;
  v13.opset = 13;
  auto a = run_one(v13, "Split", {7}, {ints(v13, "split", {2, 5})}, {}, 2);
  REQUIRE(doubles(a[0]) == std::vector<double>{0, 1});
  REQUIRE(doubles(a[1]) == std::vector<double>{2, 3, 4, 5, 6});

  // Opset 18: pieces of ceil(7 / 3) = 3, the last one smaller.
  Graph v18;
  v18.opset = 18;
  auto b = run_one(v18, "Split", {7}, {}, {{"num_outputs", int64_t{3}}}, 3);
  REQUIRE(doubles(b[0]) == std::vector<double>{0, 1, 2});
  REQUIRE(doubles(b[1]) == std::vector<double>{3, 4, 5});
  REQUIRE(doubles(b[2]) == std::vector<double>{6});

  // Without sizes the pieces must be equal.
  Graph uneven;
  uneven.opset = 13;
  REQUIRE_THROWS_WITH(run_one(uneven, "Split", {7}, {}, {}, 3),
                      Catch::Contains("3 equal pieces"));
}

TEST_CASE("Concat joins along an axis and Split along axis 1 undoes it", "[ops][concat]") {
  Graph graph;
  graph.opset = 13;
  Value* x = graph.add_input("x", {DType::f32, {2, 2}});
  Value* c = graph.add_constant("c", Tensor::from_vector<float>({2, 1}, {10, 20}));
  Node* concat = graph.add_node("Concat", {x, c}, {"y"}, {{"axis", int64_t{-1}}});
  Node* split = graph.add_node("Split", {concat->output(0), ints(graph, "sizes", {1, 2})},
                               {"p", "q"}, {{"axis", int64_t{1}}});
  graph.add_output(concat->output(0));
  graph.add_output(split->output(0));
  graph.add_output(split->output(1));
  infer_shapes(graph);
  auto y = interpret(graph, {iota({2, 2})});
  REQUIRE(doubles(y[0]) == std::vector<double>{0, 1, 10, 2, 3, 20});
  REQUIRE(doubles(y[1]) == std::vector<double>{0, 2});
  REQUIRE(doubles(y[2]) == std::vector<double>{1, 10, 3, 20});
}

TEST_CASE("Pad in reflect, edge and wrap modes", "[ops][pad]") {
  // numpy: np.pad(np.arange(6).reshape(2, 3), ((1, 1), (2, 0)), 'reflect')
  Graph reflect;
  reflect.opset = 13;
  auto a = run_one(reflect, "Pad", {2, 3}, {ints(reflect, "pads", {1, 2, 1, 0})},
                   {{"mode", std::string("reflect")}});
  REQUIRE(a[0].shape() == Shape{4, 5});
  REQUIRE(doubles(a[0]) == std::vector<double>{5, 4, 3, 4, 5, 2, 1, 0, 1, 2,
                                               5, 4, 3, 4, 5, 2, 1, 0, 1, 2});
  // numpy: np.pad([0, 1, 2], (4, 4), 'wrap') and np.pad([0, 1, 2], (2, 1), 'edge')
  Graph wrap;
  wrap.opset = 19;
  auto b = run_one(wrap, "Pad", {3}, {ints(wrap, "pads", {4, 4})}, {{"mode", std::string("wrap")}});
  REQUIRE(doubles(b[0]) == std::vector<double>{2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0});
  Graph edge;
  edge.opset = 19;
  auto c = run_one(edge, "Pad", {3}, {ints(edge, "pads", {2, 1})}, {{"mode", std::string("edge")}});
  REQUIRE(doubles(c[0]) == std::vector<double>{0, 0, 0, 1, 2, 2});
  // A negative pad crops first, then the rest reflects about the new edge (as in ONNX
  // Runtime): [0, 1, 2, 3, 4] cropped to [1, 2, 3, 4], then 2 reflected at the end.
  Graph crop;
  crop.opset = 19;
  auto d = run_one(crop, "Pad", {5}, {ints(crop, "pads", {-1, 2})},
                   {{"mode", std::string("reflect")}});
  REQUIRE(doubles(d[0]) == std::vector<double>{1, 2, 3, 4, 3, 2});
}

TEST_CASE("Pad with a constant value and negative pads that crop", "[ops][pad]") {
  Graph graph;
  graph.opset = 18;
  Value* value = graph.add_constant("value", Tensor::scalar<float>(-1.0f));
  auto y = run_one(graph, "Pad", {2, 3},
                   {ints(graph, "pads", {1, -1}), value, ints(graph, "axes", {1})});
  REQUIRE(y[0].shape() == Shape{2, 3});
  REQUIRE(doubles(y[0]) == std::vector<double>{-1, 0, 1, -1, 3, 4});
}

TEST_CASE("Gather takes slices along an axis, with negative indices", "[ops][gather]") {
  Graph graph;
  graph.opset = 13;
  Value* indices = graph.add_constant("i", Tensor::from_vector<int64_t>({2}, {-1, 0}));
  auto y = run_one(graph, "Gather", {2, 3}, {indices}, {{"axis", int64_t{1}}});
  REQUIRE(y[0].shape() == Shape{2, 2});
  REQUIRE(doubles(y[0]) == std::vector<double>{2, 0, 5, 3});
}

TEST_CASE("Gather with an index out of range is an error, not a crash", "[ops][gather]") {
  Graph graph;
  graph.opset = 13;
  Value* data = graph.add_input("data", {DType::f32, {3}});
  Value* indices = graph.add_input("indices", {DType::i64, {1}});
  Node* gather = graph.add_node("Gather", {data, indices}, {"y"}, {}, "pick");
  graph.add_output(gather->output(0));
  infer_shapes(graph);
  REQUIRE_THROWS_WITH(interpret(graph, {iota({3}), Tensor::from_vector<int64_t>({1}, {3})}),
                      Catch::Contains("pick") && Catch::Contains("out of range"));
  REQUIRE_THROWS_AS(interpret(graph, {iota({3}), Tensor::from_vector<int64_t>({1}, {-4})}),
                    Error);
  REQUIRE(doubles(interpret(graph, {iota({3}), Tensor::from_vector<int64_t>({1}, {-3})})[0]) ==
          std::vector<double>{0});
}

TEST_CASE("Expand broadcasts both ways and Tile repeats", "[ops][expand]") {
  Graph expand;
  expand.opset = 13;
  auto a = run_one(expand, "Expand", {3, 1}, {ints(expand, "shape", {2, 1, 2})});
  REQUIRE(a[0].shape() == Shape{2, 3, 2});
  REQUIRE(doubles(a[0]) == std::vector<double>{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2});
  Graph tile;
  tile.opset = 13;
  auto b = run_one(tile, "Tile", {2, 2}, {ints(tile, "repeats", {1, 2})});
  REQUIRE(b[0].shape() == Shape{2, 4});
  REQUIRE(doubles(b[0]) == std::vector<double>{0, 1, 0, 1, 2, 3, 2, 3});
}

TEST_CASE("Trilu keeps a triangle of the last two dimensions", "[ops][trilu]") {
  // numpy: np.triu(np.arange(12).reshape(3, 4), 1)
  Graph graph;
  graph.opset = 14;
  Value* k = graph.add_constant("k", Tensor::scalar<int64_t>(1));
  auto y = run_one(graph, "Trilu", {3, 4}, {k});
  REQUIRE(doubles(y[0]) == std::vector<double>{0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11});
  // numpy: np.tril(np.arange(12).reshape(3, 4), -1)
  Graph lower;
  lower.opset = 14;
  Value* k2 = lower.add_constant("k", Tensor::scalar<int64_t>(-1));
  auto z = run_one(lower, "Trilu", {3, 4}, {k2}, {{"upper", int64_t{0}}});
  REQUIRE(doubles(z[0]) == std::vector<double>{0, 0, 0, 0, 4, 0, 0, 0, 8, 9, 0, 0});
}

TEST_CASE("ConstantOfShape and Range make tensors from known values", "[ops][shape]") {
  Graph graph;
  graph.opset = 13;
  Node* fill = graph.add_node("ConstantOfShape", {ints(graph, "shape", {2, 3})}, {"f"},
                              {{"value", Tensor::from_vector<int32_t>({1}, {7})}});
  Node* range = graph.add_node("Range",
                               {graph.add_constant("start", Tensor::scalar<int32_t>(10)),
                                graph.add_constant("limit", Tensor::scalar<int32_t>(3)),
                                graph.add_constant("delta", Tensor::scalar<int32_t>(-3))},
                               {"r"});
  graph.add_output(fill->output(0));
  graph.add_output(range->output(0));
  infer_shapes(graph);
  REQUIRE(fill->output(0)->type == TensorType{DType::i32, {2, 3}});
  REQUIRE(range->output(0)->type == TensorType{DType::i32, {3}});
  auto y = interpret(graph, {});
  REQUIRE(doubles(y[0]) == std::vector<double>(6, 7.0));
  REQUIRE(doubles(y[1]) == std::vector<double>{10, 7, 4});
}

TEST_CASE("a Shape -> Gather -> Unsqueeze -> Concat chain makes Reshape's target known",
          "[ops][shape]") {
  // y = Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])): x kept as a matrix whose
  // rows are x's first dimension, however the exporter had written the sizes.
  Graph graph;
  graph.opset = 13;
  Value* x = graph.add_input("x", {DType::f32, {2, 3, 4}});
  Node* shape = graph.add_node("Shape", {x}, {"s"});
  Node* first = graph.add_node("Gather", {shape->output(0), graph.add_constant(
                                          "zero", Tensor::scalar<int64_t>(0))},
                               {"n"});
  Node* unsqueeze = graph.add_node("Unsqueeze", {first->output(0), ints(graph, "axes", {0})},
                                   {"n1"});
  Node* concat = graph.add_node("Concat", {unsqueeze->output(0), ints(graph, "rest", {-1})},
                                {"target"}, {{"axis", int64_t{0}}});
  Node* reshape = graph.add_node("Reshape", {x, concat->output(0)}, {"y"});
  graph.add_output(reshape->output(0));
  infer_shapes(graph);
  REQUIRE(shape->output(0)->type == TensorType{DType::i64, {3}});
  REQUIRE(first->output(0)->type == TensorType{DType::i64, {}});
  REQUIRE(concat->output(0)->type == TensorType{DType::i64, {2}});
  REQUIRE(reshape->output(0)->type == TensorType{DType::f32, {2, 12}});
  auto y = interpret(graph, {iota({2, 3, 4})});
  REQUIRE(y[0].shape() == Shape{2, 12});
  REQUIRE(doubles(y[0]) == doubles(iota({2, 3, 4})));
}

TEST_CASE("Shape with start and end takes a range of dimensions", "[ops][shape]") {
  Graph graph;
  graph.opset = 15;
  auto y = run_one(graph, "Shape", {3, 4, 5}, {}, {{"start", int64_t{-2}}, {"end", int64_t{10}}});
  REQUIRE(y[0].to_int64_vector() == std::vector<int64_t>{4, 5});
}

TEST_CASE("data movement works on any element type", "[ops][transpose]") {
  Graph graph;
  graph.opset = 13;
  Value* x = graph.add_input("x", {DType::f16, {2, 2}});
  Node* transpose =
      graph.add_node("Transpose", {x}, {"y"}, {{"perm", std::vector<int64_t>{1, 0}}});
  graph.add_output(transpose->output(0));
  infer_shapes(graph);
  Tensor input = Tensor::from_vector<float>({2, 2}, {1.5f, -2, 3, 0.25f}).cast(DType::f16);
  auto y = interpret(graph, {input});
  REQUIRE(y[0].dtype() == DType::f16);
  REQUIRE(doubles(y[0]) == std::vector<double>{1.5, 3, -2, 0.25});
}

TEST_CASE("a shape input that is not known is a clear static-shape error", "[ops][reshape]") {
  Graph graph;
  graph.opset = 13;
  Value* x = graph.add_input("x", {DType::f32, {6}});
  Value* target = graph.add_input("target", {DType::i64, {2}});
  graph.add_output(graph.add_node("Reshape", {x, target}, {"y"})->output(0));
  REQUIRE_THROWS_WITH(infer_shapes(graph), Catch::Contains("static shapes"));
}

TEST_CASE("a shape computed from a given input's value freezes that input, and only then",
          "[ops][shape]") {
  // y = Range(0, Add(n, 1), 1) with n a graph input: y's length is n + 1, so giving n's
  // value freezes n into a constant. z = Relu(x) reads x's value nowhere: x stays an input.
  Graph graph;
  graph.opset = 13;
  Value* n = graph.add_input("n", {DType::i64, {}});
  Value* x = graph.add_input("x", {DType::f32, {3}});
  Node* limit = graph.add_node("Add", {n, graph.add_constant("one", Tensor::scalar<int64_t>(1))},
                               {"limit"});
  Node* range = graph.add_node("Range",
                               {graph.add_constant("zero", Tensor::scalar<int64_t>(0)),
                                limit->output(0), graph.find_value("one")},
                               {"y"});
  Node* relu = graph.add_node("Relu", {x}, {"z"});
  graph.add_output(range->output(0));
  graph.add_output(relu->output(0));
  ShapeInferenceOptions options;
  options.input_value = [](const Value& input) -> std::optional<Tensor> {
    if (input.name() == "n") return Tensor::scalar<int64_t>(4);
    return Tensor::from_vector<float>({3}, std::vector<float>{1, -2, 3});
  };
  infer_shapes(graph, options);
  REQUIRE(range->output(0)->type == TensorType{DType::i64, {5}});
  REQUIRE(graph.find_value("n")->constant != nullptr);
  REQUIRE(graph.find_value("x")->constant == nullptr);
  REQUIRE(graph.is_graph_input(graph.find_value("x")));
}

TEST_CASE("bad arguments are errors naming the node", "[ops][slice]") {
  Graph zero_step;
  zero_step.opset = 13;
  REQUIRE_THROWS_WITH(run_one(zero_step, "Slice", {4},
                              {ints(zero_step, "starts", {0}), ints(zero_step, "ends", {4}),
                               ints(zero_step, "axes", {0}), ints(zero_step, "steps", {0})}),
                      Catch::Contains("the_node") && Catch::Contains("is 0"));
  Graph crop;
  crop.opset = 13;
  REQUIRE_THROWS_WITH(run_one(crop, "Pad", {3}, {ints(crop, "pads", {-2, -2})}),
                      Catch::Contains("crop more"));
  Graph perm;
  perm.opset = 13;
  REQUIRE_THROWS_WITH(
      run_one(perm, "Transpose", {2, 3}, {}, {{"perm", std::vector<int64_t>{0, 0}}}),
      Catch::Contains("not a permutation"));
  Graph range;
  range.opset = 13;
  range.add_node("Range",
                 {range.add_constant("start", Tensor::scalar<float>(0)),
                  range.add_constant("limit", Tensor::scalar<float>(NAN)),
                  range.add_constant("delta", Tensor::scalar<float>(1))},
                 {"r"});
  REQUIRE_THROWS_WITH(infer_shapes(range), Catch::Contains("not a number"));
}
