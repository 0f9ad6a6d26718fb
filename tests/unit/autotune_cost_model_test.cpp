// Tests of the cost models: the XGBoost model learns to rank, the random model is a
// function of its seed, and both check what they are given. Course module 5.
#include "minic/autotune/cost_model.h"

#include "minic/support/error.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace minic::autotune {
namespace {

constexpr size_t kFeatureCount = 8;

std::vector<std::vector<float>> random_features(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<std::vector<float>> rows(count, std::vector<float>(kFeatureCount));
  for (std::vector<float>& row : rows) {
    for (float& value : row) value = uniform(rng);
  }
  return rows;
}

// What the model should learn: a score in [0, 1] from four of the eight features (the
// other four are noise), with a product and a step, as throughput depends on tile sizes.
double true_score(const std::vector<float>& features) {
  return 0.4 * features[0] + 0.3 * features[1] * features[2] +
         0.3 * (features[3] > 0.5f ? 1.0 : 0.0);
}

std::vector<double> true_scores(const std::vector<std::vector<float>>& rows) {
  std::vector<double> scores;
  for (const std::vector<float>& row : rows) scores.push_back(true_score(row));
  return scores;
}

// Ranks from 1, ties sharing their average rank.
std::vector<double> ranks_of(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (size_t start = 0; start < order.size();) {
    size_t end = start;
    while (end + 1 < order.size() && values[order[end + 1]] == values[order[start]]) ++end;
    double average = (static_cast<double>(start + end) / 2.0) + 1.0;
    for (size_t i = start; i <= end; ++i) ranks[order[i]] = average;
    start = end + 1;
  }
  return ranks;
}

// Spearman's rank correlation: 1 when `a` and `b` put the items in the same order.
double rank_correlation(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> rank_a = ranks_of(a);
  std::vector<double> rank_b = ranks_of(b);
  double mean = (static_cast<double>(a.size()) + 1.0) / 2.0;
  double covariance = 0;
  double variance_a = 0;
  double variance_b = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    covariance += (rank_a[i] - mean) * (rank_b[i] - mean);
    variance_a += (rank_a[i] - mean) * (rank_a[i] - mean);
    variance_b += (rank_b[i] - mean) * (rank_b[i] - mean);
  }
  return covariance / std::sqrt(variance_a * variance_b);
}

TEST_CASE("the xgboost model learns to rank held-out candidates", "[autotune_model]") {
  std::vector<std::vector<float>> training = random_features(200, 1);
  std::vector<std::vector<float>> held_out = random_features(100, 2);
  std::unique_ptr<CostModel> model = make_cost_model("xgboost", 7);
  CHECK(model->name() == "xgboost");

  // Before any training it answers with random scores: no better than chance.
  std::vector<double> untrained = model->predict(held_out);
  REQUIRE(untrained.size() == held_out.size());
  CHECK(std::abs(rank_correlation(untrained, true_scores(held_out))) < 0.5);

  model->train(training, true_scores(training));
  std::vector<double> predicted = model->predict(held_out);
  REQUIRE(predicted.size() == held_out.size());
  double correlation = rank_correlation(predicted, true_scores(held_out));
  INFO("rank correlation on held-out vectors: " << correlation);
  CHECK(correlation > 0.8);
}

TEST_CASE("the xgboost model trains afresh on each call", "[autotune_model]") {
  std::vector<std::vector<float>> first = random_features(60, 3);
  std::vector<std::vector<float>> second = random_features(60, 4);
  std::vector<std::vector<float>> both = first;
  both.insert(both.end(), second.begin(), second.end());
  std::vector<std::vector<float>> probe = random_features(20, 5);

  std::unique_ptr<CostModel> in_two = make_cost_model("xgboost", 1);
  in_two->train(first, true_scores(first));
  std::vector<double> after_first = in_two->predict(probe);
  in_two->train(both, true_scores(both));
  std::unique_ptr<CostModel> in_one = make_cost_model("xgboost", 1);
  in_one->train(both, true_scores(both));

  // What it learnt from `first` alone is gone: the model is that of `both`.
  CHECK(in_two->predict(probe) == in_one->predict(probe));
  CHECK(in_two->predict(probe) != after_first);
  in_two->train({}, {});  // no samples: the model stays
  CHECK(in_two->predict(probe) == in_one->predict(probe));
}

TEST_CASE("the xgboost model checks its inputs and keeps its state on error",
          "[autotune_model]") {
  std::vector<std::vector<float>> training = random_features(50, 6);
  std::unique_ptr<CostModel> model = make_cost_model("xgboost", 1);
  CHECK_THROWS_AS(model->train(training, std::vector<double>(49, 0.5)), Error);

  model->train(training, true_scores(training));
  std::vector<double> before = model->predict(training);
  std::vector<std::vector<float>> short_rows(3, std::vector<float>(kFeatureCount - 1, 0.5f));
  CHECK_THROWS_WITH(model->train(short_rows, {0.1, 0.2, 0.3}),
                    Catch::Contains("7 features, expected 8"));
  CHECK_THROWS_AS(model->predict(short_rows), Error);
  CHECK(model->predict(training) == before);
  CHECK(model->predict({}).empty());
}

TEST_CASE("the random model is a function of its seed", "[autotune_model]") {
  std::vector<std::vector<float>> rows = random_features(30, 8);
  std::unique_ptr<CostModel> first = make_cost_model("random", 11);
  std::unique_ptr<CostModel> again = make_cost_model("random", 11);
  std::unique_ptr<CostModel> other = make_cost_model("random", 12);
  CHECK(first->name() == "random");
  std::vector<double> scores = first->predict(rows);
  REQUIRE(scores.size() == rows.size());
  CHECK(again->predict(rows) == scores);
  CHECK(other->predict(rows) != scores);
  for (double score : scores) {
    CHECK(score >= 0.0);
    CHECK(score < 1.0);
  }
  // Training changes nothing: it stays random (the next draws, not the first again).
  first->train(rows, true_scores(rows));
  again->train(rows, true_scores(rows));
  std::vector<double> next = first->predict(rows);
  CHECK(again->predict(rows) == next);
  CHECK(next != scores);
  CHECK_THROWS_AS(first->train(rows, {0.5}), Error);
}

TEST_CASE("the untrained xgboost model's scores are a function of its seed",
          "[autotune_model]") {
  std::vector<std::vector<float>> rows = random_features(30, 9);
  CHECK(make_cost_model("xgboost", 3)->predict(rows) ==
        make_cost_model("xgboost", 3)->predict(rows));
  CHECK(make_cost_model("xgboost", 3)->predict(rows) !=
        make_cost_model("xgboost", 4)->predict(rows));
}

TEST_CASE("an unknown cost model is an error naming the known ones", "[autotune_model]") {
  CHECK_THROWS_WITH(make_cost_model("neural", 1),
                    Catch::Contains("'neural'") && Catch::Contains("random, xgboost"));
}

}  // namespace
}  // namespace minic::autotune
