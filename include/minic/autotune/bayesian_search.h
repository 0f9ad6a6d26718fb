// The Bayesian search: a Gaussian process over the knobs picks the points to measure.
//
// Course module 5. A second answer to "which points to measure next", beside the
// evolutionary search (search.h), chosen with `minic tune --search bayesian`. It ignores
// the tuner's cost model and keeps a surrogate of its own, fitted to this task's
// measurements only:
//   1. a point is encoded as a vector in the unit cube (PointEncoder): one coordinate per
//      integer of each knob's value, a tile factor on a log scale, other values linearly;
//   2. a Gaussian process (gaussian_process.h) is fitted to the measured points'
//      log-throughput, log(1 / latency);
//   3. a pool of unmeasured points is drawn: random points of the space, and mutations
//      (one and two knobs changed) of the best measured ones;
//   4. the pool's point of highest expected improvement over the best measured value is
//      taken; its trace is made (evaluate_point) and, if that kernel was measured or taken
//      before, the point is dropped (and, when its kernel's time is known, learnt as a
//      measurement of its own);
//   5. to take several points in one round, each taken point is added to the process as if
//      measured at its predicted mean (the "kriging believer"), which shrinks the variance
//      around it so that the next pick goes elsewhere; then back to step 4.
// Until two measurements differ there is nothing to fit: the proposals are the pool's
// random points, in the order drawn.
//
//   BayesianSearch search(space, /*seed=*/1);
//   search.add_measured(space.default_point(), default_trace, 1 / 812.5);
//   std::vector<Proposal> next = search.propose(model, /*count=*/8);  // model unused
//
// Chapter: docs/module5-autotuning.md#bayesian-search
#pragma once

#include "minic/autotune/gaussian_process.h"
#include "minic/autotune/search.h"

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace minic::autotune {

// Points as coordinates in [0, 1]: for every knob with more than one value, one
// coordinate per integer of the value (a knob whose values differ in length: one, the
// value's index among the knob's choices). A coordinate whose values are all 1 or more is
// log(v / min) / log(max / min), so that tiles 2 and 4 are as far apart as 16 and 32;
// others (v - min) / (max - min). Coordinates that do not vary are left out.
//
//   PointEncoder encode(space);
//   std::vector<double> x = encode(space.default_point());   // {0.5, 0.25, 1, ...}
class PointEncoder {
 public:
  explicit PointEncoder(const SearchSpace& space);
  std::vector<double> operator()(const Decisions& point) const;
  size_t dimension() const { return coordinates_.size(); }

 private:
  struct Coordinate {
    const Knob* knob = nullptr;
    int part = -1;  // the value's integer at this position; -1: the choice's index
    double low = 0, high = 1;
    bool logarithmic = false;
  };
  std::vector<Coordinate> coordinates_;
};

class BayesianSearch : public Search {
 public:
  BayesianSearch(const SearchSpace& space, uint64_t seed);

  std::vector<Proposal> propose(CostModel& model, int count) override;
  void add_measured(const Decisions& decisions, const std::string& trace_text,
                    double score) override;
  void exclude(const std::string& trace_text) override { taken_traces_.insert(trace_text); }

 private:
  struct Observation {
    Decisions point;
    double score = 0;  // 1 / latency; 0 for a failure
  };

  std::vector<Decisions> draw_pool();
  void observe(const Decisions& point, double score);
  // The observations as the process's training data: encoded points and log(score), a
  // failure one below the slowest success. False (nothing to fit) until two values differ.
  bool training_data(std::vector<std::vector<double>>& x, std::vector<double>& y) const;

  const SearchSpace& space_;
  PointEncoder encode_;
  std::mt19937_64 rng_;
  std::vector<Observation> observed_;
  std::set<std::string> observed_keys_;          // decisions_text of the observed points
  std::set<std::string> taken_traces_;           // measured, excluded or proposed
  std::map<std::string, double> trace_scores_;   // measured traces: their score
  std::set<std::string> dropped_keys_;           // points whose kernel was taken before
};

}  // namespace minic::autotune
