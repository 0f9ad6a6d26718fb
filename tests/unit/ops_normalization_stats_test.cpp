// Unit tests for the normalisations by group statistics (src/ops/normalization_stats.cpp):
// RMSNormalization, LpNormalization, GroupNormalization and MeanVarianceNormalization.
// Small cases worked out by hand in the comments, and the errors for bad attributes and
// shapes. Course module 2.
#include "ops_test_util.h"

using namespace minic;
using namespace minic::test;

// --- RMSNormalization --------------------------------------------------------------------------

TEST_CASE("RMSNormalization divides each row by its root mean square", "[ops][rmsnorm]") {
  // Row [1, 7]: mean of squares (1 + 49) / 2 = 25, rms 5 -> [0.2, 1.4], scaled by [2, 0.5]
  // -> [0.4, 0.7]. Row [0, 2]: mean of squares 2, rms sqrt 2 -> [0, 1.414214] * [2, 0.5].
  OneNode g(23, "RMSNormalization", {{DType::f32, {2, 2}}}, {{"epsilon", 0.0f}},
            {floats({2}, {2, 0.5f})});
  require_values(g.run({floats({2, 2}, {1, 7, 0, 2})}), {2, 2}, {0.4, 0.7, 0, 0.707107});
}

TEST_CASE("RMSNormalization with axis 0 takes one rms over the whole tensor", "[ops][rmsnorm]") {
  // Squares 1, 49, 1, 49: mean 25, rms 5. Scale [[1, 1], [10, 10]] has X's shape.
  OneNode g(23, "RMSNormalization", {{DType::f32, {2, 2}}}, {{"axis", int64_t{0}},
            {"epsilon", 0.0f}}, {floats({2, 2}, {1, 1, 10, 10})});
  require_values(g.run({floats({2, 2}, {1, 7, -1, 7})}), {2, 2}, {0.2, 1.4, -2, 14});
}

TEST_CASE("RMSNormalization's output has Scale's element type", "[ops][rmsnorm]") {
  // Y is of type V (Scale's), which may differ from X's: f16 in, f32 out.
  OneNode g(23, "RMSNormalization", {{DType::f16, {1, 2}}}, {{"epsilon", 0.0f}},
            {floats({2}, {1, 1})});
  Tensor y = g.run({floats({1, 2}, {3, 4}).cast(DType::f16)});
  REQUIRE(y.dtype() == DType::f32);
  // Mean of squares (9 + 16) / 2 = 12.5, rms 3.535534.
  require_values(y, {1, 2}, {0.848528, 1.131371}, 1e-5);
}

TEST_CASE("RMSNormalization rejects bad axes, scales, stash types and element types",
          "[ops][rmsnorm]") {
  const TensorType x{DType::f32, {2, 3}};
  OneNode wide_scale(23, "RMSNormalization", {x}, {}, {floats({2}, {1, 1})});
  REQUIRE_THROWS_WITH(wide_scale.infer(), Catch::Contains("do not broadcast"));
  OneNode tall_scale(23, "RMSNormalization", {x}, {}, {floats({4, 1}, {1, 1, 1, 1})});
  REQUIRE_THROWS_WITH(tall_scale.infer(), Catch::Contains("do not broadcast"));
  OneNode growing(23, "RMSNormalization", {x}, {}, {floats({2, 2, 3}, std::vector<float>(12))});
  REQUIRE_THROWS_WITH(growing.infer(), Catch::Contains("does not broadcast to the shape"));
  OneNode axis(23, "RMSNormalization", {x}, {{"axis", int64_t{2}}}, {floats({3}, {1, 1, 1})});
  REQUIRE_THROWS_WITH(axis.infer(), Catch::Contains("axis 2 is out of range for rank 2"));
  OneNode stash(23, "RMSNormalization", {x}, {{"stash_type", int64_t{7}}},
                {floats({3}, {1, 1, 1})});
  REQUIRE_THROWS_WITH(stash.infer(), Catch::Contains("stash_type 7 is not a floating-point"));
  OneNode ints(23, "RMSNormalization", {{DType::i32, {2, 3}}}, {}, {floats({3}, {1, 1, 1})});
  REQUIRE_THROWS_WITH(ints.infer(), Catch::Contains("takes a floating-point tensor"));
}

// --- LpNormalization ---------------------------------------------------------------------------

TEST_CASE("LpNormalization divides by the L2 norm along the last axis", "[ops][lpnorm]") {
  // [3, 4] has norm 5 -> [0.6, 0.8]; an all-zero row stays zero instead of 0 / 0.
  OneNode g(22, "LpNormalization", {{DType::f32, {2, 2}}});
  require_values(g.run({floats({2, 2}, {3, 4, 0, 0})}), {2, 2}, {0.6, 0.8, 0, 0});
}

TEST_CASE("LpNormalization with p = 1 divides by the sum of magnitudes", "[ops][lpnorm]") {
  // Along axis 0: column [1, -3] has L1 norm 4 -> [0.25, -0.75]; column [2, 2] -> [0.5, 0.5].
  OneNode g(1, "LpNormalization", {{DType::f64, {2, 2}}}, {{"p", int64_t{1}},
            {"axis", int64_t{0}}});
  Tensor y = g.run({floats({2, 2}, {1, 2, -3, 2}).cast(DType::f64)});
  REQUIRE(y.dtype() == DType::f64);
  require_values(y, {2, 2}, {0.25, 0.5, -0.75, 0.5});
}

TEST_CASE("LpNormalization rejects p other than 1 and 2, and scalars", "[ops][lpnorm]") {
  OneNode p3(22, "LpNormalization", {{DType::f32, {2, 2}}}, {{"p", int64_t{3}}});
  REQUIRE_THROWS_WITH(p3.infer(), Catch::Contains("p is 3; LpNormalization takes p = 1 or 2"));
  OneNode scalar(22, "LpNormalization", {{DType::f32, {}}});
  REQUIRE_THROWS_WITH(scalar.infer(), Catch::Contains("input is a scalar"));
  OneNode axis(22, "LpNormalization", {{DType::f32, {2, 2}}}, {{"axis", int64_t{-3}}});
  REQUIRE_THROWS_WITH(axis.infer(), Catch::Contains("out of range"));
}

// --- GroupNormalization ------------------------------------------------------------------------

namespace {

// X [1, 4, 1, 2] in 2 groups of 2 channels:
//   group 0 = channels 0, 1 = [1, 3, 1, 3]: mean 2, variance 1 -> [-1, 1, -1, 1]
//   group 1 = channels 2, 3 = [0, 0, 4, 4]: mean 2, variance 4 -> [-1, -1, 1, 1]
const Tensor kGroupX = floats({1, 4, 1, 2}, {1, 3, 1, 3, 0, 0, 4, 4});
const TensorType kGroupType{DType::f32, {1, 4, 1, 2}};

}  // namespace

TEST_CASE("GroupNormalization at opset 21 scales and shifts per channel", "[ops][groupnorm]") {
  // Scale [1, 2, 3, 4], bias [0, 0, 0, 10]: channel 1 [-2, 2], channel 2 [-3, -3],
  // channel 3 [1 * 4 + 10, 1 * 4 + 10].
  OneNode g(21, "GroupNormalization", {kGroupType},
            {{"num_groups", int64_t{2}}, {"epsilon", 0.0f}},
            {floats({4}, {1, 2, 3, 4}), floats({4}, {0, 0, 0, 10})});
  require_values(g.run({kGroupX}), {1, 4, 1, 2}, {-1, 1, -2, 2, -3, -3, 14, 14});
}

TEST_CASE("GroupNormalization at opset 18 scales and shifts per group", "[ops][groupnorm]") {
  // Scale [1, 2], bias [0, 1]: group 1 becomes [-1, -1, 1, 1] * 2 + 1 = [-1, -1, 3, 3].
  OneNode g(18, "GroupNormalization", {kGroupType},
            {{"num_groups", int64_t{2}}, {"epsilon", 0.0f}},
            {floats({2}, {1, 2}), floats({2}, {0, 1})});
  require_values(g.run({kGroupX}), {1, 4, 1, 2}, {-1, 1, -1, 1, -1, -1, 3, 3});
}

TEST_CASE("GroupNormalization rejects bad group counts and parameter shapes",
          "[ops][groupnorm]") {
  const std::vector<Tensor> per_channel = {floats({4}, {1, 1, 1, 1}), floats({4}, {0, 0, 0, 0})};
  OneNode three(21, "GroupNormalization", {kGroupType}, {{"num_groups", int64_t{3}}},
                per_channel);
  REQUIRE_THROWS_WITH(three.infer(), Catch::Contains("num_groups is 3; it must be a positive "
                                                     "divisor of the 4 channels"));
  OneNode zero(21, "GroupNormalization", {kGroupType}, {{"num_groups", int64_t{0}}},
               per_channel);
  REQUIRE_THROWS_WITH(zero.infer(), Catch::Contains("positive divisor"));
  OneNode missing(21, "GroupNormalization", {kGroupType}, {}, per_channel);
  REQUIRE_THROWS_WITH(missing.infer(), Catch::Contains("missing required attribute 'num_groups'"));
  OneNode per_group(21, "GroupNormalization", {kGroupType}, {{"num_groups", int64_t{2}}},
                    {floats({2}, {1, 1}), floats({2}, {0, 0})});
  REQUIRE_THROWS_WITH(per_group.infer(), Catch::Contains("one value per channel ([4])"));
  OneNode old_form(18, "GroupNormalization", {kGroupType}, {{"num_groups", int64_t{2}}},
                   per_channel);
  REQUIRE_THROWS_WITH(old_form.infer(), Catch::Contains("one value per group ([2])"));
  OneNode flat(21, "GroupNormalization", {{DType::f32, {4}}}, {{"num_groups", int64_t{2}}},
               per_channel);
  REQUIRE_THROWS_WITH(flat.infer(), Catch::Contains("at least 2 dimensions"));
}

// --- MeanVarianceNormalization -----------------------------------------------------------------

TEST_CASE("MeanVarianceNormalization standardises each channel by default", "[ops][mvn]") {
  // Default axes [0, 2, 3]: channel 0 = [1, 3], mean 2, standard deviation 1 -> [-1, 1];
  // channel 1 = [5, 5] has deviation 0, and 0 / (0 + 1e-9) = 0.
  OneNode g(13, "MeanVarianceNormalization", {{DType::f32, {1, 2, 1, 2}}});
  require_values(g.run({floats({1, 2, 1, 2}, {1, 3, 5, 5})}), {1, 2, 1, 2}, {-1, 1, 0, 0});
}

TEST_CASE("MeanVarianceNormalization over given axes", "[ops][mvn]") {
  // axes [1] on [2, 2]: row [0, 4] has mean 2 and standard deviation 2 -> [-1, 1].
  OneNode g(9, "MeanVarianceNormalization", {{DType::f32, {2, 2}}},
            {{"axes", std::vector<int64_t>{-1}}});
  require_values(g.run({floats({2, 2}, {0, 4, 1, 2})}), {2, 2}, {-1, 1, -1, 1});
}

TEST_CASE("MeanVarianceNormalization rejects repeated and out-of-range axes", "[ops][mvn]") {
  const TensorType x{DType::f32, {2, 2}};
  OneNode twice(13, "MeanVarianceNormalization", {x}, {{"axes", std::vector<int64_t>{0, -2}}});
  REQUIRE_THROWS_WITH(twice.infer(), Catch::Contains("axis 0 appears twice"));
  // The default axes [0, 2, 3] need rank 4.
  OneNode rank2(13, "MeanVarianceNormalization", {x});
  REQUIRE_THROWS_WITH(rank2.infer(), Catch::Contains("axis 2 is out of range for rank 2"));
  OneNode ints(13, "MeanVarianceNormalization", {{DType::i64, {1, 1, 1, 1}}});
  REQUIRE_THROWS_WITH(ints.infer(), Catch::Contains("takes a floating-point tensor"));
}
