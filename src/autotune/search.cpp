// Evolutionary search over a task's space, ranked by the cost model. Course module 5.
//
// The steps are those of search.h. Two details matter for the result:
//   - a point is evaluated once: applying it, running the loop pipeline and reading the
//     features costs milliseconds, and the generations meet the same points again;
//   - points are told apart by their trace text, not their decisions: two points whose
//     rules refused in the same way give the same kernel, which is measured once.
//
// Chapter: docs/module5-autotuning.md#5-evolutionary-search
#include "minic/autotune/search.h"

#include "minic/autotune/features.h"
#include "minic/support/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace minic::autotune {
namespace {

// An index drawn with probability proportional to weights (all zero: uniform).
size_t draw_weighted(const std::vector<double>& weights, std::mt19937_64& rng) {
  double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  if (total <= 0) return std::uniform_int_distribution<size_t>(0, weights.size() - 1)(rng);
  double pick = std::uniform_real_distribution<double>(0, total)(rng);
  for (size_t i = 0; i < weights.size(); ++i) {
    pick -= weights[i];
    if (pick <= 0) return i;
  }
  return weights.size() - 1;
}

}  // namespace

std::string decisions_text(const Decisions& point) {
  std::string text;
  for (const auto& [knob, value] : point) {
    text += fmt::format("{}{}=[{}]", text.empty() ? "" : " ", knob, fmt::join(value, ","));
  }
  return text;
}

EvolutionarySearch::EvolutionarySearch(const SearchSpace& space, SearchOptions options,
                                       uint64_t seed)
    : space_(space), options_(options), rng_(seed) {}

Proposal evaluate_point(const SearchSpace& space, const Decisions& point) {
  Proposal proposal;
  proposal.decisions = point;
  schedule::Schedule scheduled = space.schedule(point);
  proposal.trace = scheduled.trace();
  proposal.trace_text = schedule::print_trace(proposal.trace);
  proposal.scheduled = scheduled.func();
  proposal.features = features_of_scheduled(proposal.scheduled);
  return proposal;
}

const Proposal& EvolutionarySearch::evaluate(const Decisions& point) {
  std::string key = decisions_text(point);
  auto found = evaluated_.find(key);
  if (found != evaluated_.end()) return found->second;
  return evaluated_.emplace(key, evaluate_point(space_, point)).first->second;
}

void EvolutionarySearch::add_measured(const Decisions& decisions, const std::string& trace_text,
                                      double score) {
  measured_traces_.insert(trace_text);
  if (!decisions.empty() && space_.contains(decisions)) {
    measured_points_.emplace_back(score, decisions);
  }
}

std::vector<Decisions> EvolutionarySearch::breed(CostModel& model) {
  // 1. The first population: the best measured points, then random ones.
  std::vector<std::pair<double, Decisions>> measured = measured_points_;
  std::stable_sort(measured.begin(), measured.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<Decisions> population;
  for (size_t i = 0; i < measured.size() && i < static_cast<size_t>(options_.elites); ++i) {
    population.push_back(measured[i].second);
  }
  // The default rules' point is a good start where nothing better is known yet.
  if (measured.empty()) population.push_back(space_.default_point());
  while (population.size() < static_cast<size_t>(options_.population)) {
    population.push_back(space_.sample(rng_));
  }
  std::vector<Decisions> met = population;

  // 2. Generations: parents drawn by predicted score, children by mutation or crossover.
  std::uniform_real_distribution<double> coin(0, 1);
  for (int generation = 0; generation < options_.generations; ++generation) {
    std::vector<std::vector<float>> features;
    for (const Decisions& point : population) features.push_back(evaluate(point).features);
    std::vector<double> scores = model.predict(features);
    for (double& score : scores) score = std::max(score, 0.0);
    std::vector<Decisions> children;
    while (children.size() < population.size()) {
      const Decisions& parent = population[draw_weighted(scores, rng_)];
      if (coin(rng_) < options_.mutation_rate) {
        children.push_back(space_.mutate(parent, rng_));
      } else {
        const Decisions& other = population[draw_weighted(scores, rng_)];
        children.push_back(space_.crossover(parent, other, rng_));
      }
    }
    population = std::move(children);
    met.insert(met.end(), population.begin(), population.end());
  }
  return met;
}

std::vector<Proposal> EvolutionarySearch::propose(CostModel& model, int count) {
  std::vector<Decisions> met = breed(model);

  // 3. Every distinct unmeasured kernel met, ranked by the model.
  std::vector<const Proposal*> candidates;
  std::set<std::string> seen = measured_traces_;
  for (const Decisions& point : met) {
    const Proposal& proposal = evaluate(point);
    if (seen.insert(proposal.trace_text).second) candidates.push_back(&proposal);
  }
  std::vector<std::vector<float>> features;
  for (const Proposal* candidate : candidates) features.push_back(candidate->features);
  std::vector<double> scores = model.predict(features);
  std::vector<size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scores[a] > scores[b]; });

  // The best predicted, with some places left to random picks from the rest.
  int explore = static_cast<int>(count * options_.explore_fraction);
  std::vector<Proposal> proposals;
  size_t next = 0;
  for (; next < order.size() && static_cast<int>(proposals.size()) < count - explore; ++next) {
    proposals.push_back(*candidates[order[next]]);
  }
  std::vector<size_t> rest(order.begin() + next, order.end());
  std::shuffle(rest.begin(), rest.end(), rng_);
  for (size_t i = 0; i < rest.size() && static_cast<int>(proposals.size()) < count; ++i) {
    proposals.push_back(*candidates[rest[i]]);
  }
  return proposals;
}

}  // namespace minic::autotune
