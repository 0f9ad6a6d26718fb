// Tests of the search strategies' interface and registry, and of the cost models'
// registry (course module 5): each registry has its built-in entries and refuses an
// unknown name (the search registry's message lists the known ones); each built-in search
// (evolutionary, bayesian) made through it proposes, round after round,
// points of the space whose kernels were never measured, excluded or proposed before,
// and with one seed the same ones; evaluate_point gives the point's trace and the
// features of its scheduled kernel.
#include "minic/autotune/cost_model.h"
#include "minic/autotune/features.h"
#include "minic/autotune/search_registry.h"
#include "minic/codegen/llvm.h"
#include "minic/ir/loop/parser.h"
#include "minic/schedule/trace.h"
#include "minic/support/error.h"

#include <catch2/catch.hpp>

#include <set>

using namespace minic;
using namespace minic::autotune;

namespace {

const char* const kGemm = R"(func @gemm(A: f32[32,48], B: f32[48,32], C: f32[32,32]) {
  for i in 0..32 {
    for j in 0..32 {
      for k in 0..48 {
        block C(vi = spatial(32) i, vj = spatial(32) j, vk = reduce(48) k) {
          reads(A[vi, vk], B[vk, vj], C[vi, vj]) writes(C[vi, vj])
          init { C[vi, vj] = 0.0 }
          C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        }
      }
    }
  }
}
)";

SearchSpace gemm_space() {
  return SearchSpace(loop::parse_loop_module(kGemm, "gemm.mloop").functions.at(0),
                     codegen::cpu_target("skylake-avx512"));
}

// The traces of `rounds` rounds of `count` proposals, each measured with a made-up score
// as the tuner would record it; the default point is measured first.
std::vector<std::string> run_rounds(Search& search, const SearchSpace& space, int rounds,
                                    int count) {
  std::unique_ptr<CostModel> model = make_cost_model("random", /*seed=*/3);
  std::vector<std::string> traces;
  std::set<std::string> known;
  Proposal first = evaluate_point(space, space.default_point());
  search.add_measured(space.default_point(), first.trace_text, 1.0);
  known.insert(first.trace_text);
  for (int round = 0; round < rounds; ++round) {
    std::vector<Proposal> proposals = search.propose(*model, count);
    REQUIRE(static_cast<int>(proposals.size()) == count);
    for (const Proposal& proposal : proposals) {
      CHECK(space.contains(proposal.decisions));
      CHECK(known.insert(proposal.trace_text).second);  // never proposed or measured
      traces.push_back(proposal.trace_text);
      search.add_measured(proposal.decisions, proposal.trace_text,
                          1.0 / (1 + traces.size() % 5));
    }
  }
  return traces;
}

}  // namespace

TEST_CASE("the registry has the built-in searches and names the strategies it has") {
  REQUIRE(SearchRegistry::find("evolutionary") != nullptr);
  REQUIRE(SearchRegistry::find("bayesian") != nullptr);
  CHECK(SearchRegistry::find("annealing") == nullptr);
  std::vector<std::string> names;
  for (const SearchInfo* info : SearchRegistry::all()) names.push_back(info->name);
  CHECK(std::is_sorted(names.begin(), names.end()));
  SearchSpace space = gemm_space();
  try {
    make_search("annealing", space, 1);
    FAIL("an unknown strategy was made");
  } catch (const Error& error) {
    CHECK_THAT(error.what(), Catch::Contains("no search strategy 'annealing' (there are: ") &&
                                 Catch::Contains("evolutionary"));
  }
}

TEST_CASE("the cost model registry has xgboost and random, made by name") {
  REQUIRE(CostModelRegistry::find("xgboost") != nullptr);
  REQUIRE(CostModelRegistry::find("random") != nullptr);
  CHECK(CostModelRegistry::find("oracle") == nullptr);
  CHECK(make_cost_model("random", 1)->name() == "random");
  CHECK(make_cost_model("xgboost", 1)->name() == "xgboost");
  CHECK_THROWS_AS(check_cost_model_name("oracle"), Error);  // the message: cost model test
}

TEST_CASE("evaluate_point gives the point's trace and its kernel's features") {
  SearchSpace space = gemm_space();
  Proposal proposal = evaluate_point(space, space.default_point());
  CHECK(proposal.decisions == space.default_point());
  CHECK(proposal.trace_text == schedule::print_trace(space.trace_of(space.default_point())));
  CHECK(proposal.features == features_of_scheduled(proposal.scheduled));
}

TEST_CASE("the built-in searches propose new kernels only, the same for one seed") {
  std::string name = GENERATE("evolutionary", "bayesian");
  INFO(name);
  SearchSpace space = gemm_space();
  std::unique_ptr<Search> first = make_search(name, space, 7);
  std::unique_ptr<Search> again = make_search(name, space, 7);
  std::vector<std::string> traces = run_rounds(*first, space, 3, 6);
  CHECK(run_rounds(*again, space, 3, 6) == traces);

  // An excluded kernel is never proposed.
  std::unique_ptr<Search> excluding = make_search(name, space, 7);
  excluding->exclude(traces[0]);
  for (const std::string& trace : run_rounds(*excluding, space, 1, 6)) CHECK(trace != traces[0]);
}
