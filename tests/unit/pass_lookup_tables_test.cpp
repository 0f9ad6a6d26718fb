// The lookup-tables pass (src/passes/graph/lookup_tables.cpp) and minic.LookupTable
// (src/ops/lookup_table.cpp): a quantised GELU chain on every value of its uint8 or int8
// input, through the interpreter before and after the pass, and compiled: the results are
// the same to the bit, since the table holds the chain's own reference results. A value of
// the chain that another node reads stays. Course module 7.
#include "driver_test_util.h"
#include "pass_test_util.h"
#include "quant_test_util.h"

#include "minic/passes/graph/lookup_tables.h"

namespace minic {
namespace {

using testing::count_op;
using testing::graph_from_text;

// The GELU chain of a QDQ encoder on %a of `type` (u8 or i8), its zero points `zero`; %x,
// the dequantised input, is a second output when `share` is set.
std::string gelu_chain(const std::string& type, int zero, bool share) {
  return fmt::format(R"(
graph gelu(%a: {0}[3,256]) -> (%g: {0}[3,256]{2}) opset 17 {{
  %sa = const f32[] dense<[0.05]>
  %za = const {0}[] dense<[{1}]>
  %sqrt2 = const f32[] dense<[1.4142135]>
  %se = const f32[] dense<[0.0078125]>
  %one = const f32[] dense<[1.0]>
  %sm = const f32[] dense<[0.04]>
  %half = const f32[] dense<[0.5]>
  %sg = const f32[] dense<[0.02]>
  %x = DequantizeLinear(%a, %sa, %za)
  %d = Div(%x, %sqrt2)
  %e = Erf(%d)
  %eq = QuantizeLinear(%e, %se, %za)
  %ed = DequantizeLinear(%eq, %se, %za)
  %p = Add(%ed, %one)
  %m = Mul(%x, %p)
  %mq = QuantizeLinear(%m, %sm, %za)
  %md = DequantizeLinear(%mq, %sm, %za)
  %h = Mul(%md, %half)
  %g = QuantizeLinear(%h, %sg, %za)
  return %g{3}
}})",
                     type, zero, share ? ", %x: f32[3,256]" : "", share ? ", %x" : "");
}

// Every value of the 8-bit type `dtype`, three times over, in a [3, 256] tensor.
}  // namespace

TEST_CASE("lookup-tables: a quantised GELU on every 8-bit value is its table, to the bit",
          "[passes][lookup_tables]") {
  for (auto [type, dtype, zero] : {std::tuple{"u8", DType::u8, 128}, {"i8", DType::i8, 0}}) {
    for (bool share : {false, true}) {
      INFO(type << (share ? ", %x read outside the chain" : ""));
      const std::string text = gelu_chain(type, zero, share);
      Graph graph = graph_from_text(text);
      const std::vector<Tensor> inputs = {testing::every_8bit_value(dtype, {3, 256}, 7)};
      const std::vector<Tensor> before = interpret(graph, inputs);
      lookup_tables(graph);
      verify_graph(graph);
      CHECK(count_op(graph, "minic.LookupTable") == 1);
      CHECK(count_op(graph, "Erf") == 0);
      CHECK(count_op(graph, "DequantizeLinear") == (share ? 1 : 0));
      testing::check_same_bits(interpret(graph, inputs), before);
      // Compiled (the default pipeline, this CPU): the lookup fused where %a is read.
      std::unique_ptr<CompiledModel> model = compile_model(graph_from_text(text));
      CHECK(model->stats().compiled_kernels == model->stats().kernels);
      testing::check_same_bits(model->run(inputs), before);
    }
  }
}

TEST_CASE("lookup-tables leaves a graph without such chains as it is",
          "[passes][lookup_tables]") {
  // A Relu of a dequantised value, requantised: arithmetic and one rounding.
  Graph graph = graph_from_text(R"(
graph relu(%a: u8[8,64]) -> (%r: u8[8,64]) opset 17 {
  %s = const f32[] dense<[0.1]>
  %z = const u8[] dense<[10]>
  %x = DequantizeLinear(%a, %s, %z)
  %y = Relu(%x)
  %r = QuantizeLinear(%y, %s, %z)
  return %r
})");
  const std::string before = print_graph(graph);
  lookup_tables(graph);
  CHECK(print_graph(graph) == before);
}

}  // namespace minic
