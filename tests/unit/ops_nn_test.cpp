// Unit tests for the neural-network ops: Conv, ConvTranspose, the pools, the
// normalisations and Resize. Small graphs whose results are worked out by hand in the
// comments. Course module 2.
#include "ops_test_util.h"

#include <cmath>

using namespace minic;
using namespace minic::test;

namespace {

const Tensor kImage3x3 = floats({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});

}  // namespace

// --- Conv, ConvTranspose ------------------------------------------------------------------------

TEST_CASE("Conv of one channel with a 3x3 kernel and padding 1 sums neighbourhoods",
          "[ops][conv]") {
  // With an all-ones kernel each output is the sum of the 3x3 neighbourhood that lies
  // inside the image, plus the bias 0.5.
  OneNode g(13, "Conv", {{DType::f32, {1, 1, 3, 3}}}, {{"pads", Shape{1, 1, 1, 1}}},
            {floats({1, 1, 3, 3}, std::vector<float>(9, 1.0f)), floats({1}, {0.5f})});
  Tensor y = g.run({kImage3x3});
  require_values(y, {1, 1, 3, 3},
                 {12.5, 21.5, 16.5, 27.5, 45.5, 33.5, 24.5, 39.5, 28.5});
}

TEST_CASE("Conv correlates: a kernel with a 1 right of centre reads the right neighbour",
          "[ops][conv]") {
  // Conv in ONNX is cross-correlation, not a flipped convolution: y[i][j] = x[i][j+1].
  Tensor kernel = floats({1, 1, 3, 3}, {0, 0, 0, 0, 0, 1, 0, 0, 0});
  OneNode g(13, "Conv", {{DType::f32, {1, 1, 3, 3}}},
            {{"pads", Shape{1, 1, 1, 1}}, {"kernel_shape", Shape{3, 3}}}, {kernel});
  require_values(g.run({kImage3x3}), {1, 1, 3, 3}, {2, 3, 0, 5, 6, 0, 8, 9, 0});
}

TEST_CASE("Conv in float16 computes through float", "[ops][conv]") {
  Tensor x = kImage3x3.cast(DType::f16);
  Tensor w = floats({1, 1, 3, 3}, std::vector<float>(9, 1.0f)).cast(DType::f16);
  OneNode g(13, "Conv", {{DType::f16, {1, 1, 3, 3}}}, {{"pads", Shape{1, 1, 1, 1}}}, {w});
  Tensor y = g.run({x});
  REQUIRE(y.dtype() == DType::f16);
  require_values(y, {1, 1, 3, 3}, {12, 21, 16, 27, 45, 33, 24, 39, 28});
}

TEST_CASE("grouped Conv sees only the input channels of its group", "[ops][conv]") {
  // 4 input channels in 2 groups of 2, one output channel per group, 1x1 kernels:
  //   y0 = 1 * x0 + 10 * x1          = [1 + 30, 2 + 40]
  //   y1 = 100 * x2 + 1000 * x3      = [500 + 7000, 600 + 8000]
  Tensor x = floats({1, 4, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor w = floats({2, 2, 1, 1}, {1, 10, 100, 1000});
  OneNode g(13, "Conv", {{DType::f32, {1, 4, 1, 2}}}, {{"group", int64_t{2}}}, {w});
  require_values(g.run({x}), {1, 2, 1, 2}, {31, 42, 7500, 8600});
}

TEST_CASE("1-d Conv with stride 2 and dilation 2", "[ops][conv]") {
  // The dilated kernel spans 3 elements; outputs floor((7 - 3) / 2) + 1 = 3, each
  // y[o] = x[2o] + x[2o + 2].
  Tensor x = floats({1, 1, 7}, {0, 1, 2, 3, 4, 5, 6});
  OneNode g(13, "Conv", {{DType::f32, {1, 1, 7}}},
            {{"strides", Shape{2}}, {"dilations", Shape{2}}}, {floats({1, 1, 2}, {1, 1})});
  require_values(g.run({x}), {1, 1, 3}, {2, 6, 10});
}

TEST_CASE("Conv with auto_pad SAME_UPPER keeps ceil(input / stride) outputs", "[ops][conv]") {
  OneNode g(13, "Conv", {{DType::f32, {1, 1, 5, 6}}},
            {{"auto_pad", std::string("SAME_UPPER")}, {"strides", Shape{2, 2}}},
            {floats({1, 1, 3, 3}, std::vector<float>(9, 1.0f))});
  REQUIRE(g.infer() == Shape{1, 1, 3, 3});
}

TEST_CASE("ConvTranspose scatters each input through the kernel", "[ops][conv]") {
  // Stride 2, kernel [1 1 1]: x0 = 1 writes 1 at 0..2, x1 = 2 writes 2 at 2..4.
  Tensor x = floats({1, 1, 2}, {1, 2});
  Tensor w = floats({1, 1, 3}, {1, 1, 1});
  OneNode full(13, "ConvTranspose", {{DType::f32, {1, 1, 2}}}, {{"strides", Shape{2}}}, {w});
  require_values(full.run({x}), {1, 1, 5}, {1, 1, 3, 2, 2});
  // Pads remove outputs from both ends.
  OneNode padded(13, "ConvTranspose", {{DType::f32, {1, 1, 2}}},
                 {{"strides", Shape{2}}, {"pads", Shape{1, 1}}}, {w});
  require_values(padded.run({x}), {1, 1, 3}, {1, 3, 2});
}

TEST_CASE("Conv whose W channels do not match X is an error naming the node",
          "[ops][conv][errors]") {
  OneNode g(13, "Conv", {{DType::f32, {1, 3, 5, 5}}, {DType::f32, {2, 2, 3, 3}}});
  REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("Conv node 'n'") &&
                                     Catch::Contains("input channels"));
}

TEST_CASE("Conv whose kernel is larger than the padded input is an error", "[ops][conv][errors]") {
  OneNode g(13, "Conv", {{DType::f32, {1, 1, 2, 2}}, {DType::f32, {1, 1, 3, 3}}});
  REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("Conv node 'n'") &&
                                     Catch::Contains("larger than the padded input"));
}

// --- pools --------------------------------------------------------------------------------------

TEST_CASE("MaxPool ceil_mode rounds the output count up", "[ops][pool]") {
  Attributes attributes = {{"kernel_shape", Shape{3, 3}}, {"strides", Shape{2, 2}}};
  OneNode floor_mode(13, "MaxPool", {{DType::f32, {1, 1, 4, 4}}}, attributes);
  REQUIRE(floor_mode.infer() == Shape{1, 1, 1, 1});  // floor((4 - 3) / 2) + 1
  attributes["ceil_mode"] = int64_t{1};
  OneNode ceil_mode(13, "MaxPool", {{DType::f32, {1, 1, 4, 4}}}, attributes);
  REQUIRE(ceil_mode.infer() == Shape{1, 1, 2, 2});  // ceil((4 - 3) / 2) + 1
}

TEST_CASE("MaxPool ceil_mode drops a last window that would start past the input",
          "[ops][pool]") {
  // ceil((2 - 1) / 2) + 1 = 2 windows, but the second would start at 2, outside the input.
  OneNode g(13, "MaxPool", {{DType::f32, {1, 1, 2, 2}}},
            {{"kernel_shape", Shape{1, 1}}, {"strides", Shape{2, 2}}, {"ceil_mode", int64_t{1}}});
  REQUIRE(g.infer() == Shape{1, 1, 1, 1});
}

TEST_CASE("MaxPool takes window maxima and reports where they were", "[ops][pool]") {
  // 4x4 image holding 1..16 row by row; 2x2 windows at stride 2.
  std::vector<float> values(16);
  for (int i = 0; i < 16; ++i) values[i] = static_cast<float>(i + 1);
  OneNode g(13, "MaxPool", {{DType::f32, {1, 1, 4, 4}}},
            {{"kernel_shape", Shape{2, 2}}, {"strides", Shape{2, 2}}}, {}, 2);
  std::vector<Tensor> outputs = g.run_all({floats({1, 1, 4, 4}, values)});
  require_values(outputs[0], {1, 1, 2, 2}, {6, 8, 14, 16});
  // Flat row-major indices of 6, 8, 14 and 16.
  require_values(outputs[1], {1, 1, 2, 2}, {5, 7, 13, 15});
}

TEST_CASE("AveragePool counts padding only with count_include_pad", "[ops][pool]") {
  // [[1 2] [3 4]] with 2x2 windows and padding 1 all round: 3x3 outputs. The corner
  // window holds only the 1; the centre window holds all four.
  Tensor x = floats({1, 1, 2, 2}, {1, 2, 3, 4});
  Attributes attributes = {{"kernel_shape", Shape{2, 2}}, {"pads", Shape{1, 1, 1, 1}}};
  OneNode excluded(13, "AveragePool", {{DType::f32, {1, 1, 2, 2}}}, attributes);
  require_values(excluded.run({x}), {1, 1, 3, 3}, {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4});
  attributes["count_include_pad"] = int64_t{1};
  OneNode included(13, "AveragePool", {{DType::f32, {1, 1, 2, 2}}}, attributes);
  require_values(included.run({x}), {1, 1, 3, 3},
                 {0.25, 0.75, 0.5, 1, 2.5, 1.5, 0.75, 1.75, 1});
}

TEST_CASE("global pools reduce the whole spatial extent", "[ops][pool]") {
  Tensor x = floats({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -8});
  OneNode average(13, "GlobalAveragePool", {{DType::f32, {1, 2, 2, 2}}});
  require_values(average.run({x}), {1, 2, 1, 1}, {2.5, -3.5});
  OneNode maximum(13, "GlobalMaxPool", {{DType::f32, {1, 2, 2, 2}}});
  require_values(maximum.run({x}), {1, 2, 1, 1}, {4, -1});
}

TEST_CASE("MaxPool whose window is larger than the input is an error", "[ops][pool][errors]") {
  OneNode g(13, "MaxPool", {{DType::f32, {1, 1, 2, 2}}}, {{"kernel_shape", Shape{3, 3}}});
  REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("MaxPool node 'n'") &&
                                     Catch::Contains("larger than the padded input"));
}

// --- normalisation ------------------------------------------------------------------------------

TEST_CASE("LRN divides by the sum of squares over neighbouring channels", "[ops][norm]") {
  // Channels 1, 2, 3; alpha / size = 1, beta = 1, bias = 1: y = x / (1 + sum of squares).
  Tensor x = floats({1, 3, 1, 1}, {1, 2, 3});
  // size 3: channel c sums channels c-1..c+1.
  OneNode odd(13, "LRN", {{DType::f32, {1, 3, 1, 1}}},
              {{"size", int64_t{3}}, {"alpha", 3.0f}, {"beta", 1.0f}});
  require_values(odd.run({x}), {1, 3, 1, 1}, {1.0 / 6, 2.0 / 15, 3.0 / 14});
  // size 2: floor(1/2) = 0 channels before, ceil(1/2) = 1 after.
  OneNode even(13, "LRN", {{DType::f32, {1, 3, 1, 1}}},
               {{"size", int64_t{2}}, {"alpha", 2.0f}, {"beta", 1.0f}});
  require_values(even.run({x}), {1, 3, 1, 1}, {1.0 / 6, 2.0 / 14, 3.0 / 10});
}

TEST_CASE("BatchNormalization applies the running statistics per channel", "[ops][norm]") {
  // Channel 0: (x - 1) / sqrt(4) * 1 + 0; channel 1: (x - 3) / sqrt(0.25) * 2 + 1.
  OneNode g(15, "BatchNormalization", {{DType::f32, {1, 2, 1, 2}}}, {{"epsilon", 0.0f}},
            {floats({2}, {1, 2}), floats({2}, {0, 1}), floats({2}, {1, 3}),
             floats({2}, {4, 0.25f})});
  require_values(g.run({floats({1, 2, 1, 2}, {1, 2, 3, 4})}), {1, 2, 1, 2}, {0, 0.5, 1, 5});
}

TEST_CASE("BatchNormalization in training mode uses the batch's statistics", "[ops][norm]") {
  // Channel 0 holds 1, 2 (mean 1.5, variance 0.25), channel 1 holds 3, 4 (mean 3.5, 0.25):
  // y = (x - mean) / 0.5. With momentum 0.5 the running mean is 0.5 * 0 + 0.5 * batch mean
  // and the running variance 0.5 * 1 + 0.5 * 0.25.
  Tensor ones = floats({2}, {1, 1});
  Tensor zeros = floats({2}, {0, 0});
  OneNode g(15, "BatchNormalization", {{DType::f32, {1, 2, 1, 2}}},
            {{"training_mode", int64_t{1}}, {"epsilon", 0.0f}, {"momentum", 0.5f}},
            {ones, zeros, zeros, ones}, 3);
  auto outputs = g.run_all({floats({1, 2, 1, 2}, {1, 2, 3, 4})});
  require_values(outputs[0], {1, 2, 1, 2}, {-1, 1, -1, 1});
  require_values(outputs[1], {2}, {0.75, 1.75});
  require_values(outputs[2], {2}, {0.625, 0.625});
}

TEST_CASE("BatchNormalization's training outputs outside opset 14's form are errors",
          "[ops][norm][errors]") {
  Tensor ones = floats({2}, {1, 1});
  OneNode five(15, "BatchNormalization", {{DType::f32, {1, 2, 1, 2}}},
               {{"training_mode", int64_t{1}}}, {ones, ones, ones, ones}, 5);
  REQUIRE_THROWS_WITH(five.infer(), Catch::Contains("BatchNormalization node 'n'") &&
                                        Catch::Contains("training mode gives Y, running_mean"));
  OneNode old(9, "BatchNormalization", {{DType::f32, {1, 2, 1, 2}}}, {},
              {ones, ones, ones, ones}, 5);
  REQUIRE_THROWS_WITH(old.infer(), Catch::Contains("training mode from opset 14 only"));
}

TEST_CASE("InstanceNormalization standardises each channel of each sample", "[ops][norm]") {
  // [1 2 3 4]: mean 2.5, variance 1.25; y = (x - 2.5) / sqrt(1.25) * 2 + 1.
  OneNode g(13, "InstanceNormalization", {{DType::f32, {1, 1, 1, 4}}}, {{"epsilon", 0.0f}},
            {floats({1}, {2}), floats({1}, {1})});
  double s = 2 / std::sqrt(1.25);
  require_values(g.run({floats({1, 1, 1, 4}, {1, 2, 3, 4})}), {1, 1, 1, 4},
                 {1 - 1.5 * s, 1 - 0.5 * s, 1 + 0.5 * s, 1 + 1.5 * s});
}

TEST_CASE("LayerNormalization standardises rows and returns their statistics", "[ops][norm]") {
  // Rows [1 3] (mean 2, std 1) and [2 6] (mean 4, std 2) both standardise to [-1 1];
  // then scale [1 1] and bias [0 10].
  OneNode g(17, "LayerNormalization", {{DType::f32, {2, 2}}}, {{"epsilon", 0.0f}},
            {floats({2}, {1, 1}), floats({2}, {0, 10})}, 3);
  std::vector<Tensor> outputs = g.run_all({floats({2, 2}, {1, 3, 2, 6})});
  require_values(outputs[0], {2, 2}, {-1, 11, -1, 11});
  require_values(outputs[1], {2, 1}, {2, 4});
  require_values(outputs[2], {2, 1}, {1, 0.5});
}

// --- Resize -------------------------------------------------------------------------------------

TEST_CASE("Resize nearest 2x repeats each element", "[ops][resize]") {
  // half_pixel maps outputs 0..3 to -0.25, 0.25, 0.75, 1.25, which round to 0, 0, 1, 1.
  Tensor scales = floats({4}, {1, 1, 2, 2});
  OneNode g(13, "Resize", {{DType::f32, {1, 1, 2, 2}}}, {}, {floats({0}, {}), scales});
  // The empty roi is an omitted input.
  require_values(g.run({floats({1, 1, 2, 2}, {1, 2, 3, 4})}), {1, 1, 4, 4},
                 {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
}

TEST_CASE("Resize linear with align_corners interpolates between the end points",
          "[ops][resize]") {
  // sizes [1, 4] from [0 3]: outputs at 0, 1/3, 2/3, 1 of the way along.
  Graph graph;
  graph.opset = 13;
  Value* x = graph.add_input("x", {DType::f32, {1, 2}});
  Tensor sizes = Tensor::from_vector<int64_t>({2}, {1, 4});
  Node* node = graph.add_node("Resize",
                              {x, nullptr, nullptr, graph.add_constant("sizes", sizes)}, {"y"},
                              {{"mode", std::string("linear")},
                               {"coordinate_transformation_mode", std::string("align_corners")}},
                              "n");
  graph.add_output(node->output(0));
  infer_shapes(graph);
  Tensor y = interpret(graph, {floats({1, 2}, {0, 3})}).at(0);
  require_values(y, {1, 4}, {0, 1, 2, 3});
}

TEST_CASE("Resize needs exactly one of scales and sizes", "[ops][resize][errors]") {
  Tensor scales = floats({2}, {1, 2});
  Tensor sizes = Tensor::from_vector<int64_t>({2}, {1, 4});
  OneNode both(13, "Resize", {{DType::f32, {1, 2}}}, {}, {floats({0}, {}), scales, sizes});
  REQUIRE_THROWS_WITH(both.infer(), Catch::Contains("Resize node 'n'") &&
                                        Catch::Contains("only one"));
}

TEST_CASE("Resize with scales known only at run time explains the static shapes",
          "[ops][resize][errors]") {
  OneNode g(13, "Resize", {{DType::f32, {1, 2}}, {DType::f32, {0}}, {DType::f32, {2}}});
  REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("Resize node 'n'") &&
                                     Catch::Contains("static shapes"));
}
