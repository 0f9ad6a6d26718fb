// Cost models: gradient-boosted trees (XGBoost) and a random baseline. Course module 5.
//
// The XGBoost model trains a fresh booster on the samples of each train() call:
//   1. the feature vectors become one dense row-major matrix (a DMatrix), the scores its
//      labels;
//   2. a booster with Ansor's parameters runs kBoostRounds rounds, each adding one tree
//      that fits what the trees before it got wrong;
//   3. predict() builds a matrix of the candidates and asks the booster for one number
//      each.
// Retraining from scratch costs little (a few thousand samples of a few dozen features)
// and keeps the model a function of the samples alone, not of the order of the rounds.
//
// Objective: reg:squarederror on the normalised throughput the tuner passes in (cost_model.h).
// rank:pairwise would fit the search's use -- only the order of candidates matters -- but
// it ranks pairs within a group, and the interface carries no task ids to group by; pairs
// across tasks of different sizes would teach nothing. Normalising per task (best / own
// latency) is what puts all tasks on one scale for regression instead.
//
// The booster runs on one thread: the tuner forks measurement children, and a child of a
// process whose OpenMP pool has threads must not use that pool. One thread also makes a
// model trained twice on the same samples give the same predictions.
//
// Chapter: docs/module5-autotuning.md#4-cost-models
#include "minic/autotune/cost_model.h"

#include "minic/support/error.h"

#include <fmt/format.h>
#include <xgboost/c_api.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace minic::autotune {
namespace {

constexpr int kBoostRounds = 64;

// Every XGBoost C API call returns 0 on success; on failure the reason is kept by the
// library until the next call.
void check_xgboost(int status, const char* call) {
  if (status != 0) fail("cost model xgboost: {} failed: {}", call, XGBGetLastError());
}

struct MatrixDeleter {
  void operator()(void* handle) const { XGDMatrixFree(handle); }
};
struct BoosterDeleter {
  void operator()(void* handle) const { XGBoosterFree(handle); }
};
using MatrixPtr = std::unique_ptr<void, MatrixDeleter>;
using BoosterPtr = std::unique_ptr<void, BoosterDeleter>;

// Uniform scores in [0, 1): the random model's answer, and the XGBoost model's before it
// has seen a sample.
std::vector<double> random_scores(size_t count, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> scores(count);
  for (double& score : scores) score = uniform(rng);
  return scores;
}

// The rows as one dense matrix. Every row must have `width` features.
MatrixPtr make_matrix(const std::vector<std::vector<float>>& rows, size_t width) {
  std::vector<float> values;
  values.reserve(rows.size() * width);
  for (size_t row = 0; row < rows.size(); ++row) {
    if (rows[row].size() != width) {
      fail("cost model xgboost: feature vector {} has {} features, expected {}", row,
           rows[row].size(), width);
    }
    values.insert(values.end(), rows[row].begin(), rows[row].end());
  }
  // NaN marks a missing value; features are always finite, so no value is missing (0 as
  // the marker would drop every zero feature).
  DMatrixHandle handle = nullptr;
  check_xgboost(XGDMatrixCreateFromMat_omp(values.data(), rows.size(), width, std::nanf(""),
                                           &handle, /*nthread=*/1),
                "XGDMatrixCreateFromMat");
  return MatrixPtr(handle);
}

class XGBoostModel : public CostModel {
 public:
  explicit XGBoostModel(uint64_t seed) : seed_(seed), rng_(seed) {}

  std::string name() const override { return "xgboost"; }

  void train(const std::vector<std::vector<float>>& features,
             const std::vector<double>& scores) override {
    if (features.size() != scores.size()) {
      fail("cost model xgboost: {} feature vectors but {} scores", features.size(),
           scores.size());
    }
    if (features.empty()) return;
    // The width is fixed by the first training: features never change length.
    size_t width = booster_ ? width_ : features.front().size();
    for (size_t row = 0; row < features.size(); ++row) {
      // Checked before anything is kept, so a bad training set leaves the model as it was.
      if (features[row].size() != width) {
        fail("cost model xgboost: feature vector {} has {} features, expected {}", row,
             features[row].size(), width);
      }
    }
    width_ = width;
    fit(features, scores);
  }

  std::vector<double> predict(const std::vector<std::vector<float>>& features) override {
    if (!booster_) return random_scores(features.size(), rng_);
    if (features.empty()) return {};
    MatrixPtr matrix = make_matrix(features, width_);
    bst_ulong count = 0;
    const float* predictions = nullptr;
    check_xgboost(XGBoosterPredict(booster_.get(), matrix.get(), /*option_mask=*/0,
                                   /*ntree_limit=*/0, /*training=*/0, &count, &predictions),
                  "XGBoosterPredict");
    if (count != features.size()) {
      fail("cost model xgboost: {} predictions for {} feature vectors", count,
           features.size());
    }
    // `predictions` belongs to the booster until its next call: copy it out now.
    return std::vector<double>(predictions, predictions + count);
  }

 private:
  void fit(const std::vector<std::vector<float>>& features, const std::vector<double>& scores) {
    MatrixPtr matrix = make_matrix(features, width_);
    std::vector<float> labels(scores.begin(), scores.end());
    check_xgboost(XGDMatrixSetFloatInfo(matrix.get(), "label", labels.data(), labels.size()),
                  "XGDMatrixSetFloatInfo(label)");
    DMatrixHandle training[] = {matrix.get()};
    BoosterHandle handle = nullptr;
    check_xgboost(XGBoosterCreate(training, 1, &handle), "XGBoosterCreate");
    BoosterPtr booster(handle);
    // Ansor's parameters: deep trees (max_depth 10) that may split down to single samples
    // (min_child_weight 0), a moderate learning rate, every sample in every tree.
    const std::string seed = std::to_string(seed_ % 2147483647);
    const std::pair<const char*, std::string> parameters[] = {
        {"objective", "reg:squarederror"},
        {"max_depth", "10"},
        {"eta", "0.2"},
        {"min_child_weight", "0"},
        {"gamma", "0.0001"},
        {"subsample", "1"},
        {"nthread", "1"},
        {"tree_method", "hist"},  // time linear in the samples, which grow every round
        {"seed", seed},
        {"verbosity", "0"},
    };
    for (const auto& [key, value] : parameters) {
      check_xgboost(XGBoosterSetParam(booster.get(), key, value.c_str()),
                    "XGBoosterSetParam");
    }
    for (int round = 0; round < kBoostRounds; ++round) {
      check_xgboost(XGBoosterUpdateOneIter(booster.get(), round, matrix.get()),
                    "XGBoosterUpdateOneIter");
    }
    booster_ = std::move(booster);
  }

  uint64_t seed_;
  std::mt19937_64 rng_;
  size_t width_ = 0;
  BoosterPtr booster_;  // null until the first training with samples
};

// The search without a model: every candidate gets a random score, so the candidates
// measured are a random choice among those the search generated.
class RandomModel : public CostModel {
 public:
  explicit RandomModel(uint64_t seed) : rng_(seed) {}

  std::string name() const override { return "random"; }

  void train(const std::vector<std::vector<float>>& features,
             const std::vector<double>& scores) override {
    if (features.size() != scores.size()) {
      fail("cost model random: {} feature vectors but {} scores", features.size(),
           scores.size());
    }
  }

  std::vector<double> predict(const std::vector<std::vector<float>>& features) override {
    return random_scores(features.size(), rng_);
  }

 private:
  std::mt19937_64 rng_;
};

// The registry: a function-local static, so that registration objects in any file may add
// to it during static initialisation. The two built-in models are put in when it is
// built, not by registration objects, which the linker could drop from the static library.
std::map<std::string, CostModelInfo>& registry() {
  static std::map<std::string, CostModelInfo> models = {
      {"random",
       {"random", "a random score for every candidate (no model)",
        [](uint64_t seed) { return std::make_unique<RandomModel>(seed); }}},
      {"xgboost",
       {"xgboost", "gradient-boosted trees, retrained every round (the default)",
        [](uint64_t seed) { return std::make_unique<XGBoostModel>(seed); }}}};
  return models;
}

}  // namespace

void CostModelRegistry::add(std::string name, CostModelFactory make, std::string summary) {
  MINIC_CHECK(!registry().count(name));
  std::string key = name;
  registry().emplace(std::move(key),
                     CostModelInfo{std::move(name), std::move(summary), std::move(make)});
}

const CostModelInfo* CostModelRegistry::find(const std::string& name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : &it->second;
}

std::vector<const CostModelInfo*> CostModelRegistry::all() {
  std::vector<const CostModelInfo*> models;
  for (const auto& [name, info] : registry()) models.push_back(&info);
  return models;
}

RegisterCostModel::RegisterCostModel(const char* name, CostModelFactory make,
                                     const char* summary) {
  CostModelRegistry::add(name, std::move(make), summary);
}

void check_cost_model_name(const std::string& kind) {
  if (CostModelRegistry::find(kind)) return;
  std::vector<std::string> names;
  for (const CostModelInfo* info : CostModelRegistry::all()) names.push_back(info->name);
  fail("unknown cost model '{}' (available: {})", kind, fmt::join(names, ", "));
}

std::unique_ptr<CostModel> make_cost_model(const std::string& kind, uint64_t seed) {
  check_cost_model_name(kind);
  return CostModelRegistry::find(kind)->make(seed);
}

}  // namespace minic::autotune
