// Cost models: predicting which candidates run fastest, without running them.
//
// Course module 5. Measuring a candidate takes a compile and many calls; predicting takes
// microseconds. The search asks the model to rank thousands of candidates and measures
// only the best few. Two models share one interface:
//   - xgboost: gradient-boosted regression trees (libxgboost, the model Ansor used),
//     trained online: after every round of measurements, again on every candidate
//     measured so far. The target is a normalised throughput: the task's best latency divided by the
//     candidate's (1 for the best, near 0 for slow ones; 0 for a failed candidate), so
//     tasks of different sizes share one model.
//   - random: a random score for every candidate: the search without a model, to compare
//     against.
//
//   std::unique_ptr<CostModel> model = make_cost_model("xgboost", /*seed=*/1);
//   model->train(features, scores);           // measured so far
//   std::vector<double> s = model->predict(candidate_features);   // higher: faster
//
// Chapter: docs/module5-autotuning.md#4-cost-models
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace minic::autotune {

class CostModel {
 public:
  virtual ~CostModel() = default;
  // "xgboost" or "random".
  virtual std::string name() const = 0;
  // Trains on these samples, forgetting what it learnt before: one feature vector and one
  // score (normalised throughput in [0, 1]) per measured candidate. The tuner passes every
  // measurement so far each time, scored against each task's best so far, which changes
  // as the tuning goes on. An empty list leaves the model as it was.
  virtual void train(const std::vector<std::vector<float>>& features,
                     const std::vector<double>& scores) = 0;
  // A score per feature vector: higher means predicted faster. Before any training,
  // every model still answers (the xgboost model with random scores).
  virtual std::vector<double> predict(const std::vector<std::vector<float>>& features) = 0;
};

// "xgboost" or "random"; an Error naming the kind and the known ones otherwise.
std::unique_ptr<CostModel> make_cost_model(const std::string& kind, uint64_t seed);

}  // namespace minic::autotune
