// Exercise m5-local-search, solved: the search strategy `local`, a hill climb: the
// neighbours of the best point measured so far, best predicted first. Course module 5.
//
// A neighbour of a point is the point with one knob set to another of its values, kept
// when it is still a point of the space (constraints between knobs) and gives a kernel
// not measured before. Each round proposes the unmeasured neighbours of the best point
// measured so far (the default point before anything is measured), ranked by the cost
// model. Where the best point has too few of them left, a local optimum has been reached
// in that part of the space: the rest of the round is random points (a restart), and a
// faster one among them becomes the next point to climb from.
//
// Chapter: docs/module5-autotuning.md#5-evolutionary-search
#include "minic/autotune/search.h"
#include "minic/autotune/search_registry.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <set>

namespace minic::autotune {
namespace {

constexpr int kMissesPerProposal = 64;  // random draws that meet only known kernels, then stop

class LocalSearch : public Search {
 public:
  LocalSearch(const SearchSpace& space, uint64_t seed) : space_(space), rng_(seed) {}

  std::vector<Proposal> propose(CostModel& model, int count) override {
    const Decisions& centre = measured_ ? best_point_ : space_.default_point();
    std::vector<Proposal> proposals = ranked_neighbours(centre, model);
    if (static_cast<int>(proposals.size()) > count) proposals.resize(count);
    for (const Proposal& proposal : proposals) known_.insert(proposal.trace_text);
    int misses = 0;
    while (static_cast<int>(proposals.size()) < count && misses < kMissesPerProposal) {
      Proposal proposal = evaluate_point(space_, space_.sample(rng_));
      if (known_.insert(proposal.trace_text).second) {
        proposals.push_back(std::move(proposal));
        misses = 0;
      } else {
        ++misses;
      }
    }
    return proposals;
  }

  void add_measured(const Decisions& decisions, const std::string& trace_text,
                    double score) override {
    known_.insert(trace_text);
    if (!measured_ || score > best_score_) {
      measured_ = true;
      best_score_ = score;
      best_point_ = decisions;
    }
  }

  void exclude(const std::string& trace_text) override { known_.insert(trace_text); }

 private:
  // The neighbours of `centre` with kernels not known yet, one per kernel, best
  // predicted first.
  std::vector<Proposal> ranked_neighbours(const Decisions& centre, CostModel& model) {
    std::vector<Proposal> neighbours;
    std::set<std::string> seen = known_;
    for (const Knob& knob : space_.knobs()) {
      for (const std::vector<int64_t>& choice : knob.choices) {
        Decisions point = centre;
        if (point.at(knob.name) == choice) continue;
        point[knob.name] = choice;
        if (!space_.contains(point)) continue;
        Proposal proposal = evaluate_point(space_, point);
        if (seen.insert(proposal.trace_text).second) neighbours.push_back(std::move(proposal));
      }
    }
    if (neighbours.empty()) return neighbours;
    std::vector<std::vector<float>> features;
    for (const Proposal& neighbour : neighbours) features.push_back(neighbour.features);
    std::vector<double> scores = model.predict(features);
    std::vector<size_t> order(neighbours.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return scores[a] > scores[b]; });
    std::vector<Proposal> ranked;
    for (size_t i : order) ranked.push_back(std::move(neighbours[i]));
    return ranked;
  }

  const SearchSpace& space_;
  std::mt19937_64 rng_;
  std::set<std::string> known_;  // the traces measured, excluded or proposed
  bool measured_ = false;
  double best_score_ = 0;
  Decisions best_point_;
};

std::unique_ptr<Search> make_local_search(const SearchSpace& space, uint64_t seed) {
  return std::make_unique<LocalSearch>(space, seed);
}

}  // namespace

MINIC_REGISTER_SEARCH("local", make_local_search,
                      "exercise m5-local-search: hill climbing from the best point measured");

}  // namespace minic::autotune
