// Unit tests for the quantisation ops (src/ops/quantize.cpp, src/ops/quantized_linear.cpp):
// rounding and saturation worked out by hand, the three granularities, the errors for bad
// inputs, the QLinear ops against dequantise -> float op -> quantise, and the compute rules
// of QuantizeLinear and DequantizeLinear against their reference kernels on random inputs.
// Course module 7. (ONNX's own 45 node tests for these ops run in tests/onnx.)
#include "lower_test_util.h"
#include "ops_test_util.h"

#include "minic/driver/compile.h"
#include "minic/ir/graph/text.h"

#include <random>

using namespace minic;
using namespace minic::test;

namespace {

Tensor uint8s(Shape shape, std::vector<uint8_t> values) {
  return Tensor::from_vector<uint8_t>(std::move(shape), values);
}
Tensor int8s(Shape shape, std::vector<int8_t> values) {
  return Tensor::from_vector<int8_t>(std::move(shape), values);
}
Tensor int32s(Shape shape, std::vector<int32_t> values) {
  return Tensor::from_vector<int32_t>(std::move(shape), values);
}

// Random bytes of `type` (i8 or u8) and `shape`.
Tensor random_bytes(DType type, Shape shape, std::mt19937& random) {
  Tensor values(DType::i64, std::move(shape));
  std::uniform_int_distribution<int64_t> pick(type == DType::u8 ? 0 : -128,
                                              type == DType::u8 ? 255 : 127);
  for (int64_t& value : values.values<int64_t>()) value = pick(random);
  return values.cast(type);
}

// `count` random int8 values (the whole range), comma-separated: a constant's dense<[...]>.
std::string random_int8_list(int64_t count, std::mt19937& random) {
  std::uniform_int_distribution<int> pick(-128, 127);
  std::string text;
  for (int64_t i = 0; i < count; ++i) text += fmt::format("{}{}", i ? ", " : "", pick(random));
  return text;
}

// The largest |a - b| over the elements of two tensors of one shape.
double max_difference(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  double worst = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    worst = std::max(worst, std::abs(a.as_double(i) - b.as_double(i)));
  }
  return worst;
}

}  // namespace

// --- QuantizeLinear and DequantizeLinear -----------------------------------------------------

TEST_CASE("QuantizeLinear rounds halves to even and saturates", "[ops][quantize]") {
  SECTION("uint8, zero point 0") {
    // x / 0.5: 0.25 -> 0.5 -> 0; 0.75 -> 1.5 -> 2; 1.25 -> 2.5 -> 2; 200 -> 400 -> 255;
    // -1 -> -2 -> 0.
    OneNode g(21, "QuantizeLinear", {{DType::f32, {5}}}, {},
              {Tensor::scalar(0.5f), Tensor::scalar(uint8_t{0})});
    Tensor y = g.run({floats({5}, {0.25f, 0.75f, 1.25f, 200.0f, -1.0f})});
    REQUIRE(y.dtype() == DType::u8);
    require_values(y, {5}, {0, 2, 2, 255, 0});
  }
  SECTION("int8, zero point -3") {
    // round(x / 1) - 3: -2.5 -> -2 - 3 = -5; 3.5 -> 4 - 3 = 1; -200 -> -128; 200 -> 127.
    OneNode g(21, "QuantizeLinear", {{DType::f32, {4}}}, {},
              {Tensor::scalar(1.0f), Tensor::scalar(int8_t{-3})});
    require_values(g.run({floats({4}, {-2.5f, 3.5f, -200.0f, 200.0f})}), {4},
                   {-5, 1, -128, 127});
  }
  SECTION("no zero point gives uint8, output_dtype another type") {
    OneNode plain(21, "QuantizeLinear", {{DType::f32, {2}}}, {}, {Tensor::scalar(2.0f)});
    Tensor y = plain.run({floats({2}, {3.0f, -3.0f})});
    REQUIRE(y.dtype() == DType::u8);
    require_values(y, {2}, {2, 0});  // 1.5 -> 2; -1.5 -> -2 -> 0
    OneNode wide(21, "QuantizeLinear", {{DType::f32, {2}}}, {{"output_dtype", int64_t{5}}},
                 {Tensor::scalar(2.0f)});
    Tensor z = wide.run({floats({2}, {3.0f, -70000.0f})});
    REQUIRE(z.dtype() == DType::i16);
    require_values(z, {2}, {2, -32768});
  }
}

TEST_CASE("QuantizeLinear and DequantizeLinear per axis and in blocks", "[ops][quantize]") {
  SECTION("per axis: one scale and zero point per channel") {
    // x [2, 3], axis 1: column j uses scale[j], zero[j].
    Tensor scale = floats({3}, {1.0f, 0.5f, 0.25f});
    Tensor zero = uint8s({3}, {10, 20, 30});
    OneNode q(21, "QuantizeLinear", {{DType::f32, {2, 3}}}, {{"axis", int64_t{1}}},
              {scale, zero});
    Tensor y = q.run({floats({2, 3}, {1, 1, 1, -1, -1, -1})});
    require_values(y, {2, 3}, {11, 22, 34, 9, 18, 26});
    OneNode dq(21, "DequantizeLinear", {{DType::u8, {2, 3}}}, {{"axis", int64_t{1}}},
               {scale, zero});
    require_values(dq.run({y}), {2, 3}, {1, 1, 1, -1, -1, -1});
  }
  SECTION("blocks of 2 along axis 0, the last block short") {
    // x [5]: elements 0-1 use scale 1, 2-3 scale 2, 4 scale 4.
    OneNode dq(21, "DequantizeLinear", {{DType::i8, {5}}},
               {{"axis", int64_t{0}}, {"block_size", int64_t{2}}},
               {floats({3}, {1.0f, 2.0f, 4.0f})});
    require_values(dq.run({int8s({5}, {1, -1, 1, -1, 3})}), {5}, {1, -1, 2, -2, 12});
  }
  SECTION("int32 dequantises without a zero point") {
    OneNode dq(21, "DequantizeLinear", {{DType::i32, {2}}}, {}, {Tensor::scalar(0.5f)});
    require_values(dq.run({int32s({2}, {-7, 1000000})}), {2}, {-3.5, 500000});
  }
}

TEST_CASE("DequantizeLinear of QuantizeLinear is within half a step of x", "[ops][quantize]") {
  // For x inside the representable range [(0 - zero) * scale, (255 - zero) * scale].
  const float scale = 0.037f;
  const uint8_t zero = 100;
  Graph graph = parse_graph(R"(
    graph round_trip(%x: f32[64]) -> (%y: f32[64]) opset 21 {
      %s = const f32[] dense<[0.037]>
      %z = const u8[] dense<[100]>
      %q = QuantizeLinear(%x, %s, %z)
      %y = DequantizeLinear(%q, %s, %z)
      return %y
    })");
  infer_shapes(graph);
  std::mt19937 random(3);
  std::uniform_real_distribution<float> pick(-zero * scale, (255 - zero) * scale);
  std::vector<float> values(64);
  for (float& value : values) value = pick(random);
  Tensor x = floats({64}, values);
  Tensor y = interpret(graph, {x}).at(0);
  REQUIRE(max_difference(x, y) <= scale / 2 * 1.0001);
}

TEST_CASE("the quantisation ops refuse bad scales and types", "[ops][quantize]") {
  SECTION("a per-axis scale of the wrong length") {
    OneNode g(21, "QuantizeLinear", {{DType::f32, {2, 3}}}, {}, {floats({2}, {1, 1})});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("per-axis quantisation along axis 1") &&
                                       Catch::Contains("needs a vector of 3"));
  }
  SECTION("a blocked scale of the wrong shape") {
    OneNode g(21, "DequantizeLinear", {{DType::u8, {2, 6}}},
              {{"axis", int64_t{1}}, {"block_size", int64_t{4}}},
              {floats({2, 3}, {1, 1, 1, 1, 1, 1})});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("need a scale of shape [2,2]"));
  }
  SECTION("output_dtype and the zero point disagree") {
    OneNode g(21, "QuantizeLinear", {{DType::f32, {2}}}, {{"output_dtype", int64_t{3}}},
              {Tensor::scalar(1.0f), Tensor::scalar(uint8_t{0})});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("output_dtype is i8 but y_zero_point is u8"));
  }
  SECTION("a float output") {
    OneNode g(21, "QuantizeLinear", {{DType::f32, {2}}}, {{"output_dtype", int64_t{1}}},
              {Tensor::scalar(1.0f)});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("quantises to f32"));
  }
  SECTION("a zero point of another type than x") {
    OneNode g(21, "DequantizeLinear", {{DType::u8, {2}}}, {},
              {Tensor::scalar(1.0f), Tensor::scalar(int8_t{0})});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("x_zero_point is i8 but x is u8"));
  }
  SECTION("QLinearConv with a float bias") {
    OneNode g(10, "QLinearConv", {{DType::u8, {1, 1, 3, 3}}}, {},
              {Tensor::scalar(1.0f), Tensor::scalar(uint8_t{0}),
               Tensor(DType::u8, {1, 1, 1, 1}), Tensor::scalar(1.0f),
               Tensor::scalar(uint8_t{0}), Tensor::scalar(1.0f), Tensor::scalar(uint8_t{0}),
               floats({1}, {0.0f})});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("B is f32[1]; it must be int32"));
  }
}

// --- the integer products --------------------------------------------------------------------

TEST_CASE("MatMulInteger subtracts per-row and per-column zero points", "[ops][quantize]") {
  // A [2, 2] u8 with row zero points [1, 2]; B [2, 2] i8 with column zero points [0, -1].
  //   A - za = [[9, 0], [1, 3]]    B - zb = [[1, 3], [-2, 1]]
  //   product = [[9, 27], [-5, 6]]
  OneNode g(10, "MatMulInteger", {{DType::u8, {2, 2}}, {DType::i8, {2, 2}}}, {},
            {uint8s({2}, {1, 2}), int8s({2}, {0, -1})});
  Tensor y = g.run({uint8s({2, 2}, {10, 1, 3, 5}), int8s({2, 2}, {1, 2, -2, 0})});
  REQUIRE(y.dtype() == DType::i32);
  require_values(y, {2, 2}, {9, 27, -5, 6});
}

TEST_CASE("QLinearMatMul and QLinearConv agree with dequantise, float op, quantise",
          "[ops][quantize]") {
  // The real product of the dequantised operands, quantised, differs from the integer path
  // only where float rounding moves a value across a rounding boundary: by at most one step.
  std::mt19937 random(11);
  SECTION("QLinearMatMul, int8 x uint8, per-column b") {
    Graph graph = parse_graph(R"(
      graph qmm(%a: i8[3,16], %b: u8[16,4]) -> (%q: u8[3,4], %f: u8[3,4]) opset 21 {
        %sa = const f32[] dense<[0.02]>
        %za = const i8[] dense<[-5]>
        %sb = const f32[4] dense<[0.01, 0.03, 0.005, 0.02]>
        %zb = const u8[4] dense<[128, 120, 130, 125]>
        %sy = const f32[] dense<[0.05]>
        %zy = const u8[] dense<[128]>
        %q = QLinearMatMul(%a, %sa, %za, %b, %sb, %zb, %sy, %zy)
        %da = DequantizeLinear(%a, %sa, %za)
        %db = DequantizeLinear(%b, %sb, %zb) {axis=1}
        %m = MatMul(%da, %db)
        %f = QuantizeLinear(%m, %sy, %zy)
        return %q, %f
      })");
    infer_shapes(graph);
    std::vector<Tensor> out = interpret(graph, {random_bytes(DType::i8, {3, 16}, random),
                                                random_bytes(DType::u8, {16, 4}, random)});
    REQUIRE(max_difference(out[0], out[1]) <= 1);
  }
  SECTION("QLinearConv, uint8 x int8, per-channel w, with a bias") {
    Graph graph = parse_graph(R"(
      graph qconv(%x: u8[1,2,5,5], %w: i8[3,2,3,3]) ->
          (%q: i8[1,3,3,3], %f: i8[1,3,3,3]) opset 21 {
        %sx = const f32[] dense<[0.1]>
        %zx = const u8[] dense<[7]>
        %sw = const f32[3] dense<[0.01, 0.02, 0.015]>
        %zw = const i8[3] dense<[0, 0, 0]>
        %sy = const f32[] dense<[0.4]>
        %zy = const i8[] dense<[-10]>
        %b = const i32[3] dense<[100, -250, 0]>
        %sb = const f32[3] dense<[0.001, 0.002, 0.0015]>
        %q = QLinearConv(%x, %sx, %zx, %w, %sw, %zw, %sy, %zy, %b)
        %dx = DequantizeLinear(%x, %sx, %zx)
        %dw = DequantizeLinear(%w, %sw, %zw) {axis=0}
        %db = DequantizeLinear(%b, %sb) {axis=0}
        %c = Conv(%dx, %dw, %db)
        %f = QuantizeLinear(%c, %sy, %zy)
        return %q, %f
      })");
    infer_shapes(graph);
    std::vector<Tensor> out = interpret(graph, {random_bytes(DType::u8, {1, 2, 5, 5}, random),
                                                random_bytes(DType::i8, {3, 2, 3, 3}, random)});
    REQUIRE(max_difference(out[0], out[1]) <= 1);
  }
}

// --- compute rules ---------------------------------------------------------------------------

TEST_CASE("the compute rules of QuantizeLinear and DequantizeLinear agree with the kernels",
          "[ops][quantize][lower]") {
  // Random inputs in [-2, 2) (lower_test_util.h's random_tensor); the scales and zero points
  // are constants, so the quantised values spread over the range and saturate at its ends.
  Graph graph = parse_graph(R"(
    graph rules(%x: f32[2,6,4], %h: f16[8], %q: u8[2,6,4], %i: i32[5]) ->
        (%y0: u8[2,6,4], %y1: i8[2,6,4], %y2: i16[8], %y3: f32[2,6,4], %y4: f16[2,6,4],
         %y5: f32[5]) opset 21 {
      %s = const f32[] dense<[0.01]>
      %z = const u8[] dense<[128]>
      %sc = const f32[6] dense<[0.01, 0.02, 0.005, 0.1, 0.03, 0.007]>
      %zc = const i8[6] dense<[0, -3, 5, 100, -100, 1]>
      %sb = const f32[2,3,4] dense<[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2,
                                    0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2]>
      %zb = const u8[2,3,4] dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                   12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23]>
      %sh = const f16[] dense<[0.001]>
      %zh = const i16[] dense<[-7]>
      %sf = const f16[6] dense<[0.5, 0.25, 0.125, 1.0, 2.0, 4.0]>
      %si = const f32[] dense<[0.125]>
      %y0 = QuantizeLinear(%x, %s, %z)
      %y1 = QuantizeLinear(%x, %sc, %zc) {axis=1}
      %y2 = QuantizeLinear(%h, %sh, %zh)
      %y3 = DequantizeLinear(%q, %sb, %zb) {axis=1, block_size=2}
      %y4 = DequantizeLinear(%q, %sf) {axis=-2}
      %y5 = DequantizeLinear(%i, %si)
      return %y0, %y1, %y2, %y3, %y4, %y5
    })");
  infer_shapes(graph);
  testing::require_kernels_agree(graph);
}

TEST_CASE("the compute rules of MatMulInteger and QLinearMatMul agree with their kernels",
          "[ops][quantize][lower]") {
  // Batched and broadcast operands, per-row and per-column zero points and scales, float16
  // scales: each kernel lowered and run on random inputs against its reference kernel.
  Graph graph = parse_graph(R"(
    graph rules(%a: u8[2,5,16], %b: i8[16,7], %c: i8[5,16], %d: u8[3,16,4]) ->
        (%y0: i32[2,5,7], %y1: i32[3,5,4], %y2: i8[2,5,7], %y3: u8[3,5,4]) opset 21 {
      %za = const u8[5] dense<[1, 2, 3, 0, 1]>
      %zb = const i8[7] dense<[0, -1, 1, 2, -2, 0, 3]>
      %zc = const i8[] dense<[-1]>
      %sa = const f32[5] dense<[0.5, 0.25, 1.0, 0.75, 0.125]>
      %sb = const f32[7] dense<[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]>
      %sy = const f32[] dense<[0.3]>
      %zy = const i8[] dense<[-20]>
      %hc = const f16[] dense<[0.02]>
      %hd = const f16[4] dense<[0.01, 0.02, 0.03, 0.04]>
      %zd = const u8[4] dense<[0, 1, 2, 3]>
      %hy = const f16[] dense<[0.0625]>
      %uy = const u8[] dense<[7]>
      %y0 = MatMulInteger(%a, %b, %za, %zb)
      %y1 = MatMulInteger(%c, %d, %zc)
      %y2 = QLinearMatMul(%a, %sa, %za, %b, %sb, %zb, %sy, %zy)
      %y3 = QLinearMatMul(%c, %hc, %zc, %d, %hd, %zd, %hy, %uy)
      return %y0, %y1, %y2, %y3
    })");
  infer_shapes(graph);
  testing::require_kernels_agree(graph);
}

TEST_CASE("the compute rules of ConvInteger and QLinearConv agree with their kernels",
          "[ops][quantize][lower]") {
  // Each form of Conv's rule (pointwise, padded rows with and without strides, grouped,
  // the general dilated form) on operands minus their zero points, summed in int32; the
  // QLinearConvs requantise with per-tensor and per-channel weight scales.
  Graph graph = parse_graph(R"(
    graph rules(%x: u8[1,4,8,8], %s: i8[1,4,7,7], %w3: u8[6,4,3,3], %ws: i8[6,4,3,3]) ->
        (%y0: i32[1,6,8,8], %y1: i32[1,6,8,8], %y2: i32[1,4,4,4], %y3: i32[1,6,4,4],
         %y4: u8[1,6,4,4], %y5: i8[1,6,7,7]) opset 21 {
      %w1 = const i8[6,4,1,1] dense<[1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12,
                                     1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]>
      %wd = const u8[4,1,3,3] dense<[1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 8, 7, 6, 5, 4, 3, 2, 1,
                                     0, 1, 0, 1, 0, 1, 0, 1, 0, 3, 3, 3, 3, 3, 3, 3, 3, 3]>
      %zx = const u8[] dense<[3]>
      %zw = const u8[6] dense<[0, 1, 2, 3, 4, 5]>
      %sx = const f32[] dense<[0.05]>
      %sw = const f32[6] dense<[0.01, 0.02, 0.03, 0.04, 0.05, 0.06]>
      %zw0 = const i8[] dense<[0]>
      %sw0 = const f32[] dense<[0.02]>
      %sy = const f32[] dense<[0.1]>
      %zy = const u8[] dense<[100]>
      %zs = const i8[] dense<[-1]>
      %zyi = const i8[] dense<[5]>
      %b = const i32[6] dense<[100, -100, 0, 7, -7, 1000]>
      %y0 = ConvInteger(%x, %w1, %zx)
      %y1 = ConvInteger(%x, %w3, %zx, %zw) {pads=[1, 1, 1, 1]}
      %y2 = ConvInteger(%x, %wd, %zx) {group=4, strides=[2, 2], pads=[1, 1, 1, 1]}
      %y3 = ConvInteger(%x, %w3, %zx, %zw) {dilations=[2, 2]}
      %y4 = QLinearConv(%x, %sx, %zx, %w3, %sw, %zw, %sy, %zy, %b) {dilations=[2, 2]}
      %y5 = QLinearConv(%s, %sx, %zs, %ws, %sw0, %zw0, %sy, %zyi, %b) {pads=[1, 1, 1, 1]}
      return %y0, %y1, %y2, %y3, %y4, %y5
    })");
  infer_shapes(graph);
  testing::require_kernels_agree(graph);
}

TEST_CASE("int8 matrix products in VNNI's form agree with their kernels",
          "[ops][quantize][lower]") {
  // B int8 with a zero point of 0 (or none): the compute rules pack both operands into
  // words of four bytes and sum dot4_u8i8 over them, correcting for A's zero point by B's
  // column sums. Constant weights over the whole int8 range (negative bytes included), K
  // a multiple of 4 and not (the last word padded with zero bytes), uint8 and int8 A
  // (shifted by 128), per-tensor and per-row zero points.
  std::mt19937 random(29);
  Graph graph = parse_graph(fmt::format(R"(
    graph words(%a: u8[5,16], %c: i8[2,3,13]) ->
        (%y0: i32[5,7], %y1: i32[5,7], %y2: i32[2,3,6], %y3: u8[5,7]) opset 21 {{
      %b = const i8[16,7] dense<[{b}]>
      %d = const i8[13,6] dense<[{d}]>
      %za = const u8[] dense<[131]>
      %zr = const u8[5] dense<[0, 255, 17, 128, 3]>
      %zc = const i8[] dense<[-7]>
      %z0 = const i8[] dense<[0]>
      %sa = const f32[] dense<[0.02]>
      %sb = const f32[7] dense<[0.01, 0.02, 0.03, 0.01, 0.02, 0.03, 0.01]>
      %sy = const f32[] dense<[0.5]>
      %zy = const u8[] dense<[128]>
      %y0 = MatMulInteger(%a, %b, %za)
      %y1 = MatMulInteger(%a, %b, %zr, %z0)
      %y2 = MatMulInteger(%c, %d, %zc)
      %y3 = QLinearMatMul(%a, %sa, %za, %b, %sb, %z0, %sy, %zy)
      return %y0, %y1, %y2, %y3
    }})", fmt::arg("b", random_int8_list(16 * 7, random)),
      fmt::arg("d", random_int8_list(13 * 6, random))));
  infer_shapes(graph);
  for (const Node* node : graph.nodes()) {
    // The rules took the word form: the lowered kernel sums dot4_u8i8.
    std::string text = loop::print_func(lower_node(*node, graph.opset, testing::avx512()));
    CHECK(text.find("dot4_u8i8") != std::string::npos);
  }
  testing::require_kernels_agree(graph);
}

TEST_CASE("int8 convolutions in VNNI's form agree with their kernels", "[ops][quantize][lower]") {
  // int8 weights without a zero point: X and W packed into words of four channels (six
  // and three channels: the last word part padding), every form of Conv's rule (pointwise,
  // strided pointwise, padded rows with and without strides, the general dilated form
  // with its bordered copy), uint8 and int8 inputs (shifted by 128), zero points 0 and not,
  // QLinearConv with a bias. The weights are constants over the whole int8 range.
  std::mt19937 random(37);
  Graph graph = parse_graph(fmt::format(R"(
    graph words(%x: u8[1,6,8,8], %s: i8[1,3,7,7]) ->
        (%y0: i32[1,5,8,8], %y1: i32[1,5,4,4], %y2: i32[1,5,8,8], %y3: i32[1,5,4,4],
         %y4: i32[1,5,4,4], %y5: u8[1,4,7,7], %y6: i32[1,4,4,4]) opset 21 {{
      %w1 = const i8[5,6,1,1] dense<[{w1}]>
      %w3 = const i8[5,6,3,3] dense<[{w3}]>
      %ws = const i8[4,3,3,3] dense<[{ws}]>
      %zx = const u8[] dense<[119]>
      %zs = const i8[] dense<[-3]>
      %z0 = const i8[] dense<[0]>
      %sx = const f32[] dense<[0.05]>
      %sw = const f32[4] dense<[0.01, 0.02, 0.015, 0.03]>
      %sy = const f32[] dense<[0.4]>
      %zy = const u8[] dense<[100]>
      %b = const i32[4] dense<[100, -250, 0, 7]>
      %y0 = ConvInteger(%x, %w1, %zx)
      %y1 = ConvInteger(%x, %w1, %zx) {{strides=[2, 2]}}
      %y2 = ConvInteger(%x, %w3, %zx, %z0) {{pads=[1, 1, 1, 1]}}
      %y3 = ConvInteger(%x, %w3) {{strides=[2, 2], pads=[1, 1, 1, 1]}}
      %y4 = ConvInteger(%x, %w3, %zx) {{dilations=[2, 2], pads=[1, 1, 1, 1]}}
      %y5 = QLinearConv(%s, %sx, %zs, %ws, %sw, %z0, %sy, %zy, %b) {{pads=[1, 1, 1, 1]}}
      %y6 = ConvInteger(%s, %ws, %zs) {{strides=[2, 2], pads=[1, 1, 1, 1]}}
      return %y0, %y1, %y2, %y3, %y4, %y5, %y6
    }})", fmt::arg("w1", random_int8_list(5 * 6, random)),
      fmt::arg("w3", random_int8_list(5 * 6 * 9, random)),
      fmt::arg("ws", random_int8_list(4 * 3 * 9, random))));
  infer_shapes(graph);
  for (const Node* node : graph.nodes()) {
    std::string text = loop::print_func(lower_node(*node, graph.opset, testing::avx512()));
    INFO(node->describe());
    CHECK(text.find("dot4_u8i8") != std::string::npos);
  }
  testing::require_kernels_agree(graph);
}

TEST_CASE("the compute rule of DynamicQuantizeLinear agrees with its kernel",
          "[ops][quantize][lower]") {
  // Random values of both signs (each node's inputs are drawn anew, constants kept), only
  // non-negative ones (the range starts at 0), and all zeros (the range is empty: scale
  // 1 / 255, zero point 0).
  Graph graph = parse_graph(R"(
    graph dynamic(%x: f32[3,50,17]) ->
        (%y0: u8[3,50,17], %s0: f32[], %z0: u8[], %y1: u8[2,5], %s1: f32[], %z1: u8[],
         %y2: u8[2,5], %s2: f32[], %z2: u8[]) opset 21 {
      %p = const f32[2,5] dense<[0.5, 1.25, 0.0, 3.0, 2.5, 0.75, 0.1, 4.0, 0.0, 1.0]>
      %n = const f32[2,5] splat<0.0>
      %y0, %s0, %z0 = DynamicQuantizeLinear(%x)
      %y1, %s1, %z1 = DynamicQuantizeLinear(%p)
      %y2, %s2, %z2 = DynamicQuantizeLinear(%n)
      return %y0, %s0, %z0, %y1, %s1, %z1, %y2, %s2, %z2
    })");
  infer_shapes(graph);
  testing::require_kernels_agree(graph);
}

TEST_CASE("MatMulInteger sums in float where that is exact: K up to 258, at the extremes",
          "[ops][quantize][lower]") {
  // Every product (0 - 255) * (0 - 255) = 65025 and every partial sum of up to 258 of them
  // is below 2^24: float32 holds them exactly, so the float sum is the int32 one. At
  // K = 259 the rule sums in int32. Compiled and interpreted, the results are the same.
  for (int64_t k : {int64_t{64}, int64_t{258}, int64_t{259}}) {
    INFO("K = " << k);
    Graph graph = parse_graph(fmt::format(R"(
      graph extremes(%a: u8[4,{0}], %b: u8[{0},16]) -> (%y: i32[4,16]) opset 21 {{
        %za = const u8[] dense<[255]>
        %zb = const u8[] dense<[255]>
        %y = MatMulInteger(%a, %b, %za, %zb)
        return %y
      }})",
                                          k));
    infer_shapes(graph);
    Tensor a(DType::u8, {4, k});
    Tensor b(DType::u8, {k, 16});
    // Row 0 all 0 (every product 65025), the others mixed; B all 0 but one column.
    std::mt19937 rng(static_cast<unsigned>(k));
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      a.values<uint8_t>()[i] = i < k ? 0 : static_cast<uint8_t>(rng() % 256);
    }
    for (int64_t i = 0; i < b.num_elements(); ++i) {
      b.values<uint8_t>()[i] = i % 16 == 15 ? static_cast<uint8_t>(rng() % 256) : 0;
    }
    std::vector<Tensor> expected = interpret(graph, {a, b});
    CHECK(expected[0].values<int32_t>()[0] == 65025 * k);
    CompileOptions options;
    options.graph_passes = {};
    std::vector<Tensor> actual = compile_model(std::move(*graph.clone()), options)->run({a, b});
    CHECK(compare_tensors(actual[0], expected[0], {0, 0}).ok());
  }
}
