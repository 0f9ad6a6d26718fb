// minic quantize's library (src/quantize): the parameters chosen from a range and from
// weights, worked out by hand; the percentile range; and quantize_graph on a small graph,
// run by the interpreter, against the float graph. Course module 7.
#include "minic/ir/graph/text.h"
#include "minic/ops/shape_inference.h"
#include "minic/quantize/quantize.h"
#include "minic/runtime/interpreter.h"

#include "../../src/quantize/calibrate.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

using namespace minic;

TEST_CASE("uint8 parameters hold 0 and cover the range", "[quantize]") {
  // [-1, 3]: scale 4 / 255, zero point round(1 / scale) = round(63.75) = 64.
  ActivationParameters p = uint8_parameters(-1.0, 3.0);
  CHECK(p.scale == Approx(4.0 / 255.0));
  CHECK(p.zero_point == 64);
  // [2, 5] is widened to [0, 5]: zero point 0. All zeros: scale 1.
  CHECK(uint8_parameters(2.0, 5.0).zero_point == 0);
  CHECK(uint8_parameters(2.0, 5.0).scale == Approx(5.0 / 255.0));
  CHECK(uint8_parameters(0.0, 0.0).scale == 1.0);
}

TEST_CASE("int8 weights are symmetric, per tensor or per channel", "[quantize]") {
  // Rows (axis 0) [0.5, -1.27] and [0.02, 0.013]. One scale, 1.27 / 127 = 0.01, leaves the
  // second row two levels (0.013 -> 1.3 -> 1); its own, 0.02 / 127, 127 (0.013 -> 82.55
  // -> 83).
  Tensor w = Tensor::from_vector<float>({2, 2}, {0.5f, -1.27f, 0.02f, 0.013f});
  QuantizedWeights per_tensor = quantize_weights(w, -1);
  REQUIRE(per_tensor.scales.size() == 1);
  CHECK(per_tensor.scales[0] == Approx(0.01));
  CHECK(per_tensor.values.to_int64_vector() == std::vector<int64_t>{50, -127, 2, 1});
  QuantizedWeights per_row = quantize_weights(w, 0);
  REQUIRE(per_row.scales.size() == 2);
  CHECK(per_row.scales[1] == Approx(0.02 / 127));
  CHECK(per_row.values.to_int64_vector() == std::vector<int64_t>{50, -127, 127, 83});
  CHECK(per_row.relative_error < per_tensor.relative_error);
}

TEST_CASE("the percentile range leaves outliers out; minmax keeps them", "[quantize]") {
  RangeObserver observer;
  std::vector<float> values(10000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 100) / 100.0f;
  values[17] = 1000.0f;  // one outlier
  observer.observe(Tensor::from_vector<float>({10000}, values));
  QuantizeOptions options;
  options.percentile = 99.9;
  options.method = "minmax";
  CHECK(observer.range(options).second == 1000.0);
  options.method = "percentile";
  auto [low, high] = observer.range(options);
  CHECK(low >= 0.0);
  CHECK(high < 1.0);
}

TEST_CASE("a calibration method is found by name, and an unknown one is an error naming "
          "those there are", "[quantize]") {
  for (const char* name : {"minmax", "percentile", "entropy"}) {
    CHECK(CalibrationRegistry::find(name) != nullptr);
  }
  CHECK(CalibrationRegistry::find("nonesuch") == nullptr);
  CHECK_THROWS_WITH(check_calibration_method("nonesuch"),
                    Catch::Contains("no calibration method 'nonesuch'") &&
                        Catch::Contains("entropy, minmax, percentile"));
  RangeObserver observer;
  observer.observe(Tensor::from_vector<float>({3}, {-1.0f, 0.5f, 2.0f}));
  QuantizeOptions options;
  options.method = "nonesuch";
  CHECK_THROWS_WITH(observer.range(options), Catch::Contains("no calibration method"));
}

TEST_CASE("quantize_graph writes QDQ around a Conv and a Gemm and keeps the outputs close",
          "[quantize]") {
  std::mt19937 random(5);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  std::string w, v;
  auto add = [&](std::string& text, int i) {
    text += fmt::format("{}{:.4f}", i ? ", " : "", normal(random));
  };
  for (int i = 0; i < 4 * 3 * 3 * 3; ++i) add(w, i);
  for (int i = 0; i < 4 * 6; ++i) add(v, i);
  Graph graph = parse_graph(fmt::format(R"(
    graph g(%x: f32[1,3,6,6]) -> (%y: f32[1,6]) opset 17 {{
      %w = const f32[4,3,3,3] dense<[{}]>
      %v = const f32[4,6] dense<[{}]>
      %c = Conv(%x, %w) {{pads=[1, 1, 1, 1]}}
      %r = Relu(%c)
      %p = GlobalAveragePool(%r)
      %f = Flatten(%p)
      %y = Gemm(%f, %v)
      return %y
    }})", w, v));
  infer_shapes(graph);
  std::normal_distribution<float> input(0.0f, 1.0f);
  auto random_set = [&] {
    Tensor x(DType::f32, {1, 3, 6, 6});
    for (float& value : x.values<float>()) value = input(random);
    return std::vector<Tensor>{x};
  };
  std::vector<std::vector<Tensor>> calibration;
  for (int i = 0; i < 8; ++i) calibration.push_back(random_set());
  GraphRunner run = [](const Graph& g, const std::vector<Tensor>& inputs) {
    return interpret(g, inputs);
  };
  QuantizeOptions options;
  options.per_channel = true;
  QuantizeResult result = quantize_graph(graph, calibration, options, run);
  CHECK(result.quantized_ops == 2);
  const std::string text = print_graph(*result.graph);
  CHECK(text.find("Conv(%x_dequantized, %w_dequantized)") != std::string::npos);
  CHECK(text.find("Gemm(%f_dequantized, %v_dequantized)") != std::string::npos);
  CHECK(text.find("DequantizeLinear(%w_quantized, %w_scale) {axis=0}") != std::string::npos);
  // Two activations and two weights, each with its error.
  REQUIRE(result.tensors.size() == 4);
  for (const QuantizedTensor& t : result.tensors) CHECK(t.relative_error < 0.05);
  for (int i = 0; i < 4; ++i) {
    std::vector<Tensor> inputs = random_set();
    std::vector<double> a = interpret(graph, inputs)[0].to_double_vector();
    std::vector<double> b = interpret(*result.graph, inputs)[0].to_double_vector();
    double dot = 0, na = 0, nb = 0;
    for (size_t k = 0; k < a.size(); ++k) {
      dot += a[k] * b[k];
      na += a[k] * a[k];
      nb += b[k] * b[k];
    }
    CHECK(dot / std::sqrt(na * nb) > 0.99);
  }
}

TEST_CASE("the entropy threshold clips a normal distribution's tails, not a uniform one",
          "[quantize]") {
  std::mt19937 random(9);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> bell(200000);
  for (float& x : bell) x = normal(random);
  double largest = 0;
  for (float x : bell) largest = std::max(largest, std::fabs(static_cast<double>(x)));
  const double bell_threshold = entropy_threshold(bell, 128);
  INFO("max |x| " << largest << ", threshold " << bell_threshold);
  CHECK(bell_threshold > 2.0);
  CHECK(bell_threshold < largest * 0.9);
  // Uniform values have no tail to clip: the threshold stays near the largest value.
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<float> flat(200000);
  for (float& x : flat) x = uniform(random);
  CHECK(entropy_threshold(flat, 256) > 0.95);
}

TEST_CASE("the entropy method leaves a ReLU's zeros out of its histogram", "[quantize]") {
  // Half zeros, half the positive side of a normal distribution: the zeros are exact in
  // every range, and the threshold is the positive values' own.
  std::mt19937 random(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> relu(60000);  // fewer than a run's samples: all kept
  std::vector<float> positive;
  for (float& x : relu) {
    x = std::max(0.0f, normal(random));
    if (x > 0) positive.push_back(x);
  }
  RangeObserver observer;
  observer.observe(Tensor::from_vector<float>({60000}, relu));
  QuantizeOptions options;
  options.method = "entropy";
  auto [low, high] = observer.range(options);
  CHECK(low == 0.0);
  CHECK(high == Approx(entropy_threshold(positive, 256)));
  // With the zeros in the first bin the threshold falls well inside the values' bulk.
  INFO("threshold with the zeros " << entropy_threshold(relu, 256) << ", without " << high);
  CHECK(high > 2.0);
  CHECK(entropy_threshold(relu, 256) < 0.5 * high);
}
