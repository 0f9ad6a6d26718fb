// Unit tests for the elementwise ops (unary, activation, binary, variadic, Where, Cast):
// tiny graphs built by hand, run through shape inference and the reference interpreter, and
// checked against values computed by hand. Course module 2.
#include "minic/ops/shape_inference.h"
#include "minic/runtime/interpreter.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <optional>

using namespace minic;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Runs one `op` node on `inputs` (std::nullopt for an omitted optional input) and returns
// its single output.
Tensor run_op(const std::string& op, const std::vector<std::optional<Tensor>>& inputs,
              Attributes attributes = {}, int opset = 17) {
  Graph graph;
  graph.opset = opset;
  std::vector<Value*> node_inputs;
  std::vector<Tensor> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) {
      node_inputs.push_back(nullptr);
      continue;
    }
    node_inputs.push_back(graph.add_input("in" + std::to_string(i), inputs[i]->type()));
    values.push_back(*inputs[i]);
  }
  Node* node = graph.add_node(op, node_inputs, {"out"}, std::move(attributes));
  graph.add_output(node->output(0));
  infer_shapes(graph);
  return interpret(graph, values).at(0);
}

Tensor f32(Shape shape, std::vector<float> values) { return Tensor::from_vector(shape, values); }

// std::vector<bool> packs its bits, so bool tensors are made from an initializer list.
Tensor bools(Shape shape, std::initializer_list<bool> values) {
  return Tensor::from_values<bool>(shape, std::span<const bool>(values.begin(), values.size()));
}

template <typename T>
std::vector<T> values_of(const Tensor& tensor) {
  auto span = tensor.values<T>();
  return {span.begin(), span.end()};
}

}  // namespace

TEST_CASE("Add broadcasts a row against a matrix", "[ops][binary]") {
  Tensor sum = run_op("Add", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3}, {10, 20, 30})});
  REQUIRE(sum.shape() == Shape{2, 3});
  REQUIRE(values_of<float>(sum) == std::vector<float>{11, 22, 33, 14, 25, 36});

  // A column against a row: [2,1] + [1,3] -> [2,3].
  Tensor outer = run_op("Mul", {f32({2, 1}, {1, 2}), f32({1, 3}, {1, 10, 100})});
  REQUIRE(outer.shape() == Shape{2, 3});
  REQUIRE(values_of<float>(outer) == std::vector<float>{1, 10, 100, 2, 20, 200});
}

TEST_CASE("Add of shapes that do not broadcast is an error", "[ops][binary]") {
  REQUIRE_THROWS_AS(run_op("Add", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2}, {1, 2})}), Error);
  REQUIRE_THROWS_WITH(run_op("Add", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2}, {1, 2})}),
                      Catch::Contains("do not broadcast"));
  // Mixed element types are an error too.
  REQUIRE_THROWS_AS(
      run_op("Add", {f32({1}, {1}), Tensor::from_vector<int32_t>({1}, {1})}), Error);
}

TEST_CASE("integer Div truncates toward zero and gives 0 for x / 0", "[ops][binary]") {
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  Tensor x = Tensor::from_vector<int32_t>({6}, {-7, 7, -7, 7, 5, kMin});
  Tensor y = Tensor::from_vector<int32_t>({6}, {2, 2, -2, -2, 0, -1});
  REQUIRE(values_of<int32_t>(run_op("Div", {x, y})) ==
          std::vector<int32_t>{-3, 3, 3, -3, 0, kMin});
}

TEST_CASE("Mod follows the divisor's sign unless fmod=1", "[ops][binary]") {
  Tensor x = Tensor::from_vector<int64_t>({4}, {-7, 7, -7, 7});
  Tensor y = Tensor::from_vector<int64_t>({4}, {3, -3, 0, 3});
  REQUIRE(values_of<int64_t>(run_op("Mod", {x, y})) == std::vector<int64_t>{2, -2, 0, 1});
  REQUIRE(values_of<int64_t>(run_op("Mod", {x, y}, {{"fmod", int64_t{1}}})) ==
          std::vector<int64_t>{-1, 1, 0, 1});
  Tensor fx = f32({2}, {-7.5f, 7.5f});
  Tensor fy = f32({2}, {2, 2});
  REQUIRE(values_of<float>(run_op("Mod", {fx, fy}, {{"fmod", int64_t{1}}})) ==
          std::vector<float>{-1.5f, 1.5f});
}

TEST_CASE("integer arithmetic wraps around", "[ops][binary]") {
  Tensor a = Tensor::from_vector<uint8_t>({2}, {250, 3});
  Tensor b = Tensor::from_vector<uint8_t>({2}, {10, 5});
  REQUIRE(values_of<uint8_t>(run_op("Add", {a, b})) == std::vector<uint8_t>{4, 8});
  REQUIRE(values_of<uint8_t>(run_op("Sub", {a, b})) == std::vector<uint8_t>{240, 254});
  Tensor big = Tensor::from_vector<int32_t>({1}, {1 << 30});
  Tensor four = Tensor::from_vector<int32_t>({1}, {4});
  REQUIRE(values_of<int32_t>(run_op("Mul", {big, four})) == std::vector<int32_t>{0});
}

TEST_CASE("Pow takes a base and an exponent of different types", "[ops][binary]") {
  Tensor base = Tensor::from_vector<int32_t>({3}, {1, 2, 3});
  Tensor pow = run_op("Pow", {base, f32({3}, {4, 5, 0.5f})});
  REQUIRE(pow.dtype() == DType::i32);
  REQUIRE(values_of<int32_t>(pow) == std::vector<int32_t>{1, 32, 1});  // 3^0.5 truncates
  Tensor exponent = Tensor::from_vector<int64_t>({3}, {10, 3, -1});
  REQUIRE(values_of<int64_t>(run_op("Pow", {Tensor::from_vector<int64_t>({3}, {2, -3, 2}),
                                            exponent})) == std::vector<int64_t>{1024, -27, 0});
  Tensor float_pow = run_op("Pow", {f32({2}, {2, 9}), Tensor::from_vector<int64_t>({2}, {10, 2})});
  REQUIRE(float_pow.dtype() == DType::f32);
  REQUIRE(values_of<float>(float_pow) == std::vector<float>{1024, 81});
}

TEST_CASE("comparisons give bool", "[ops][binary]") {
  Tensor x = f32({4}, {1, 2, 3, kNaN});
  Tensor two = f32({}, {2});
  Tensor less = run_op("Less", {x, two});
  REQUIRE(less.dtype() == DType::boolean);
  REQUIRE(values_of<bool>(less) == std::vector<bool>{true, false, false, false});
  REQUIRE(values_of<bool>(run_op("GreaterOrEqual", {x, two})) ==
          std::vector<bool>{false, true, true, false});
  REQUIRE(values_of<bool>(run_op("Equal", {x, two})) ==
          std::vector<bool>{false, true, false, false});
  Tensor p = bools({4}, {true, true, false, false});
  Tensor q = bools({4}, {true, false, true, false});
  REQUIRE(values_of<bool>(run_op("Xor", {p, q})) == std::vector<bool>{false, true, true, false});
  REQUIRE_THROWS_AS(run_op("And", {x, x}), Error);
}

TEST_CASE("BitShift shifts unsigned integers", "[ops][binary]") {
  Tensor x = Tensor::from_vector<uint32_t>({3}, {16, 4, 1});
  Tensor y = Tensor::from_vector<uint32_t>({3}, {1, 2, 40});
  REQUIRE(values_of<uint32_t>(run_op("BitShift", {x, y}, {{"direction", std::string("RIGHT")}})) ==
          std::vector<uint32_t>{8, 1, 0});
  REQUIRE(values_of<uint32_t>(run_op("BitShift", {x, y}, {{"direction", std::string("LEFT")}})) ==
          std::vector<uint32_t>{32, 16, 0});
}

TEST_CASE("Max and Min propagate NaN and broadcast many inputs", "[ops][variadic]") {
  Tensor a = f32({3}, {1, kNaN, 3});
  Tensor b = f32({3}, {2, 2, kNaN});
  std::vector<float> max = values_of<float>(run_op("Max", {a, b}));
  REQUIRE(max[0] == 2);
  REQUIRE(std::isnan(max[1]));
  REQUIRE(std::isnan(max[2]));
  std::vector<float> min = values_of<float>(run_op("Min", {b, a}));
  REQUIRE(min[0] == 1);
  REQUIRE(std::isnan(min[1]));
  REQUIRE(std::isnan(min[2]));

  Tensor sum = run_op("Sum", {f32({2, 1}, {1, 2}), f32({3}, {10, 20, 30}), f32({}, {100})});
  REQUIRE(sum.shape() == Shape{2, 3});
  REQUIRE(values_of<float>(sum) == std::vector<float>{111, 121, 131, 112, 122, 132});
  REQUIRE(values_of<float>(run_op("Mean", {f32({2}, {1, 2}), f32({2}, {3, 7})})) ==
          std::vector<float>{2, 4.5f});
  Tensor ints = run_op("Max", {Tensor::from_vector<int8_t>({2}, {-5, 7}),
                               Tensor::from_vector<int8_t>({1}, {0})});
  REQUIRE(values_of<int8_t>(ints) == std::vector<int8_t>{0, 7});
}

TEST_CASE("Where picks from x or y, broadcasting all three", "[ops][where]") {
  Tensor condition = bools({2, 1}, {true, false});
  Tensor out = run_op("Where", {condition, f32({3}, {1, 2, 3}), f32({}, {-1})});
  REQUIRE(out.shape() == Shape{2, 3});
  REQUIRE(values_of<float>(out) == std::vector<float>{1, 2, 3, -1, -1, -1});
}

TEST_CASE("Clip with one bound leaves the other side open", "[ops][activation]") {
  Tensor x = f32({4}, {-5, 0.5f, 3, 100});
  REQUIRE(values_of<float>(run_op("Clip", {x, std::nullopt, f32({}, {2})})) ==
          std::vector<float>{-5, 0.5f, 2, 2});
  REQUIRE(values_of<float>(run_op("Clip", {x, f32({}, {0})})) ==
          std::vector<float>{0, 0.5f, 3, 100});
  // int8, both bounds; and min > max gives max everywhere, like numpy.clip.
  Tensor i = Tensor::from_vector<int8_t>({3}, {-100, 5, 100});
  REQUIRE(values_of<int8_t>(run_op("Clip", {i, Tensor::scalar<int8_t>(-10),
                                            Tensor::scalar<int8_t>(10)})) ==
          std::vector<int8_t>{-10, 5, 10});
  REQUIRE(values_of<float>(run_op("Clip", {x, f32({}, {3}), f32({}, {1})})) ==
          std::vector<float>{1, 1, 1, 1});
  // Opset 6 takes the bounds as attributes.
  REQUIRE(values_of<float>(run_op("Clip", {x}, {{"min", -1.0f}, {"max", 1.0f}}, 10)) ==
          std::vector<float>{-1, 0.5f, 1, 1});
}

TEST_CASE("activations match their formulas", "[ops][activation]") {
  Tensor x = f32({3}, {-2, 0, 1});
  REQUIRE(values_of<float>(run_op("LeakyRelu", {x}, {{"alpha", 0.5f}})) ==
          std::vector<float>{-1, 0, 1});
  // max(0, min(1, 0.2 x + 0.5)), with alpha = 0.2f.
  std::vector<float> hard_sigmoid = values_of<float>(run_op("HardSigmoid", {x}));
  REQUIRE(hard_sigmoid[0] == Approx(0.1f));
  REQUIRE(hard_sigmoid[1] == 0.5f);
  REQUIRE(hard_sigmoid[2] == Approx(0.7f));
  REQUIRE(values_of<float>(run_op("ThresholdedRelu", {x}, {{"alpha", 0.5f}})) ==
          std::vector<float>{0, 0, 1});
  std::vector<float> gelu = values_of<float>(run_op("Gelu", {x}, {}, 20));
  // 0.5 * x * (1 + erf(x / sqrt 2)): Gelu(1) = 0.841345, Gelu(-2) = -0.0455003.
  REQUIRE(gelu[0] == Approx(-0.0455003f).epsilon(1e-5));
  REQUIRE(gelu[2] == Approx(0.841345f).epsilon(1e-5));
  Tensor prelu = run_op("PRelu", {f32({2, 2}, {-1, 2, -3, 4}), f32({2}, {0.5f, 0.25f})});
  REQUIRE(values_of<float>(prelu) == std::vector<float>{-0.5f, 2, -1.5f, 4});
  REQUIRE_THROWS_AS(run_op("Gelu", {x}, {{"approximate", std::string("fast")}}, 20), Error);
}

TEST_CASE("unary ops: rounding, integers, NaN and infinity tests", "[ops][unary]") {
  Tensor halves = f32({6}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.6f});
  REQUIRE(values_of<float>(run_op("Round", {halves})) ==
          std::vector<float>{0, 2, 2, -0.0f, -2, 3});
  REQUIRE(values_of<float>(run_op("Ceil", {halves})) == std::vector<float>{1, 2, 3, -0.0f, -1, 3});
  Tensor ints = Tensor::from_vector<int8_t>({4}, {-128, -3, 0, 5});
  REQUIRE(values_of<int8_t>(run_op("Abs", {ints})) == std::vector<int8_t>{-128, 3, 0, 5});
  REQUIRE(values_of<int8_t>(run_op("Neg", {ints})) == std::vector<int8_t>{-128, 3, 0, -5});
  REQUIRE(values_of<int8_t>(run_op("Relu", {ints})) == std::vector<int8_t>{0, 0, 0, 5});
  REQUIRE(values_of<int8_t>(run_op("Sign", {ints})) == std::vector<int8_t>{-1, -1, 0, 1});
  REQUIRE_THROWS_WITH(run_op("Exp", {ints}), Catch::Contains("floating-point"));

  Tensor special = f32({4}, {kNaN, kInf, -kInf, 1});
  REQUIRE(values_of<bool>(run_op("IsNaN", {special})) ==
          std::vector<bool>{true, false, false, false});
  REQUIRE(values_of<bool>(run_op("IsInf", {special}, {{"detect_negative", int64_t{0}}})) ==
          std::vector<bool>{false, true, false, false});
  REQUIRE(values_of<float>(run_op("Sqrt", {f32({2}, {4, 9})})) == std::vector<float>{2, 3});
  // float16 goes through float: Exp(0) = 1 exactly.
  Tensor half = Tensor::from_vector<Half>({1}, {Half(0.0f)});
  REQUIRE(static_cast<float>(run_op("Exp", {half}).values<Half>()[0]) == 1.0f);
}

TEST_CASE("Cast rounds to nearest even when narrowing to float16", "[ops][cast]") {
  // 1 + 2^-11 lies halfway between the float16 values 1 and 1 + 2^-10: the even one is 1.
  // 1 + 3 * 2^-11 lies halfway between 1 + 2^-10 and 1 + 2^-9: the even one is 1 + 2^-9.
  Tensor x = f32({3}, {1 + std::ldexp(1.0f, -11), 1 + 3 * std::ldexp(1.0f, -11), 70000});
  Tensor half = run_op("Cast", {x}, {{"to", int64_t{10}}});
  REQUIRE(half.dtype() == DType::f16);
  REQUIRE(half.values<Half>()[0].bits == 0x3c00);
  REQUIRE(half.values<Half>()[1].bits == 0x3c02);
  REQUIRE(half.values<Half>()[2].bits == 0x7c00);  // beyond float16's range: infinity

  Tensor ints = run_op("Cast", {f32({3}, {-2.7f, 2.7f, kNaN})}, {{"to", int64_t{6}}});
  REQUIRE(values_of<int32_t>(ints) == std::vector<int32_t>{-2, 2, 0});
  Tensor like = run_op("CastLike", {f32({2}, {1.5f, 0}), bools({1}, {true})});
  REQUIRE(values_of<bool>(like) == std::vector<bool>{true, false});
  REQUIRE_THROWS_WITH(run_op("Cast", {x}, {{"to", int64_t{8}}}), Catch::Contains("STRING"));
  REQUIRE_THROWS_WITH(run_op("Cast", {x}, {{"to", int64_t{14}}}), Catch::Contains("COMPLEX64"));
}
