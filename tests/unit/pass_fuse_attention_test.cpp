// The fuse-attention pass (src/passes/graph/fuse_attention.cpp) and the op it makes,
// minic.FusedAttention (include/minic/ops/fused_attention.h): random attention chains
// interpreted before and after the pass, and compiled with the default pipeline (the
// attention rule, src/schedule/rules/cpu_attention.cpp) against the interpreter before;
// the forms the pass must leave alone; the op's errors. Course modules 2 and 4.
#include "driver_test_util.h"
#include "pass_test_util.h"

#include "minic/codegen/llvm.h"
#include "minic/driver/target.h"
#include "minic/ops/fused_attention.h"
#include "minic/passes/graph/fuse_attention.h"

#include <random>

namespace minic {
namespace {

using testing::count_op;
using testing::graph_from_text;

std::string shape_text(const Shape& shape) { return fmt::format("f32[{}]", fmt::join(shape, ",")); }

// An attention chain as exporters write it: Q [lead.., s, d], K_t [lead.., d, t], V
// [lead.., t, e], scores scaled by `scale_op` ("Div", "Mul", "operands" for Q and K_t
// each scaled before the product, or "" for none) and masked by a mask of shape `mask`
// (none if empty).
std::string attention_text(const Shape& lead, int64_t s, int64_t d, int64_t t, int64_t e,
                           const std::string& scale_op, const Shape& mask) {
  auto with = [&](int64_t a, int64_t b) {
    Shape shape = lead;
    shape.push_back(a);
    shape.push_back(b);
    return shape;
  };
  std::string text = fmt::format("graph g(%q: {}, %k_t: {}, %v: {}{}) -> (%y: {}) opset 17 {{\n",
                                 shape_text(with(s, d)), shape_text(with(d, t)),
                                 shape_text(with(t, e)),
                                 mask.empty() ? "" : ", %mask: " + shape_text(mask),
                                 shape_text(with(s, e)));
  text += "  %c = const f32[] dense<[2.5]>\n";
  if (scale_op == "operands") {  // PyTorch's export: Q and K_t each scaled
    text += "  %qs = Mul(%q, %c)\n  %ks = Mul(%c, %k_t)\n  %s = MatMul(%qs, %ks)\n";
  } else {
    text += "  %s = MatMul(%q, %k_t)\n";
  }
  std::string x = "%s";
  if (!scale_op.empty() && scale_op != "operands") {
    text += fmt::format("  %x = {}(%s, %c)\n", scale_op);
    x = "%x";
  }
  if (!mask.empty()) {
    text += fmt::format("  %a = Add({}, %mask)\n", x);
    x = "%a";
  }
  text += fmt::format("  %p = Softmax({}) {{axis=-1}}\n  %y = MatMul(%p, %v)\n", x);
  return text + "  return %y\n}\n";
}

}  // namespace

TEST_CASE("fuse-attention keeps the results of random attention chains, interpreted and "
          "compiled",
          "[passes][fuse-attention]") {
  struct Case {
    Shape lead;
    int64_t s, d, t, e;
    std::string scale_op;
    Shape mask;
  };
  // BERT's form (a key mask broadcast to every head and query); a mask per head and query;
  // no mask, no scale; rows that leave a shorter last row tile, keys that are not whole
  // vectors, one head of rank 2; PyTorch's form, Q and K_t scaled before the product.
  const Case cases[] = {
      {{1, 4}, 32, 16, 32, 16, "Div", {32}},
      {{2, 2}, 12, 8, 48, 32, "Mul", {2, 1, 12, 48}},
      {{3}, 17, 5, 16, 20, "", {}},
      {{2}, 10, 8, 24, 8, "Div", {1, 24}},
      {{}, 7, 3, 5, 9, "Mul", {7, 5}},
      {{2, 3}, 16, 8, 32, 8, "operands", {2, 1, 16, 32}},
  };
  for (const Case& c : cases) {
    const std::string text = attention_text(c.lead, c.s, c.d, c.t, c.e, c.scale_op, c.mask);
    INFO(text);
    Graph graph = graph_from_text(text);
    testing::check_pass_preserves_outputs(
        graph, [](Graph& g) { fuse_attention(g, codegen::host_target()); });
    CHECK(count_op(graph, kFusedAttentionOp) == 1);
    CHECK(graph.nodes().size() == 1);
    testing::check_against_interpreter(text);
  }
}

TEST_CASE("fuse-attention leaves chains that are not attention as they are",
          "[passes][fuse-attention]") {
  const std::string bert = attention_text({1, 2}, 8, 4, 8, 4, "Div", {8});
  auto fused = [](const std::string& text) {
    Graph graph = graph_from_text(text);
    fuse_attention(graph, codegen::host_target());
    verify_graph(graph);
    return count_op(graph, kFusedAttentionOp);
  };
  REQUIRE(fused(bert) == 1);
  // The softmax along another axis.
  std::string other_axis = bert;
  other_axis.replace(other_axis.find("axis=-1"), 7, "axis=2");
  CHECK(fused(other_axis) == 0);
  // The probabilities used elsewhere too (a second output).
  std::string escaping = bert;
  escaping.replace(escaping.find("-> (%y: f32[1,2,8,4])"), 21,
                   "-> (%y: f32[1,2,8,4], %p: f32[1,2,8,8])");
  escaping.replace(escaping.find("return %y"), 9, "return %y, %p");
  CHECK(fused(escaping) == 0);
  // Keys shared by the heads (K_t broadcast along a leading axis).
  std::string broadcast = bert;
  broadcast.replace(broadcast.find("%k_t: f32[1,2,4,8]"), 18, "%k_t: f32[1,1,4,8]");
  CHECK(fused(broadcast) == 0);
  // A scale that is not a constant.
  std::string variable = bert;
  variable.replace(variable.find("%c = const f32[] dense<[2.5]>"), 29, "%c = Neg(%mask)");
  CHECK(fused(variable) == 0);
  // On a GPU target the chain stays (the attention rule is the CPU's).
  Graph graph = graph_from_text(bert);
  fuse_attention(graph, parse_target("cuda"));
  CHECK(count_op(graph, kFusedAttentionOp) == 0);
}

TEST_CASE("minic.FusedAttention refuses operands that do not fit", "[ops][fused-attention]") {
  CHECK_THROWS_WITH(graph_from_text(R"(
graph g(%q: f32[2,3,4], %k: f32[2,5,6], %v: f32[2,6,4]) -> (%y: f32[2,3,4]) opset 17 {
  %y = minic.FusedAttention(%q, %k, %v) {scale=0.5}
  return %y
})"),
                    Catch::Contains("Q f32[2,3,4], K_t f32[2,5,6] and V f32[2,6,4] do not fit"));
  CHECK_THROWS_WITH(graph_from_text(R"(
graph g(%q: f32[2,3,4], %k: f32[2,4,6], %v: f32[2,6,4], %m: f32[2,6]) -> (%y: f32[2,3,4]) opset 17 {
  %y = minic.FusedAttention(%q, %k, %v, %m) {scale=0.5}
  return %y
})"),
                    Catch::Contains("the mask f32[2,6] does not broadcast to the scores' shape "
                                    "[2,3,6]"));
  CHECK_THROWS_WITH(graph_from_text(R"(
graph g(%q: f64[3,4], %k: f64[4,6], %v: f64[6,4]) -> (%y: f64[3,4]) opset 17 {
  %y = minic.FusedAttention(%q, %k, %v) {scale=0.5}
  return %y
})"),
                    Catch::Contains("element type f64 is not supported"));
  CHECK_THROWS_WITH(graph_from_text(R"(
graph g(%q: f32[3,4], %k: f32[4,6], %v: f32[6,4]) -> (%y: f32[3,4]) opset 17 {
  %y = minic.FusedAttention(%q, %k, %v)
  return %y
})"),
                    Catch::Contains("the attribute 'scale' is required"));
}

}  // namespace minic
