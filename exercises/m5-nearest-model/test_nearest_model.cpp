// The Catch2 tests of exercise m5-nearest-model (test.mgraph runs them with lit, the seed of
// the hidden data given by --rng-seed).
//
// Feature vectors like a tuner's: six features of very different scales (one in
// thousands, one in thousandths) and one that is the same in every training sample. The
// scores come from a hidden smooth function of the features, drawn from the seed. The
// model made by name ("nearest") must predict, for new vectors, exactly the mean score of
// the 5 nearest training samples after standardising each feature (a constant one left
// out), as the test computes it; must forget one training set when given another; keep
// what it learnt when given an empty one; and refuse a training set whose feature and
// score counts differ.
#include "minic/autotune/cost_model.h"
#include "minic/support/error.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

using namespace minic;
using namespace minic::autotune;

namespace {

constexpr double kScales[] = {1.0, 1000.0, 0.001, 1.0, 50.0};
constexpr float kConstant = 7;  // the sixth feature of every training sample

struct Data {
  std::vector<std::vector<float>> features;
  std::vector<double> scores;
};

// `count` samples whose scores peak around `centre` (in [0, 1]^5, before scaling).
Data make_data(std::mt19937_64& rng, const std::vector<double>& centre, int count,
               float sixth) {
  std::uniform_real_distribution<double> unit(0, 1);
  Data data;
  for (int i = 0; i < count; ++i) {
    std::vector<float> f;
    double distance = 0;
    for (size_t d = 0; d < 5; ++d) {
      double u = unit(rng);
      distance += (u - centre[d]) * (u - centre[d]);
      f.push_back(static_cast<float>(u * kScales[d]));
    }
    f.push_back(sixth);
    data.features.push_back(f);
    data.scores.push_back(std::exp(-3 * distance));
  }
  return data;
}

// The reference: the mean score of the 5 training samples nearest to `query`, each
// feature standardised with the training mean and standard deviation, constant ones out.
double reference(const Data& train, const std::vector<float>& query) {
  const size_t width = query.size();
  const double n = static_cast<double>(train.features.size());
  std::vector<double> mean(width, 0), deviation(width, 0);
  for (const auto& f : train.features) for (size_t d = 0; d < width; ++d) mean[d] += f[d];
  for (double& m : mean) m /= n;  // exact for the constant feature: its deviation is 0
  for (const auto& f : train.features) {
    for (size_t d = 0; d < width; ++d) deviation[d] += (f[d] - mean[d]) * (f[d] - mean[d]) / n;
  }
  std::vector<std::pair<double, double>> by_distance;
  for (size_t i = 0; i < train.features.size(); ++i) {
    double distance = 0;
    for (size_t d = 0; d < width; ++d) {
      if (deviation[d] == 0) continue;
      double diff = (query[d] - train.features[i][d]) / std::sqrt(deviation[d]);
      distance += diff * diff;
    }
    by_distance.emplace_back(distance, train.scores[i]);
  }
  std::sort(by_distance.begin(), by_distance.end());
  double sum = 0;
  for (size_t i = 0; i < 5; ++i) sum += by_distance[i].second;
  return sum / 5;
}

void check_predictions(CostModel& model, const Data& train, const Data& queries) {
  std::vector<double> predicted = model.predict(queries.features);
  REQUIRE(predicted.size() == queries.features.size());
  for (size_t i = 0; i < predicted.size(); ++i) {
    INFO("query " << i);
    CHECK(predicted[i] == Approx(reference(train, queries.features[i])).margin(1e-6));
  }
}

}  // namespace

TEST_CASE("nearest predicts the mean score of the 5 nearest standardised samples",
          "[m5-nearest-model]") {
  const uint64_t seed = Catch::rngSeed();
  INFO("seed " << seed << " (--rng-seed " << seed << " runs this case again)");
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<double> centre, other;
  for (int d = 0; d < 5; ++d) centre.push_back(unit(rng));
  for (int d = 0; d < 5; ++d) other.push_back(unit(rng));

  std::unique_ptr<CostModel> model = make_cost_model("nearest", seed);
  CHECK(model->name() == "nearest");
  // Untrained, it still answers, one finite score per candidate.
  Data queries = make_data(rng, centre, 40, /*sixth=*/3);
  std::vector<double> untrained = model->predict(queries.features);
  REQUIRE(untrained.size() == queries.features.size());
  for (double score : untrained) CHECK(std::isfinite(score));

  Data train = make_data(rng, centre, 150, kConstant);
  model->train(train.features, train.scores);
  check_predictions(*model, train, queries);

  // A second training set replaces the first, and an empty one changes nothing.
  Data second = make_data(rng, other, 90, kConstant);
  model->train(second.features, second.scores);
  check_predictions(*model, second, queries);
  model->train({}, {});
  check_predictions(*model, second, queries);

  CHECK_THROWS_AS(model->train(train.features, {1.0, 2.0}), Error);
}
