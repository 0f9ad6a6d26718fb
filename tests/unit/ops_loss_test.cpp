// Unit tests for the loss ops: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss. Small
// graphs whose results are worked out by hand in the comments. Course module 2.
#include "ops_test_util.h"

#include <cmath>
#include <string>

using namespace minic;
using namespace minic::test;

namespace {

// The example of the ONNX specification: N = 2, C = 3, d1 = 2, as [n][c][d1]:
//   input[0] = [[1, 2], [2, 2], [3, 2]]     input[1] = [[0, 1], [2, 2], [1, 2]]
//   target   = [[2, 1], [0, 2]]
// so loss[n][d] = -input[n][target[n][d]][d] = [[-3, -2], [-0, -2]].
const Tensor kInput = floats({2, 3, 2}, {1, 2, 2, 2, 3, 2, 0, 1, 2, 2, 1, 2});
const Tensor kTarget = int64s({2, 2}, {2, 1, 0, 2});
const Tensor kWeight = floats({3}, {0.2f, 0.3f, 0.1f});
const TensorType kInputType{DType::f32, {2, 3, 2}};
const TensorType kTargetType{DType::i64, {2, 2}};
const TensorType kWeightType{DType::f32, {3}};

Attributes reduction(const std::string& mode) { return {{"reduction", mode}}; }

Attributes reduction(const std::string& mode, int64_t ignore_index) {
  return {{"reduction", mode}, {"ignore_index", ignore_index}};
}

}  // namespace

// --- NegativeLogLikelihoodLoss ------------------------------------------------------------------

TEST_CASE("NegativeLogLikelihoodLoss without reduction negates the target's entries",
          "[ops][nllloss]") {
  OneNode g(13, "NegativeLogLikelihoodLoss", {kInputType, kTargetType}, reduction("none"));
  require_values(g.run({kInput, kTarget}), {2, 2}, {-3, -2, 0, -2});
}

TEST_CASE("NegativeLogLikelihoodLoss sums and averages, weighted by class",
          "[ops][nllloss]") {
  // Unweighted mean: (-3 - 2 - 0 - 2) / 4 = -1.75 (reduction 'mean' is the default).
  OneNode mean(13, "NegativeLogLikelihoodLoss", {kInputType, kTargetType});
  require_values(mean.run({kInput, kTarget}), {}, {-1.75});
  // Weights of the targets 2, 1, 0, 2: 0.1, 0.3, 0.2, 0.1.
  //   sum  = -3 * 0.1 - 2 * 0.3 - 0 * 0.2 - 2 * 0.1 = -1.1
  //   mean = -1.1 / (0.1 + 0.3 + 0.2 + 0.1) = -1.1 / 0.7
  const std::vector<TensorType> types = {kInputType, kTargetType, kWeightType};
  OneNode sum(13, "NegativeLogLikelihoodLoss", types, reduction("sum"));
  require_values(sum.run({kInput, kTarget, kWeight}), {}, {-1.1});
  OneNode weighted(13, "NegativeLogLikelihoodLoss", types, reduction("mean"));
  require_values(weighted.run({kInput, kTarget, kWeight}), {}, {-1.1 / 0.7});
}

TEST_CASE("NegativeLogLikelihoodLoss leaves out the targets equal to ignore_index",
          "[ops][nllloss]") {
  // ignore_index = 2 drops positions [0][0] and [1][1]; the rest lose -2 (class 1, weight
  // 0.3) and -0 (class 0, weight 0.2).
  //   none: [0, -2, -0, 0]
  //   mean: (-2 - 0) / 2 = -1            weighted mean: (-0.6 - 0) / (0.3 + 0.2) = -1.2
  OneNode none(13, "NegativeLogLikelihoodLoss", {kInputType, kTargetType},
               reduction("none", 2));
  require_values(none.run({kInput, kTarget}), {2, 2}, {0, -2, 0, 0});
  OneNode mean(13, "NegativeLogLikelihoodLoss", {kInputType, kTargetType},
               reduction("mean", 2));
  require_values(mean.run({kInput, kTarget}), {}, {-1});
  OneNode weighted(13, "NegativeLogLikelihoodLoss", {kInputType, kTargetType, kWeightType},
                   reduction("mean", 2));
  require_values(weighted.run({kInput, kTarget, kWeight}), {}, {-1.2});
}

TEST_CASE("NegativeLogLikelihoodLoss of [N, C] in float16 with i32 targets",
          "[ops][nllloss]") {
  // input = [[0.5, 1.5], [2.5, 3.5]], target = [1, 0]: loss = [-1.5, -2.5], sum -4.
  Tensor input = floats({2, 2}, {0.5f, 1.5f, 2.5f, 3.5f}).cast(DType::f16);
  Tensor target = int64s({2}, {1, 0}).cast(DType::i32);
  OneNode g(22, "NegativeLogLikelihoodLoss", {{DType::f16, {2, 2}}, {DType::i32, {2}}},
            reduction("sum"));
  Tensor loss = g.run({input, target});
  REQUIRE(loss.dtype() == DType::f16);
  require_values(loss, {}, {-4});
}

TEST_CASE("NegativeLogLikelihoodLoss rejects bad shapes, types and attributes",
          "[ops][nllloss][errors]") {
  using Catch::Contains;
  OneNode bad_reduction(13, "NegativeLogLikelihoodLoss", {kInputType, kTargetType},
                        reduction("average"));
  REQUIRE_THROWS_WITH(bad_reduction.infer(), Contains("reduction 'average' is not one of"));
  OneNode vector(13, "NegativeLogLikelihoodLoss", {{DType::f32, {3}}, {DType::i64, {}}});
  REQUIRE_THROWS_WITH(vector.infer(), Contains("it needs shape [N, C]"));
  OneNode ints(13, "NegativeLogLikelihoodLoss", {{DType::i64, {2, 3}}, {DType::i64, {2}}});
  REQUIRE_THROWS_WITH(ints.infer(), Contains("takes floating-point scores"));
  OneNode float_target(13, "NegativeLogLikelihoodLoss", {kInputType, {DType::f32, {2, 2}}});
  REQUIRE_THROWS_WITH(float_target.infer(), Contains("must be i32 or i64"));
  OneNode short_target(13, "NegativeLogLikelihoodLoss", {kInputType, {DType::i64, {2}}});
  REQUIRE_THROWS_WITH(short_target.infer(), Contains("needs a target of shape [2,2]"));
  OneNode short_weight(13, "NegativeLogLikelihoodLoss",
                       {kInputType, kTargetType, {DType::f32, {2}}});
  REQUIRE_THROWS_WITH(short_weight.infer(), Contains("one weight per class"));
}

TEST_CASE("NegativeLogLikelihoodLoss rejects a target that is not a class",
          "[ops][nllloss][errors]") {
  // Class 3 does not exist among C = 3 classes, and -1 is not ignore_index here.
  OneNode g(13, "NegativeLogLikelihoodLoss", {kInputType, kTargetType}, reduction("sum"));
  REQUIRE_THROWS_WITH(g.run({kInput, int64s({2, 2}, {2, 3, 0, 0})}),
                      Catch::Contains("target 3 at element 1 is not a class in [0, 3)"));
  REQUIRE_THROWS_WITH(g.run({kInput, int64s({2, 2}, {-1, 0, 0, 0})}),
                      Catch::Contains("target -1 at element 0"));
}

// --- SoftmaxCrossEntropyLoss --------------------------------------------------------------------

TEST_CASE("SoftmaxCrossEntropyLoss is the loss of the scores' log-softmax", "[ops][sce]") {
  // scores = [[0, ln 3], [ln 3, 0]]: softmax of each row is [1/4, 3/4] or [3/4, 1/4], so
  //   log_prob = [[-ln 4, ln 3/4], [ln 3/4, -ln 4]] = [[-1.386294, -0.287682], [...]]
  // labels = [1, 1]: losses [0.287682, 1.386294], mean 0.836988.
  const double ln3 = std::log(3.0);
  Tensor scores = floats({2, 2}, {0, float(ln3), float(ln3), 0});
  Tensor labels = int64s({2}, {1, 1});
  const std::vector<TensorType> types = {{DType::f32, {2, 2}}, {DType::i64, {2}}};
  OneNode none(13, "SoftmaxCrossEntropyLoss", types, reduction("none"), {}, 2);
  std::vector<Tensor> outputs = none.run_all({scores, labels});
  require_values(outputs.at(0), {2}, {0.287682, 1.386294});
  require_values(outputs.at(1), {2, 2}, {-1.386294, -0.287682, -0.287682, -1.386294});
  OneNode mean(13, "SoftmaxCrossEntropyLoss", types);
  require_values(mean.run({scores, labels}), {}, {0.836988});
}

TEST_CASE("SoftmaxCrossEntropyLoss over [N, C, d1] with weights and ignore_index",
          "[ops][sce]") {
  // N = 1, C = 2, d1 = 3; scores [[0, 0, 1000], [0, ln 3, 1000]] (class, d1): at d1 = 0
  // the classes are equal (log_prob -ln 2 each); at d1 = 1 they are [-ln 4, ln 3/4]; at
  // d1 = 2 equal again, the large scores not overflowing exp.
  // labels [0, 1, 1], weights [2, 1], ignore_index 1 (drops d1 = 1 and 2):
  //   sum = 2 * ln 2 = 1.386294       mean = 2 * ln 2 / 2 = 0.693147
  Tensor scores = floats({1, 2, 3}, {0, 0, 1000, 0, float(std::log(3.0)), 1000});
  Tensor labels = int64s({1, 3}, {0, 1, 1});
  Tensor weights = floats({2}, {2, 1});
  const std::vector<TensorType> types = {
      {DType::f32, {1, 2, 3}}, {DType::i64, {1, 3}}, {DType::f32, {2}}};
  OneNode sum(13, "SoftmaxCrossEntropyLoss", types, reduction("sum", 1));
  require_values(sum.run({scores, labels, weights}), {}, {1.386294});
  OneNode mean(13, "SoftmaxCrossEntropyLoss", types, reduction("mean", 1), {}, 2);
  std::vector<Tensor> outputs = mean.run_all({scores, labels, weights});
  require_values(outputs.at(0), {}, {0.693147});
  require_values(outputs.at(1), {1, 2, 3},
                 {-0.693147, -1.386294, -0.693147, -0.693147, -0.287682, -0.693147});
}

TEST_CASE("SoftmaxCrossEntropyLoss rejects bad shapes and attributes", "[ops][sce][errors]") {
  using Catch::Contains;
  const std::vector<TensorType> types = {{DType::f32, {2, 3}}, {DType::i64, {2}}};
  OneNode bad_reduction(13, "SoftmaxCrossEntropyLoss", types, reduction("max"));
  REQUIRE_THROWS_WITH(bad_reduction.infer(), Contains("reduction 'max' is not one of"));
  OneNode wrong_n(13, "SoftmaxCrossEntropyLoss", {{DType::f32, {2, 3}}, {DType::i64, {3}}});
  REQUIRE_THROWS_WITH(wrong_n.infer(), Contains("needs a target of shape [2]"));
  OneNode wrong_weight(13, "SoftmaxCrossEntropyLoss",
                       {{DType::f32, {2, 3}}, {DType::i64, {2}}, {DType::f64, {3}}});
  REQUIRE_THROWS_WITH(wrong_weight.infer(), Contains("must be f32[3]"));
  OneNode g(13, "SoftmaxCrossEntropyLoss", types);
  REQUIRE_THROWS_WITH(g.run({floats({2, 3}, {0, 0, 0, 0, 0, 0}), int64s({2}, {0, 5})}),
                      Contains("target 5 at element 1 is not a class in [0, 3)"));
}
