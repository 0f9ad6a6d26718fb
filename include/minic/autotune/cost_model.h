// Cost models: predicting which candidates run fastest, without running them.
//
// Course module 5. Measuring a candidate takes a compile and many calls; predicting takes
// microseconds. The search asks the model to rank thousands of candidates and measures
// only the best few. The models share one interface and are made by name (`minic tune
// --cost-model NAME`); two are built in:
//   - xgboost: gradient-boosted regression trees (libxgboost, the model Ansor used),
//     trained online: after every round of measurements, again on every candidate
//     measured so far. The target is a normalised throughput: the task's best latency divided by the
//     candidate's (1 for the best, near 0 for slow ones; 0 for a failed candidate), so
//     tasks of different sizes share one model.
//   - random: a random score for every candidate: the search without a model, to compare
//     against.
//
// Another model registers itself with one line at the end of its own file, as the
// exercise m5-nearest-model does:
//
//   MINIC_REGISTER_COST_MODEL("nearest", make_nearest_model, "k nearest neighbours");
//
//   std::unique_ptr<CostModel> model = make_cost_model("xgboost", /*seed=*/1);
//   model->train(features, scores);           // measured so far
//   std::vector<double> s = model->predict(candidate_features);   // higher: faster
//
// Chapter: docs/module5-autotuning.md#4-cost-models
#pragma once

#include <cstdint>
#include <functional>
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

// The cost model named `kind`; an Error naming the kind and the known ones otherwise.
std::unique_ptr<CostModel> make_cost_model(const std::string& kind, uint64_t seed);

// Throws the Error make_cost_model would for a `kind` no model has.
void check_cost_model_name(const std::string& kind);

// Makes a model from a seed (for its random choices).
using CostModelFactory = std::function<std::unique_ptr<CostModel>(uint64_t seed)>;

struct CostModelInfo {
  std::string name;
  std::string summary;  // one line, shown by `minic tune --help`
  CostModelFactory make;
};

// Every cost model by name: xgboost and random, and those registered.
class CostModelRegistry {
 public:
  // Registers a model; a name used twice is an internal error.
  static void add(std::string name, CostModelFactory make, std::string summary);
  // The model named `name`, or null.
  static const CostModelInfo* find(const std::string& name);
  // Every model, sorted by name.
  static std::vector<const CostModelInfo*> all();
};

// What MINIC_REGISTER_COST_MODEL makes: an object that registers a model when it is built.
struct RegisterCostModel {
  RegisterCostModel(const char* name, CostModelFactory make, const char* summary);
};

}  // namespace minic::autotune

#define MINIC_COST_MODEL_CONCAT_INNER(a, b) a##b
#define MINIC_COST_MODEL_CONCAT(a, b) MINIC_COST_MODEL_CONCAT_INNER(a, b)

// Registers the cost model made by `factory` (a CostModelFactory) under `name`.
#define MINIC_REGISTER_COST_MODEL(name, factory, summary)                                  \
  static const ::minic::autotune::RegisterCostModel MINIC_COST_MODEL_CONCAT(               \
      minic_cost_model_, __LINE__)(name, factory, summary)
