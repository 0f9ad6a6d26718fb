// The LLVM back end's code for quantisations (src/codegen/llvm/codegen_math.cpp,
// emit_round_of_quotient) against the reference kernel of QuantizeLinear, at the inputs
// where a quotient by the reciprocal could round otherwise. Course module 7.
#include "target_test_util.h"

#include "minic/driver/compile.h"
#include "minic/runtime/interpreter.h"
#include "minic/ir/graph/text.h"
#include "minic/runtime/compare.h"

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

using namespace minic;

TEST_CASE("QuantizeLinear compiled by the reciprocal: ties, overflow and subnormals",
          "[codegen][quantize]") {
  // Where the target fuses multiply-adds, code generation computes a quantisation's
  // round(x / s) by 1 / s and one correction (emit_round_of_quotient); the reference kernel
  // divides. The inputs: a few ulps either side of every tie k + 1/2 of x / s for k up to
  // 300, and random bit patterns over every exponent (subnormals, quotients that
  // overflow, infinities, NaN), with scales that make ties, and ones outside
  // [2^-126, 2^126] that take the division. Compiled for this machine (with FMA) and for
  // x86-64 (without, dividing), the kernels give the reference kernel's integers.
  const Graph graph = parse_graph(R"(
    graph q(%x: f32[4096], %s: f32[]) -> (%y0: u8[4096], %y1: i8[4096], %y2: i16[4096])
        opset 21 {
      %z = const u8[] dense<[128]>
      %z8 = const i8[] dense<[0]>
      %z16 = const i16[] dense<[-5]>
      %y0 = QuantizeLinear(%x, %s, %z)
      %y1 = QuantizeLinear(%x, %s, %z8)
      %y2 = QuantizeLinear(%x, %s, %z16)
      return %y0, %y1, %y2
    })");
  std::mt19937 random(11);
  const float all_ones = std::bit_cast<float>(uint32_t{0x3f7fffff});  // 1 - 2^-24
  for (float scale : {0.0217f, 1.0f / 255, 0.1f, 3.0f, all_ones, 1e-39f, 3e38f}) {
    INFO("scale " << scale);
    Tensor x(DType::f32, {4096});
    std::span<float> values = x.values<float>();
    size_t n = 0;
    for (int k = -300; k <= 300 && n + 4 <= 2048; k += 1) {
      const float tie = std::fabs(k) + 0.5f;
      const float near = (k < 0 ? -tie : tie) * scale;
      for (int step = -2; step <= 1; ++step) {
        values[n++] = std::bit_cast<float>(std::bit_cast<uint32_t>(near) + step);
      }
    }
    const float special[] = {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                             -std::numeric_limits<float>::infinity(),
                             std::numeric_limits<float>::quiet_NaN(),
                             std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                             std::numeric_limits<float>::denorm_min(), 1e-30f};
    for (float value : special) values[n++] = value;
    while (n < values.size()) values[n++] = std::bit_cast<float>(static_cast<uint32_t>(random()));
    const Tensor s = Tensor::from_vector<float>({}, {scale});
    std::vector<Tensor> expected = interpret(graph, {x, s});
    for (const Target& target : {codegen::host_target(), testing::x86_64()}) {
      INFO("target " << target.str());
      CompileOptions options;
      options.target = target;
      options.graph_passes = {};
      std::vector<Tensor> compiled = compile_model(std::move(*graph.clone()), options)->run({x, s});
      for (size_t k = 0; k < compiled.size(); ++k) {
        CHECK(compare_tensors(compiled[k], expected[k], {0, 0}).ok());
      }
    }
  }
}
