// Exercise m5-nearest-model, solved: the cost model `nearest`, which predicts a
// candidate's score from the measured candidates whose features are most like its own.
// Course module 5.
//
// k nearest neighbours (k = 5): the prediction is the mean score of the 5 training
// samples closest to the candidate. Distances are Euclidean after standardising each
// feature with the training set's mean and standard deviation: raw features differ in
// scale by orders of magnitude (a byte count beside a 0/1 flag), and unscaled, the largest
// would decide alone. A feature constant in training says nothing and is left out.
// Training only stores the samples, so it costs nothing; a prediction costs one pass over
// them, which is fine for the few thousand a tuning run measures.
//
// Chapter: docs/module5-autotuning.md#4-cost-models
#include "minic/autotune/cost_model.h"
#include "minic/support/error.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace minic::autotune {
namespace {

constexpr size_t kNeighbours = 5;

class NearestModel : public CostModel {
 public:
  std::string name() const override { return "nearest"; }

  void train(const std::vector<std::vector<float>>& features,
             const std::vector<double>& scores) override {
    if (features.size() != scores.size()) {
      fail("cost model nearest: {} feature vectors but {} scores", features.size(),
           scores.size());
    }
    if (features.empty()) return;  // an empty list leaves the model as it was
    const size_t width = features[0].size();
    mean_.assign(width, 0.0);
    scale_.assign(width, 0.0);
    for (const std::vector<float>& f : features) {
      for (size_t d = 0; d < width; ++d) mean_[d] += f[d];
    }
    for (double& m : mean_) m /= static_cast<double>(features.size());
    for (const std::vector<float>& f : features) {
      for (size_t d = 0; d < width; ++d) scale_[d] += (f[d] - mean_[d]) * (f[d] - mean_[d]);
    }
    for (double& s : scale_) {
      double deviation = std::sqrt(s / static_cast<double>(features.size()));
      s = deviation > 0 ? 1 / deviation : 0;  // a constant feature: left out
    }
    samples_.clear();
    for (const std::vector<float>& f : features) samples_.push_back(standardised(f));
    scores_ = scores;
  }

  std::vector<double> predict(const std::vector<std::vector<float>>& features) override {
    std::vector<double> predictions;
    for (const std::vector<float>& f : features) predictions.push_back(predict_one(f));
    return predictions;
  }

 private:
  std::vector<double> standardised(const std::vector<float>& f) const {
    std::vector<double> z(f.size());
    for (size_t d = 0; d < f.size(); ++d) z[d] = (f[d] - mean_[d]) * scale_[d];
    return z;
  }

  double predict_one(const std::vector<float>& f) const {
    if (samples_.empty()) return 0;  // not trained yet
    std::vector<double> z = standardised(f);
    std::vector<std::pair<double, double>> by_distance;  // (squared distance, score)
    for (size_t i = 0; i < samples_.size(); ++i) {
      double distance = 0;
      for (size_t d = 0; d < z.size(); ++d) {
        distance += (z[d] - samples_[i][d]) * (z[d] - samples_[i][d]);
      }
      by_distance.emplace_back(distance, scores_[i]);
    }
    size_t k = std::min(kNeighbours, by_distance.size());
    std::partial_sort(by_distance.begin(), by_distance.begin() + k, by_distance.end());
    double sum = 0;
    for (size_t i = 0; i < k; ++i) sum += by_distance[i].second;
    return sum / static_cast<double>(k);
  }

  std::vector<double> mean_;
  std::vector<double> scale_;  // 1 / standard deviation, 0 for a constant feature
  std::vector<std::vector<double>> samples_;
  std::vector<double> scores_;
};

std::unique_ptr<CostModel> make_nearest_model(uint64_t /*seed*/) {
  return std::make_unique<NearestModel>();
}

}  // namespace

MINIC_REGISTER_COST_MODEL("nearest", make_nearest_model,
                          "exercise m5-nearest-model: the mean score of the 5 nearest");

}  // namespace minic::autotune
