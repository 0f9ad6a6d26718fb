// The qdq-to-integer pass (src/passes/graph/qdq_to_integer.cpp): random QDQ graphs of Conv,
// MatMul and Gemm through the interpreter before and after the pass. The rewritten ops
// sum exactly in int32 where the float ones rounded, so the quantised outputs may differ
// by one step, and rarely: the test requires at most one step everywhere and the same
// value almost everywhere. Course module 7.
#include "driver_test_util.h"
#include "pass_test_util.h"

#include "minic/passes/graph/qdq_to_integer.h"

#include <random>

namespace minic {
namespace {

using testing::count_op;
using testing::graph_from_text;

// "dense<[...]>" of `count` integers uniform in [low, high].
std::string random_ints(int64_t count, std::mt19937& random, int low, int high) {
  std::uniform_int_distribution<int> pick(low, high);
  std::string text = "dense<[";
  for (int64_t i = 0; i < count; ++i) text += fmt::format("{}{}", i ? ", " : "", pick(random));
  return text + "]>";
}

// "dense<[...]>" of `count` scales uniform in [low, high).
std::string random_scales(int64_t count, std::mt19937& random, double low, double high) {
  std::uniform_real_distribution<double> pick(low, high);
  std::string text = "dense<[";
  for (int64_t i = 0; i < count; ++i) text += fmt::format("{}{:.5f}", i ? ", " : "", pick(random));
  return text + "]>";
}

// Runs the pass on `text` (every output quantised): the outputs of random inputs before and
// after differ by at most one step, in at most 2% of the elements; `op` is gone (or, where
// `rewritten` is false, still there).
void check_rewrite(const std::string& text, const std::string& op, uint64_t seed,
                   bool rewritten = true) {
  INFO(text);
  Graph graph = graph_from_text(text);
  std::vector<Tensor> inputs =
      testing::random_float_inputs(graph, static_cast<unsigned>(seed), -2.0f, 2.0f);
  std::vector<Tensor> before = interpret(graph, inputs);
  qdq_to_integer(graph);
  verify_graph(graph);
  CHECK(count_op(graph, op) == (rewritten ? 0 : 1));
  std::vector<Tensor> after = interpret(graph, inputs);
  for (size_t k = 0; k < before.size(); ++k) {
    int64_t differ = 0;
    for (int64_t i = 0; i < before[k].num_elements(); ++i) {
      double difference = std::abs(after[k].as_double(i) - before[k].as_double(i));
      REQUIRE(difference <= 1.0);
      differ += difference > 0 ? 1 : 0;
    }
    CHECK(differ * 50 <= before[k].num_elements());
  }
}

}  // namespace

TEST_CASE("qdq-to-integer keeps the outputs of random QDQ convolutions, grouped ones in "
          "float",
          "[passes][qdq-to-integer]") {
  std::mt19937 random(17);
  struct ConvCase {
    int64_t in, out, kernel, group, size;  // size: the output's height and width
    std::string attributes;
    bool per_channel;
    std::string weight_type;  // i8 or u8
  };
  const ConvCase cases[] = {
      {4, 6, 3, 1, 9, "{pads=[1, 1, 1, 1]}", true, "i8"},
      {4, 6, 1, 1, 9, "", false, "i8"},
      {6, 6, 3, 6, 5, "{group=6, strides=[2, 2], pads=[1, 1, 1, 1]}", true, "i8"},
      {4, 4, 3, 2, 5, "{group=2, dilations=[2, 2]}", false, "u8"},
      {3, 8, 5, 1, 5, "{strides=[2, 2], pads=[2, 2, 2, 2]}", true, "u8"},
  };
  for (const ConvCase& c : cases) {
    const int64_t weights = c.out * (c.in / c.group) * c.kernel * c.kernel;
    const int64_t scales = c.per_channel ? c.out : 1;
    const bool u8 = c.weight_type == "u8";
    std::string text = fmt::format(R"(
      graph g(%x: f32[1,{in},9,9]) -> (%y: u8[1,{out},{size},{size}]) opset 21 {{
        %sx = const f32[] dense<[0.02]>
        %zx = const u8[] dense<[128]>
        %wq = const {wt}[{out},{cin},{k},{k}] {w}
        %sw = const f32[{s}] {sw}
        %zw = const {wt}[{s}] {zw}
        %b = const f32[{out}] {b}
        %sy = const f32[] dense<[0.05]>
        %zy = const u8[] dense<[100]>
        %qx = QuantizeLinear(%x, %sx, %zx)
        %dx = DequantizeLinear(%qx, %sx, %zx)
        %dw = DequantizeLinear(%wq, %sw, %zw) {{axis=0}}
        %c = Conv(%dx, %dw, %b) {attrs}
        %r = Relu(%c)
        %y = QuantizeLinear(%r, %sy, %zy)
        return %y
      }})",
        fmt::arg("in", c.in), fmt::arg("out", c.out), fmt::arg("cin", c.in / c.group),
        fmt::arg("k", c.kernel), fmt::arg("size", c.size), fmt::arg("wt", c.weight_type), fmt::arg("s", scales),
        fmt::arg("w", random_ints(weights, random, u8 ? 0 : -127, u8 ? 255 : 127)),
        fmt::arg("sw", random_scales(scales, random, 0.002, 0.01)),
        fmt::arg("zw", random_ints(scales, random, u8 ? 120 : -3, u8 ? 136 : 3)),
        fmt::arg("b", random_scales(c.out, random, -0.5, 0.5)), fmt::arg("attrs", c.attributes));
    // A grouped convolution stays in float (the pass's file comment says why).
    check_rewrite(text, "Conv", 3, /*rewritten=*/c.group == 1);
  }
}

TEST_CASE("qdq-to-integer keeps the outputs of random QDQ MatMul and Gemm",
          "[passes][qdq-to-integer]") {
  std::mt19937 random(23);
  std::string text = fmt::format(R"(
    graph g(%a: f32[2,5,32], %b: f32[5,32]) -> (%m: i8[2,5,12], %g: i8[5,12]) opset 21 {{
      %sa = const f32[] dense<[0.02]>
      %za = const i8[] dense<[-5]>
      %wm = const i8[32,12] {wm}
      %sm = const f32[12] {sm}
      %wg = const i8[12,32] {wg}
      %sg = const f32[12] {sg}
      %c = const f32[12] {c}
      %sy = const f32[] dense<[0.04]>
      %zy = const i8[] dense<[3]>
      %qa = QuantizeLinear(%a, %sa, %za)
      %da = DequantizeLinear(%qa, %sa, %za)
      %dm = DequantizeLinear(%wm, %sm) {{axis=1}}
      %mm = MatMul(%da, %dm)
      %m = QuantizeLinear(%mm, %sy, %zy)
      %qb = QuantizeLinear(%b, %sa, %za)
      %db = DequantizeLinear(%qb, %sa, %za)
      %dg = DequantizeLinear(%wg, %sg) {{axis=0}}
      %gg = Gemm(%db, %dg, %c) {{alpha=0.5, transB=1}}
      %g = QuantizeLinear(%gg, %sy, %zy)
      return %m, %g
    }})",
      fmt::arg("wm", random_ints(32 * 12, random, -127, 127)),
      fmt::arg("sm", random_scales(12, random, 0.002, 0.01)),
      fmt::arg("wg", random_ints(12 * 32, random, -127, 127)),
      fmt::arg("sg", random_scales(12, random, 0.002, 0.01)),
      fmt::arg("c", random_scales(12, random, -0.5, 0.5)));
  check_rewrite(text, "MatMul", 5);
}

}  // namespace minic
