// Exercise m5-random-search: the search strategy `random`, which proposes points of the
// space drawn uniformly at random, never one measured before. Course module 5.
//
// exercises/m5-random-search/README.md gives the task; this file is where it is done. The
// strategy is registered already (the last line), so `minic tune MODEL --search random`
// uses it: as given, it proposes nothing, so only the default schedule is measured and
// the exercise's tests fail.
//
// Chapter: docs/module5-autotuning.md#5-evolutionary-search
#include "minic/autotune/search.h"
#include "minic/autotune/search_registry.h"

#include <random>
#include <set>

namespace minic::autotune {
namespace {

class RandomSearch : public Search {
 public:
  RandomSearch(const SearchSpace& space, uint64_t seed) : space_(space), rng_(seed) {}

  std::vector<Proposal> propose(CostModel& model, int count) override {
    // The proposals go here (search.h says what the tuner expects of them).
    (void)model;
    (void)count;
    return {};
  }

  void add_measured(const Decisions& decisions, const std::string& trace_text,
                    double score) override {
    (void)decisions;
    (void)trace_text;
    (void)score;
  }

  void exclude(const std::string& trace_text) override { (void)trace_text; }

 private:
  const SearchSpace& space_;
  std::mt19937_64 rng_;
};

std::unique_ptr<Search> make_random_search(const SearchSpace& space, uint64_t seed) {
  return std::make_unique<RandomSearch>(space, seed);
}

}  // namespace

MINIC_REGISTER_SEARCH("random", make_random_search,
                      "exercise m5-random-search: uniform random points, no cost model");

}  // namespace minic::autotune
