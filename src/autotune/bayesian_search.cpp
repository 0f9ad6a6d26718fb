// The Bayesian search (include/minic/autotune/bayesian_search.h). Course module 5.
//
// The steps are those of the header. What it costs: each pick predicts every point of the
// pool (a mean and a variance: O(n^2) for n observations), so a round of k picks is
// O(k * pool * n^2); with a pool of about 1,500 points and a few hundred observations
// that is well under the time one candidate takes to compile.
//
// Chapter: docs/module5-autotuning.md#bayesian-search
#include "minic/autotune/bayesian_search.h"

#include "minic/support/error.h"

#include <algorithm>
#include <cmath>

namespace minic::autotune {
namespace {

constexpr int kRandomPoints = 1024;     // of the pool: points drawn from the whole space
constexpr int kParents = 8;             // best measured points whose neighbours join it
constexpr int kMutantsPerParent = 64;   // half with one knob changed, half with two
constexpr int kPicksPerProposal = 8;    // pool points tried per proposal before giving up

}  // namespace

PointEncoder::PointEncoder(const SearchSpace& space) {
  for (const Knob& knob : space.knobs()) {
    if (knob.choices.size() < 2) continue;
    size_t length = knob.choices[0].size();
    bool same_length = std::all_of(knob.choices.begin(), knob.choices.end(),
                                   [&](const auto& value) { return value.size() == length; });
    if (!same_length) {
      coordinates_.push_back({&knob, -1, 0, static_cast<double>(knob.choices.size() - 1), false});
      continue;
    }
    for (size_t part = 0; part < length; ++part) {
      auto [low, high] = std::minmax_element(
          knob.choices.begin(), knob.choices.end(),
          [&](const auto& a, const auto& b) { return a[part] < b[part]; });
      double min = static_cast<double>((*low)[part]);
      double max = static_cast<double>((*high)[part]);
      if (min == max) continue;
      bool logarithmic = min >= 1;
      coordinates_.push_back({&knob, static_cast<int>(part), logarithmic ? std::log(min) : min,
                              logarithmic ? std::log(max) : max, logarithmic});
    }
  }
}

std::vector<double> PointEncoder::operator()(const Decisions& point) const {
  std::vector<double> x;
  x.reserve(coordinates_.size());
  for (const Coordinate& coordinate : coordinates_) {
    const std::vector<int64_t>& value = point.at(coordinate.knob->name);
    double v = 0;
    if (coordinate.part < 0) {
      const auto& choices = coordinate.knob->choices;
      v = static_cast<double>(std::find(choices.begin(), choices.end(), value) - choices.begin());
    } else {
      v = static_cast<double>(value.at(static_cast<size_t>(coordinate.part)));
      if (coordinate.logarithmic) v = std::log(v);
    }
    x.push_back((v - coordinate.low) / (coordinate.high - coordinate.low));
  }
  return x;
}

BayesianSearch::BayesianSearch(const SearchSpace& space, uint64_t seed)
    : space_(space), encode_(space), rng_(seed) {}

void BayesianSearch::observe(const Decisions& point, double score) {
  if (!space_.contains(point)) return;  // a record of another version of the space
  if (!observed_keys_.insert(decisions_text(point)).second) return;
  observed_.push_back({point, score});
}

void BayesianSearch::add_measured(const Decisions& decisions, const std::string& trace_text,
                                  double score) {
  taken_traces_.insert(trace_text);
  trace_scores_[trace_text] = score;
  if (!decisions.empty()) observe(decisions, score);
}

bool BayesianSearch::training_data(std::vector<std::vector<double>>& x,
                                   std::vector<double>& y) const {
  x.clear();
  y.clear();
  double slowest = 0;
  bool any = false;
  for (const Observation& observation : observed_) {
    if (observation.score <= 0) continue;
    double value = std::log(observation.score);
    slowest = any ? std::min(slowest, value) : value;
    any = true;
  }
  if (!any) return false;
  for (const Observation& observation : observed_) {
    x.push_back(encode_(observation.point));
    y.push_back(observation.score > 0 ? std::log(observation.score) : slowest - 1);
  }
  return std::any_of(y.begin(), y.end(), [&](double value) { return value != y[0]; });
}

std::vector<Decisions> BayesianSearch::draw_pool() {
  std::vector<Decisions> pool;
  std::set<std::string> keys = observed_keys_;
  keys.insert(dropped_keys_.begin(), dropped_keys_.end());
  auto add = [&](Decisions point) {
    if (keys.insert(decisions_text(point)).second) pool.push_back(std::move(point));
  };
  for (int i = 0; i < kRandomPoints; ++i) add(space_.sample(rng_));

  std::vector<const Observation*> best;
  for (const Observation& observation : observed_) best.push_back(&observation);
  std::stable_sort(best.begin(), best.end(),
                   [](const Observation* a, const Observation* b) { return a->score > b->score; });
  if (best.size() > static_cast<size_t>(kParents)) best.resize(kParents);
  for (const Observation* parent : best) {
    for (int i = 0; i < kMutantsPerParent; ++i) {
      Decisions child = space_.mutate(parent->point, rng_);
      add(i % 2 == 0 ? child : space_.mutate(child, rng_));
    }
  }
  return pool;
}

std::vector<Proposal> BayesianSearch::propose(CostModel& /*model*/, int count) {
  // Step 2: the process, with the length scale its marginal likelihood prefers; later
  // fits of this round keep that scale. Step 1's case, nothing to fit: `fitted` is false
  // and the pool's random points are taken in the order drawn.
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  const bool fitted = training_data(x, y);
  GaussianProcess process;
  double length_scale = 0;
  double best = 0;
  if (fitted) {
    process.fit(x, y);
    length_scale = process.length_scale();
    best = *std::max_element(y.begin(), y.end());
  }

  // Step 3.
  std::vector<Decisions> pool = draw_pool();
  std::vector<std::vector<double>> encoded;
  for (const Decisions& point : pool) encoded.push_back(encode_(point));
  std::vector<bool> tried(pool.size(), false);

  // The points taken this round, with the mean they are believed to have (step 5).
  std::vector<std::pair<size_t, double>> believed;
  auto refit = [&] {
    if (!fitted) return;
    training_data(x, y);
    for (const auto& [index, mean] : believed) {
      x.push_back(encoded[index]);
      y.push_back(mean);
    }
    process.fit(x, y, length_scale);
  };
  // Step 4's choice: the untried point of highest expected improvement (unfitted: the
  // first untried); pool.size() when none is left.
  auto next_pick = [&] {
    size_t pick = pool.size();
    double pick_gain = -1;
    for (size_t i = 0; i < pool.size(); ++i) {
      if (tried[i]) continue;
      if (!fitted) return i;
      double gain = expected_improvement(process.predict(encoded[i]), best);
      if (gain > pick_gain) {
        pick = i;
        pick_gain = gain;
      }
    }
    return pick;
  };

  std::vector<Proposal> proposals;
  for (int picks = 0; static_cast<int>(proposals.size()) < count &&
                      picks < count * kPicksPerProposal;
       ++picks) {
    size_t pick = next_pick();
    if (pick == pool.size()) break;  // the pool is used up
    tried[pick] = true;

    Proposal proposal = evaluate_point(space_, pool[pick]);
    if (taken_traces_.count(proposal.trace_text)) {
      // Another point with a kernel taken before: never again, and, when that kernel's
      // time is known, a measurement of this point too.
      dropped_keys_.insert(decisions_text(pool[pick]));
      auto measured = trace_scores_.find(proposal.trace_text);
      if (measured != trace_scores_.end()) {
        observe(pool[pick], measured->second);
        refit();
      }
      continue;
    }
    // Step 5.
    if (fitted) believed.emplace_back(pick, process.predict(encoded[pick]).mean);
    taken_traces_.insert(proposal.trace_text);
    proposals.push_back(std::move(proposal));
    refit();
  }
  return proposals;
}

}  // namespace minic::autotune
