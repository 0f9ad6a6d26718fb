// The cancel-qdq pass (src/passes/graph/cancel_qdq.cpp): Q(DQ(q)) is q, and data movement
// commutes with a per-tensor DequantizeLinear, for every 8-bit value and a range of scales
// and zero points: the outputs before and after the pass (and compiled) are the same to
// the bit. Course module 7.
#include "driver_test_util.h"
#include "pass_test_util.h"
#include "quant_test_util.h"

#include "minic/passes/graph/cancel_qdq.h"

namespace minic {
namespace {

using testing::count_op;
using testing::graph_from_text;

// Reshape, Transpose, Unsqueeze and Flatten between Q/DQ pairs of one scale and zero
// point, on %q of `type`; the float result is an output too.
std::string heads(const std::string& type, double scale, int zero) {
  return fmt::format(R"(
graph heads(%q: {0}[4,64]) -> (%t: {0}[1,16,2,8], %y: f32[1,16,2,8]) opset 17 {{
  %s = const f32[] dense<[{1}]>
  %z = const {0}[] dense<[{2}]>
  %shape = const i64[3] dense<[4, 8, 8]>
  %axes = const i64[1] dense<[0]>
  %bshape = const i64[4] dense<[1, 16, 2, 8]>
  %d = DequantizeLinear(%q, %s, %z)
  %r = Reshape(%d, %shape)
  %rq = QuantizeLinear(%r, %s, %z)
  %rd = DequantizeLinear(%rq, %s, %z)
  %u = Unsqueeze(%rd, %axes)
  %tf = Transpose(%u) {{perm=[0,3,1,2]}}
  %f = Flatten(%tf) {{axis=3}}
  %back = Reshape(%f, %bshape)
  %t = QuantizeLinear(%back, %s, %z)
  %y = DequantizeLinear(%t, %s, %z)
  return %t, %y
}})",
                     type, scale, zero);
}

}  // namespace

TEST_CASE("cancel-qdq moves the bytes and keeps every value, to the bit", "[passes][cancel_qdq]") {
  struct Case {
    const char* type;
    DType dtype;
    double scale;
    int zero;
  };
  for (const Case& c : {Case{"u8", DType::u8, 0.0625, 128}, Case{"u8", DType::u8, 0.0137, 3},
                        Case{"i8", DType::i8, 1e-6, -5}, Case{"i8", DType::i8, 3.7e4, 0}}) {
    INFO(c.type << ", scale " << c.scale << ", zero point " << c.zero);
    const std::string text = heads(c.type, c.scale, c.zero);
    Graph graph = graph_from_text(text);
    const std::vector<Tensor> inputs = {testing::every_8bit_value(c.dtype, {4, 64}, 11)};
    const std::vector<Tensor> before = interpret(graph, inputs);
    cancel_qdq(graph);
    verify_graph(graph);
    // No QuantizeLinear is left of the three; one DequantizeLinear, for %y.
    CHECK(count_op(graph, "QuantizeLinear") == 0);
    CHECK(count_op(graph, "DequantizeLinear") == 1);
    testing::check_same_bits(interpret(graph, inputs), before);
    std::unique_ptr<CompiledModel> model = compile_model(graph_from_text(text));
    testing::check_same_bits(model->run(inputs), before);
  }
}

}  // namespace minic
