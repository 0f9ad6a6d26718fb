// Unit tests for the ops of recurrent-state sequence models: LinearAttention and
// CausalConvWithState, on one head of size 1 so that the recurrences can be followed by
// hand in the comments. Course module 2.
#include <cmath>

#include "ops_test_util.h"

using namespace minic;
using namespace minic::test;

namespace {

// One batch, two tokens, one head with dk = dv = 1: q = [1, 2], k = [1, 1], v = [3, 4],
// scale 1, no past state. `decay` and `beta` are given where not empty.
std::vector<Tensor> linear_attention(const std::string& rule, std::vector<float> decay,
                                     std::vector<float> beta) {
  Graph graph;
  graph.opset = 27;
  std::vector<Value*> args = {graph.add_constant("q", floats({1, 2, 1}, {1, 2})),
                              graph.add_constant("k", floats({1, 2, 1}, {1, 1})),
                              graph.add_constant("v", floats({1, 2, 1}, {3, 4})),
                              nullptr,
                              nullptr,
                              nullptr};
  if (!decay.empty()) args[4] = graph.add_constant("decay", floats({1, 2, 1}, decay));
  if (!beta.empty()) args[5] = graph.add_constant("beta", floats({1, 2, 1}, beta));
  Attributes attributes = {{"update_rule", rule},
                           {"q_num_heads", int64_t{1}},
                           {"kv_num_heads", int64_t{1}},
                           {"scale", 1.0f}};
  Node* node = graph.add_node("LinearAttention", args, {"y", "state"}, attributes, "n");
  for (Value* output : node->outputs()) graph.add_output(output);
  infer_shapes(graph);
  return interpret(graph, {});
}

}  // namespace

TEST_CASE("LinearAttention follows each update rule token by token", "[ops][linear_attention]") {
  // linear: S = 3, out = 1 * 3; then S = 3 + 4 = 7, out = 2 * 7.
  auto linear = linear_attention("linear", {}, {});
  require_values(linear[0], {1, 2, 1}, {3, 14});
  require_values(linear[1], {1, 1, 1, 1}, {7});
  // gated with decay exp(g) = 0.5: S = 3, then 0.5 * 3 + 4 = 5.5, out = 11.
  const float g = std::log(0.5f);
  auto gated = linear_attention("gated", {g, g}, {});
  require_values(gated[0], {1, 2, 1}, {3, 11});
  // delta with beta 1: S = 0 + (3 - 0) = 3, then 3 + (4 - 3 * 1) = 4, out = 8.
  auto delta = linear_attention("delta", {}, {1, 1});
  require_values(delta[0], {1, 2, 1}, {3, 8});
}

TEST_CASE("LinearAttention refuses inconsistent heads and inputs", "[ops][linear_attention]") {
  OneNode heads(27, "LinearAttention",
                {{DType::f32, {1, 2, 6}}, {DType::f32, {1, 2, 4}}, {DType::f32, {1, 2, 4}}},
                {{"update_rule", std::string("linear")},
                 {"q_num_heads", int64_t{3}},
                 {"kv_num_heads", int64_t{2}}});
  REQUIRE_THROWS_WITH(heads.infer(), Catch::Contains("must be a positive multiple"));
  OneNode no_decay(27, "LinearAttention",
                   {{DType::f32, {1, 2, 2}}, {DType::f32, {1, 2, 2}}, {DType::f32, {1, 2, 2}}},
                   {{"update_rule", std::string("gated")},
                    {"q_num_heads", int64_t{1}},
                    {"kv_num_heads", int64_t{1}}});
  REQUIRE_THROWS_WITH(no_decay.infer(), Catch::Contains("needs the decay input"));
}

TEST_CASE("CausalConvWithState sees only the past and carries its last inputs",
          "[ops][causal_conv]") {
  // weight [1, 10], input [1, 2, 3], no past: p = [0, 1, 2, 3], output t = p[t] + 10 p[t+1].
  OneNode g(27, "CausalConvWithState", {}, {},
            {floats({1, 1, 3}, {1, 2, 3}), floats({1, 1, 2}, {1, 10})}, 2);
  auto outputs = g.run_all({});
  require_values(outputs[0], {1, 1, 3}, {10, 21, 32});
  require_values(outputs[1], {1, 1, 1}, {3});
  // silu: x * sigmoid(x) of the same sums.
  OneNode silu(27, "CausalConvWithState", {}, {{"activation", std::string("silu")}},
               {floats({1, 1, 1}, {1}), floats({1, 1, 2}, {1, 10})});
  require_values(silu.run({}), {1, 1, 1}, {10 / (1 + std::exp(-10.0))});
}

TEST_CASE("CausalConvWithState refuses an unknown activation and a wrong weight",
          "[ops][causal_conv]") {
  OneNode activation(27, "CausalConvWithState", {{DType::f32, {1, 2, 4}}, {DType::f32, {2, 1, 3}}},
                     {{"activation", std::string("relu")}});
  REQUIRE_THROWS_WITH(activation.infer(),
                      Catch::Contains("activation must be none, silu or swish"));
  OneNode weight(27, "CausalConvWithState", {{DType::f32, {1, 2, 4}}, {DType::f32, {3, 1, 3}}});
  REQUIRE_THROWS_WITH(weight.infer(), Catch::Contains("weight must be [2, 1, K]"));
}
