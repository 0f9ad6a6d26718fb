// The Catch2 tests of exercise m5-local-search (test.mgraph runs them with lit, the seed
// of the hidden objective given by --rng-seed).
//
// The search is driven as the tuner drives it, on the space of a 32 x 32 x 32 GEMM, but a
// measurement is replaced by a hidden objective: a random weight per knob value, drawn
// from the seed, and a point scores the exponential of its weights' sum. The cost model
// is one whose predictions the test knows (the sum of a kernel's features). Each round the
// test computes, from the space alone, what a hill climb must propose, and compares:
//   - every proposal is a new kernel (never measured, excluded or proposed before);
//   - the round starts with the neighbours of the best point scored so far (one knob
//     changed, still in the space), as many as asked for or as there are unmeasured;
//   - those are the best predicted of the unmeasured neighbours, best first;
//   - the rest of a round whose neighbours ran out are other new kernels (a restart).
#include "minic/autotune/search_registry.h"
#include "minic/codegen/llvm.h"
#include "minic/ir/loop/parser.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>

using namespace minic;
using namespace minic::autotune;

namespace {

constexpr int kPerRound = 6;
constexpr int kRounds = 10;

const char* const kGemm = R"(func @gemm(A: f32[32,32], B: f32[32,32], C: f32[32,32]) {
  for i in 0..32 {
    for j in 0..32 {
      for k in 0..32 {
        block C(vi = spatial(32) i, vj = spatial(32) j, vk = reduce(32) k) {
          reads(A[vi, vk], B[vk, vj], C[vi, vj]) writes(C[vi, vj])
          init { C[vi, vj] = 0.0 }
          C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        }
      }
    }
  }
}
)";

// Predicts the sum of a kernel's features: a ranking the test can recompute.
class SumModel : public CostModel {
 public:
  std::string name() const override { return "sum"; }
  void train(const std::vector<std::vector<float>>&, const std::vector<double>&) override {}
  std::vector<double> predict(const std::vector<std::vector<float>>& features) override {
    std::vector<double> scores;
    for (const std::vector<float>& f : features) scores.push_back(std::accumulate(f.begin(), f.end(), 0.0));
    return scores;
  }
};

double predicted(const Proposal& proposal) {
  return std::accumulate(proposal.features.begin(), proposal.features.end(), 0.0);
}

// The hidden objective: a weight in [0, 1) per knob value, from the seed.
class Objective {
 public:
  Objective(const SearchSpace& space, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> weight(0, 1);
    for (const Knob& knob : space.knobs()) {
      for (const std::vector<int64_t>& choice : knob.choices) weights_[{knob.name, choice}] = weight(rng);
    }
  }
  double operator()(const Decisions& point) const {
    double sum = 0;
    for (const auto& [knob, choice] : point) sum += weights_.at({knob, choice});
    return std::exp(sum);
  }

 private:
  std::map<std::pair<std::string, std::vector<int64_t>>, double> weights_;
};

int knobs_changed(const Decisions& a, const Decisions& b) {
  int changed = 0;
  for (const auto& [knob, choice] : a) changed += b.at(knob) != choice;
  return changed;
}

// The kernels of the unmeasured neighbours of `centre`, by trace, with their predictions.
std::map<std::string, double> unmeasured_neighbours(const SearchSpace& space,
                                                    const Decisions& centre,
                                                    const std::set<std::string>& known) {
  std::map<std::string, double> neighbours;
  for (const Knob& knob : space.knobs()) {
    for (const std::vector<int64_t>& choice : knob.choices) {
      Decisions point = centre;
      if (point.at(knob.name) == choice) continue;
      point[knob.name] = choice;
      if (!space.contains(point)) continue;
      Proposal proposal = evaluate_point(space, point);
      if (!known.count(proposal.trace_text)) neighbours[proposal.trace_text] = predicted(proposal);
    }
  }
  return neighbours;
}

}  // namespace

TEST_CASE("local search climbs from the best point, best predicted first", "[m5-local-search]") {
  const uint64_t seed = Catch::rngSeed();
  INFO("seed " << seed << " (--rng-seed " << seed << " runs this case again)");
  loop::PrimFunc gemm = loop::parse_loop_module(kGemm, "gemm.mloop").functions.at(0);
  SearchSpace space(gemm, codegen::cpu_target("skylake-avx512"));
  Objective objective(space, seed);
  SumModel model;
  std::unique_ptr<Search> search = make_search("local", space, seed);

  // The tuner's first candidate: the default schedule, measured before the search runs.
  std::set<std::string> known;
  Decisions best = space.default_point();
  double best_score = objective(best);
  Proposal first = evaluate_point(space, best);
  search->add_measured(best, first.trace_text, best_score);
  known.insert(first.trace_text);

  for (int round = 0; round < kRounds; ++round) {
    INFO("round " << round);
    std::map<std::string, double> neighbours = unmeasured_neighbours(space, best, known);
    std::vector<Proposal> proposals = search->propose(model, kPerRound);
    REQUIRE(static_cast<int>(proposals.size()) == kPerRound);  // the space has far more

    std::set<std::string> traces;
    for (const Proposal& proposal : proposals) {
      CHECK(!known.count(proposal.trace_text));  // never measured before
      CHECK(traces.insert(proposal.trace_text).second);  // no kernel twice in a round
      CHECK(space.contains(proposal.decisions));
    }

    // The neighbours come first: as many as asked for or as there are.
    size_t climbing = std::min(neighbours.size(), static_cast<size_t>(kPerRound));
    double lowest = INFINITY;
    for (size_t i = 0; i < climbing; ++i) {
      const Proposal& proposal = proposals[i];
      INFO("proposal " << i << ": " << decisions_text(proposal.decisions));
      CHECK(knobs_changed(proposal.decisions, best) == 1);
      REQUIRE(neighbours.count(proposal.trace_text));
      CHECK(predicted(proposal) <= lowest);  // best predicted first
      lowest = std::min(lowest, predicted(proposal));
      neighbours.erase(proposal.trace_text);
    }
    // and no neighbour left out is predicted better than one proposed.
    for (const auto& [trace, prediction] : neighbours) CHECK(prediction <= lowest);

    for (const Proposal& proposal : proposals) {
      double score = objective(proposal.decisions);
      search->add_measured(proposal.decisions, proposal.trace_text, score);
      known.insert(proposal.trace_text);
      if (score > best_score) {
        best_score = score;
        best = proposal.decisions;
      }
    }
  }
}
