// Unit tests for Attention: small cases whose softmax weights are worked out by hand in
// the comments, and the errors for inputs and attributes that do not fit. Course module 2.
#include "ops_test_util.h"

#include <cmath>

using namespace minic;
using namespace minic::test;

namespace {

const float kLn3 = std::log(3.0f);

TensorType f32(Shape shape) { return {DType::f32, std::move(shape)}; }

Tensor bools(Shape shape, std::vector<bool> values) {
  return Tensor::from_vector<bool>(std::move(shape), values);
}

}  // namespace

TEST_CASE("Attention weighs V by the softmax of the scaled scores", "[ops][attention]") {
  // One head, one query, two keys, scale 1: scores q * k = [0, ln 3], softmax [1/4, 3/4],
  // Y = 4/4 + 3 * 8/4 = 7.
  OneNode g(23, "Attention", {f32({1, 1, 1, 1}), f32({1, 1, 2, 1}), f32({1, 1, 2, 1})},
            {{"scale", 1.0f}});
  Tensor y = g.run({floats({1, 1, 1, 1}, {1}), floats({1, 1, 2, 1}, {0, kLn3}),
                    floats({1, 1, 2, 1}, {4, 8})});
  require_values(y, {1, 1, 1, 1}, {7});
}

TEST_CASE("Attention scales by 1/sqrt(head_size) by default", "[ops][attention]") {
  // Head size 4: the scores are q . k / 2 = [0, 2 ln 3 / 2] = [0, ln 3], so again
  // softmax [1/4, 3/4] and Y = 7; V's head size (1) differs from Q's.
  OneNode g(23, "Attention", {f32({1, 1, 1, 4}), f32({1, 1, 2, 4}), f32({1, 1, 2, 1})});
  Tensor y = g.run({floats({1, 1, 1, 4}, {1, 0, 0, 0}),
                    floats({1, 1, 2, 4}, {0, 0, 0, 0, 2 * kLn3, 0, 0, 0}),
                    floats({1, 1, 2, 1}, {4, 8})});
  require_values(y, {1, 1, 1, 1}, {7});
}

TEST_CASE("Attention with 3-D inputs and grouped-query heads", "[ops][attention]") {
  // Q [1, 1, 2] holds two query heads of size 1, q = 0 and q = 1; K and V hold one
  // key/value head, which both query heads read. Scale 1:
  //   head 0: scores [0, 0]     -> softmax [1/2, 1/2] -> Y = 6
  //   head 1: scores [0, ln 3]  -> softmax [1/4, 3/4] -> Y = 7
  OneNode g(23, "Attention", {f32({1, 1, 2}), f32({1, 2, 1}), f32({1, 2, 1})},
            {{"q_num_heads", int64_t{2}}, {"kv_num_heads", int64_t{1}}, {"scale", 1.0f}});
  Tensor y = g.run({floats({1, 1, 2}, {0, 1}), floats({1, 2, 1}, {0, kLn3}),
                    floats({1, 2, 1}, {4, 8})});
  require_values(y, {1, 1, 2}, {6, 7});
}

TEST_CASE("Attention is_causal lets query i see keys 0..i", "[ops][attention]") {
  // Q = 0 makes every score 0: row 0 sees V[0] only, row 1 the mean of V[0] and V[1].
  OneNode g(23, "Attention", {f32({1, 1, 2, 1}), f32({1, 1, 2, 1}), f32({1, 1, 2, 1})},
            {{"is_causal", int64_t{1}}});
  Tensor y = g.run({floats({1, 1, 2, 1}, {0, 0}), floats({1, 1, 2, 1}, {1, 1}),
                    floats({1, 1, 2, 1}, {2, 6})});
  require_values(y, {1, 1, 2, 1}, {2, 4});
}

TEST_CASE("Attention appends K and V to the past cache", "[ops][attention]") {
  // past 1 + kv 1 = 2 keys. With is_causal the one query is at position past + 0 = 1, so
  // it sees both; scores 0, so Y = (2 + 6) / 2. present_* are past then new.
  OneNode g(23, "Attention",
            {f32({1, 1, 1, 1}), f32({1, 1, 1, 1}), f32({1, 1, 1, 1}), f32({4}),
             f32({1, 1, 1, 1}), f32({1, 1, 1, 1})},
            {{"is_causal", int64_t{1}}}, {}, 3);
  g.graph.set_input(g.node, 3, nullptr);  // no attn_mask
  std::vector<Tensor> out = g.run_all({floats({1, 1, 1, 1}, {0}), floats({1, 1, 1, 1}, {5}),
                                       floats({1, 1, 1, 1}, {6}), floats({4}, {0, 0, 0, 0}),
                                       floats({1, 1, 1, 1}, {3}), floats({1, 1, 1, 1}, {2})});
  require_values(out[0], {1, 1, 1, 1}, {4});
  require_values(out[1], {1, 1, 2, 1}, {3, 5});
  require_values(out[2], {1, 1, 2, 1}, {2, 6});
}

TEST_CASE("Attention masks: boolean, additive, and shorter than the keys", "[ops][attention]") {
  // Q = 0 makes every score 0; three keys with V = [1, 2, 3].
  const std::vector<TensorType> qkv = {f32({1, 1, 1, 1}), f32({1, 1, 3, 1}), f32({1, 1, 3, 1})};
  const std::vector<Tensor> inputs = {floats({1, 1, 1, 1}, {0}), floats({1, 1, 3, 1}, {1, 1, 1}),
                                      floats({1, 1, 3, 1}, {1, 2, 3})};
  SECTION("a boolean mask keeps the keys where it is true: (1 + 3) / 2") {
    OneNode g(23, "Attention", qkv, {}, {bools({1, 3}, {true, false, true})});
    require_values(g.run(inputs), {1, 1, 1, 1}, {2});
  }
  SECTION("a float mask is added: [0, 0, ln 3] gives weights [1/5, 1/5, 3/5]") {
    OneNode g(23, "Attention", qkv, {}, {floats({3}, {0, 0, kLn3})});
    require_values(g.run(inputs), {1, 1, 1, 1}, {(1 + 2 + 9) / 5.0});
  }
  SECTION("a mask of 2 columns leaves out the third key: (1 + 2) / 2") {
    OneNode g(23, "Attention", qkv, {}, {bools({1, 1, 1, 2}, {true, true})});
    require_values(g.run(inputs), {1, 1, 1, 1}, {1.5});
  }
}

TEST_CASE("Attention qk_matmul_output modes and softcap", "[ops][attention]") {
  // Scale 1, q = 1, keys [0, 100]: score [0, 100]; softcap 1 caps it to
  // [0, tanh(100)] = [0, 1]; the mask adds [0, 1] -> [0, 2]; softmax [1, e^2] / (1 + e^2).
  // V = [0, 1] gives Y = e^2 / (1 + e^2).
  const double e2 = std::exp(2.0);
  const std::vector<std::vector<double>> expected = {
      {0, 100}, {0, 1}, {0, 2}, {1 / (1 + e2), e2 / (1 + e2)}};
  for (int64_t mode = 0; mode < 4; ++mode) {
    INFO("qk_matmul_output_mode " << mode);
    OneNode g(23, "Attention", {f32({1, 1, 1, 1}), f32({1, 1, 2, 1}), f32({1, 1, 2, 1})},
              {{"scale", 1.0f}, {"softcap", 1.0f}, {"qk_matmul_output_mode", mode}},
              {floats({2}, {0, 1})}, 4);
    std::vector<Tensor> out = g.run_all({floats({1, 1, 1, 1}, {1}), floats({1, 1, 2, 1}, {0, 100}),
                                         floats({1, 1, 2, 1}, {0, 1})});
    require_values(out[0], {1, 1, 1, 1}, {e2 / (1 + e2)});
    require_values(out[3], {1, 1, 1, 2}, expected[mode]);
  }
}

TEST_CASE("Attention nonpad_kv_seqlen (opset 24) masks each batch's padding",
          "[ops][attention]") {
  // Scores 0, V = [1, 2, 3] in both batches; batch 0 has 1 real key, batch 1 has 2:
  //   Y = [1, (1 + 2) / 2].
  OneNode g(24, "Attention", {f32({2, 1, 1, 1}), f32({2, 1, 3, 1}), f32({2, 1, 3, 1})}, {},
            {int64s({2}, {1, 2})});
  Value* lengths = g.node->input(3);
  g.graph.set_input(g.node, 6, lengths);
  g.graph.set_input(g.node, 3, nullptr);
  Tensor y = g.run({floats({2, 1, 1, 1}, {0, 0}), floats({2, 1, 3, 1}, {1, 1, 1, 1, 1, 1}),
                    floats({2, 1, 3, 1}, {1, 2, 3, 1, 2, 3})});
  require_values(y, {2, 1, 1, 1}, {1, 1.5});
}

TEST_CASE("Attention errors name the input or attribute that does not fit",
          "[ops][attention]") {
  const std::vector<TensorType> qkv4 = {f32({1, 2, 3, 4}), f32({1, 2, 5, 4}), f32({1, 2, 5, 4})};
  SECTION("3-D inputs without head counts") {
    OneNode g(23, "Attention", {f32({1, 3, 8}), f32({1, 5, 8}), f32({1, 5, 8})});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("Attention node 'n'") &&
                                       Catch::Contains("need the attributes q_num_heads"));
  }
  SECTION("a hidden size that the heads do not divide") {
    OneNode g(23, "Attention", {f32({1, 3, 8}), f32({1, 5, 8}), f32({1, 5, 8})},
              {{"q_num_heads", int64_t{3}}, {"kv_num_heads", int64_t{2}}});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("not a multiple of its 3 heads"));
  }
  SECTION("query heads that are not a multiple of the key/value heads") {
    OneNode g(23, "Attention", {f32({1, 3, 3, 4}), f32({1, 2, 5, 4}), f32({1, 2, 5, 4})});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("not a positive multiple"));
  }
  SECTION("Q and K of different head sizes") {
    OneNode g(23, "Attention", {f32({1, 2, 3, 4}), f32({1, 2, 5, 6}), f32({1, 2, 5, 4})});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("another head size"));
  }
  SECTION("a rank-2 Q") {
    OneNode g(23, "Attention", {f32({3, 4}), f32({5, 4}), f32({5, 4})});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("must all be 3-D or all 4-D"));
  }
  SECTION("integer Q") {
    OneNode g(23, "Attention",
              {{DType::i32, {1, 2, 3, 4}}, {DType::i32, {1, 2, 5, 4}}, {DType::i32, {1, 2, 5, 4}}});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("takes float16, bfloat16, float or double"));
  }
  SECTION("a mask that does not broadcast, or is longer than the keys") {
    OneNode wide(23, "Attention", qkv4, {}, {floats({3, 6}, std::vector<float>(18, 0))});
    REQUIRE_THROWS_WITH(wide.infer(), Catch::Contains("attn_mask f32[3,6] does not broadcast"));
    OneNode heads(23, "Attention", qkv4, {}, {floats({3, 3, 5}, std::vector<float>(45, 0))});
    REQUIRE_THROWS_WITH(heads.infer(), Catch::Contains("does not broadcast"));
  }
  SECTION("an integer mask") {
    OneNode g(23, "Attention", qkv4, {}, {int64s({5}, {0, 0, 0, 0, 0})});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("it must be bool or Q's type"));
  }
  SECTION("bad attribute values") {
    OneNode mode(23, "Attention", qkv4, {{"qk_matmul_output_mode", int64_t{4}}});
    REQUIRE_THROWS_WITH(mode.infer(), Catch::Contains("must be 0, 1, 2 or 3, not 4"));
    OneNode softcap(23, "Attention", qkv4, {{"softcap", -1.0f}});
    REQUIRE_THROWS_WITH(softcap.infer(), Catch::Contains("softcap must be 0 (none) or positive"));
    OneNode causal(23, "Attention", qkv4, {{"is_causal", int64_t{2}}});
    REQUIRE_THROWS_WITH(causal.infer(), Catch::Contains("is_causal must be 0 or 1"));
    OneNode precision(23, "Attention", qkv4, {{"softmax_precision", int64_t{7}}});
    REQUIRE_THROWS_WITH(precision.infer(), Catch::Contains("not a floating-point element type"));
  }
  SECTION("past_key without past_value, and a past of the wrong head size") {
    std::vector<TensorType> inputs = qkv4;
    inputs.push_back(f32({5}));
    inputs.push_back(f32({1, 2, 7, 4}));
    OneNode alone(23, "Attention", inputs);
    alone.graph.set_input(alone.node, 3, nullptr);
    REQUIRE_THROWS_WITH(alone.infer(), Catch::Contains("must be given together"));
    inputs.push_back(f32({1, 2, 7, 3}));
    OneNode wrong(23, "Attention", inputs);
    REQUIRE_THROWS_WITH(wrong.infer(), Catch::Contains("must be [1, 2, past, 4]"));
  }
  SECTION("nonpad_kv_seqlen before opset 24, and a length past the keys") {
    OneNode early(23, "Attention", qkv4, {}, {int64s({1}, {2})});
    early.graph.set_input(early.node, 6, early.node->input(3));
    early.graph.set_input(early.node, 3, nullptr);
    REQUIRE_THROWS_WITH(early.infer(), Catch::Contains("needs opset 24, not 23"));
    OneNode longer(24, "Attention", qkv4, {}, {int64s({1}, {6})});
    longer.graph.set_input(longer.node, 6, longer.node->input(3));
    longer.graph.set_input(longer.node, 3, nullptr);
    const std::vector<Tensor> inputs = {floats({1, 2, 3, 4}, std::vector<float>(24, 0)),
                                        floats({1, 2, 5, 4}, std::vector<float>(40, 0)),
                                        floats({1, 2, 5, 4}, std::vector<float>(40, 0))};
    REQUIRE_THROWS_WITH(longer.run(inputs),
                        Catch::Contains("nonpad_kv_seqlen 6 is outside [0, 5]"));
  }
}
