// Search: which candidates of a task to measure next; the evolutionary search, the default.
//
// Course module 5. A search space has far more points than can be measured (a GEMM's has
// millions). Each round the tuner asks a task's Search for a few candidates (`propose`),
// measures them, and tells it what they gave (`add_measured`). Every strategy has that
// interface; search_registry.h names them for `minic tune --search`.
//
// The evolutionary search breeds a population of points and lets the cost model pick the
// few worth timing:
//   1. the population starts from the best points measured so far (elites) and fresh
//      random points;
//   2. for a few generations, parents are drawn with a chance that grows with their
//      predicted score, and children made from them: mostly by mutation (one knob
//      changed), sometimes by crossover (each knob from one of two parents);
//   3. of every point met, the best-predicted ones not measured before are proposed, and
//      a few random unmeasured points besides (exploration: the model is only as good as
//      what it has seen).
// A point is scored by the model on its features (features.h): the space applies the
// point, the loop pipeline runs, the features are read off the result (evaluate_point).
// Features are cached by the point's trace text.
//
//   EvolutionarySearch search(space, SearchOptions{}, /*seed=*/1);
//   std::vector<Proposal> next = search.propose(model, /*count=*/8);
//   ... measure them ...
//   search.add_measured(next[0].decisions, next[0].trace_text, 1 / latency_us);
//
// Chapter: docs/module5-autotuning.md#5-evolutionary-search
#pragma once

#include "minic/autotune/cost_model.h"
#include "minic/autotune/search_space.h"

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace minic::autotune {

struct SearchOptions {
  int population = 64;        // points per generation
  int generations = 3;
  int elites = 8;             // best measured points that seed the population
  double mutation_rate = 0.85;  // else crossover
  double explore_fraction = 0.25;  // of the proposals, random unmeasured points
};

// A candidate to measure: its point, its trace and the scheduled function.
struct Proposal {
  Decisions decisions;
  schedule::Trace trace;
  std::string trace_text;
  loop::PrimFunc scheduled;
  std::vector<float> features;
};

// The candidate of `point`: its trace, the scheduled function and its features (those of
// space.apply(point) after the loop pipeline). Milliseconds: searches cache them.
Proposal evaluate_point(const SearchSpace& space, const Decisions& point);

// What the tuner asks of a search strategy, one object per task.
class Search {
 public:
  virtual ~Search() = default;

  // Up to `count` candidates never measured nor excluded, with distinct traces, in the
  // order the strategy prefers (fewer when it finds no more). `model` is the tuner's cost
  // model, trained on every measurement so far; a strategy may ignore it.
  virtual std::vector<Proposal> propose(CostModel& model, int count) = 0;

  // Records a measured candidate: its trace must never be proposed again. `decisions` are
  // a point of this task's space (the default schedule's record gives the default point).
  // `score` orders the measured points: higher is faster (the tuner passes 1 / latency; 0
  // for a failure).
  virtual void add_measured(const Decisions& decisions, const std::string& trace_text,
                            double score) = 0;

  // Never proposes `trace_text`: it is being measured already (the default schedule, in
  // the tuner's first round of a task).
  virtual void exclude(const std::string& trace_text) = 0;
};

class EvolutionarySearch : public Search {
 public:
  EvolutionarySearch(const SearchSpace& space, SearchOptions options, uint64_t seed);

  // Up to `count` points not measured before, best predicted first (fewer when the space
  // has fewer unmeasured points that the search meets).
  std::vector<Proposal> propose(CostModel& model, int count) override;

  // The trace is never proposed again, and, when it has decisions of this space, the point
  // may seed later populations.
  void add_measured(const Decisions& decisions, const std::string& trace_text,
                    double score) override;

  void exclude(const std::string& trace_text) override { measured_traces_.insert(trace_text); }

  // evaluate_point(space, point), cached.
  const Proposal& evaluate(const Decisions& point);

 private:
  std::vector<Decisions> breed(CostModel& model);

  const SearchSpace& space_;
  SearchOptions options_;
  std::mt19937_64 rng_;
  std::map<std::string, Proposal> evaluated_;      // by the point's key text
  std::set<std::string> measured_traces_;
  std::vector<std::pair<double, Decisions>> measured_points_;  // (score, point)
};

// A point as text, "C.tile_i=[2,16,8] C.pack=[1] ...": the cache key, and what logs print.
std::string decisions_text(const Decisions& point);

}  // namespace minic::autotune
