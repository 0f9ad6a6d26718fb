// Exercise m5-local-search: the search strategy `local`, a hill climb: the neighbours of
// the best point measured so far, best predicted first. Course module 5.
//
// exercises/m5-local-search/README.md gives the task; this file is where it is done. The
// strategy is registered already (the last line), so `minic tune MODEL --search local`
// uses it: as given, it proposes nothing, and the exercise's tests fail.
//
// Chapter: docs/module5-autotuning.md#5-evolutionary-search
#include "minic/autotune/search.h"
#include "minic/autotune/search_registry.h"

#include <random>
#include <set>

namespace minic::autotune {
namespace {

class LocalSearch : public Search {
 public:
  LocalSearch(const SearchSpace& space, uint64_t seed) : space_(space), rng_(seed) {}

  std::vector<Proposal> propose(CostModel& model, int count) override {
    // The proposals go here (the README says which, and in what order).
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

std::unique_ptr<Search> make_local_search(const SearchSpace& space, uint64_t seed) {
  return std::make_unique<LocalSearch>(space, seed);
}

}  // namespace

MINIC_REGISTER_SEARCH("local", make_local_search,
                      "exercise m5-local-search: hill climbing from the best point measured");

}  // namespace minic::autotune
