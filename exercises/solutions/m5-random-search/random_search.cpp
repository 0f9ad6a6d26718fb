// Exercise m5-random-search, solved: the search strategy `random`, which proposes points of
// the space drawn uniformly at random, never one measured before. Course module 5.
//
// The baseline every search is compared with: no cost model, no memory of what was fast.
// Points are told apart by their trace, as the evolutionary search does: two points
// whose rules refused in the same way give the same kernel, which is measured once. A
// small space runs out of new kernels, so the draws stop after many misses in a row.
//
// Chapter: docs/module5-autotuning.md#5-evolutionary-search
#include "minic/autotune/search.h"
#include "minic/autotune/search_registry.h"

#include <random>
#include <set>

namespace minic::autotune {
namespace {

constexpr int kMissesPerProposal = 64;  // draws that meet only known kernels, then stop

class RandomSearch : public Search {
 public:
  RandomSearch(const SearchSpace& space, uint64_t seed) : space_(space), rng_(seed) {}

  std::vector<Proposal> propose(CostModel& /*model*/, int count) override {
    std::vector<Proposal> proposals;
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

  void add_measured(const Decisions& /*decisions*/, const std::string& trace_text,
                    double /*score*/) override {
    known_.insert(trace_text);
  }

  void exclude(const std::string& trace_text) override { known_.insert(trace_text); }

 private:
  const SearchSpace& space_;
  std::mt19937_64 rng_;
  std::set<std::string> known_;  // the traces measured, excluded or proposed
};

std::unique_ptr<Search> make_random_search(const SearchSpace& space, uint64_t seed) {
  return std::make_unique<RandomSearch>(space, seed);
}

}  // namespace

MINIC_REGISTER_SEARCH("random", make_random_search,
                      "exercise m5-random-search: uniform random points, no cost model");

}  // namespace minic::autotune
