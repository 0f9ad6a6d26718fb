// The search registry: one map from name to strategy. Course module 5.
//
// The map is a function-local static, built on first use, so that a registration object
// in any file may add to it during static initialisation, whatever order the files start
// in. The evolutionary and Bayesian searches are put in when the map is built, not by
// registration objects: the tuner refers to no symbol of their files' registrations, and
// the linker would be free to drop them from the static library.
//
// Chapter: docs/module5-autotuning.md#5-evolutionary-search
#include "minic/autotune/search_registry.h"

#include "minic/autotune/bayesian_search.h"
#include "minic/support/error.h"

#include <fmt/format.h>

#include <map>

namespace minic::autotune {
namespace {

std::unique_ptr<Search> make_evolutionary(const SearchSpace& space, uint64_t seed) {
  return std::make_unique<EvolutionarySearch>(space, SearchOptions{}, seed);
}

std::unique_ptr<Search> make_bayesian(const SearchSpace& space, uint64_t seed) {
  return std::make_unique<BayesianSearch>(space, seed);
}

std::map<std::string, SearchInfo, std::less<>>& registry() {
  static std::map<std::string, SearchInfo, std::less<>> searches = {
      {"evolutionary",
       {"evolutionary", "mutation and crossover ranked by the cost model (the default)",
        make_evolutionary}},
      {"bayesian",
       {"bayesian", "a Gaussian process over the knobs, expected improvement (no cost model)",
        make_bayesian}}};
  return searches;
}

}  // namespace

void SearchRegistry::add(std::string name, SearchFactory make, std::string summary) {
  MINIC_CHECK(!registry().count(name));
  std::string key = name;
  registry().emplace(std::move(key),
                     SearchInfo{std::move(name), std::move(summary), std::move(make)});
}

const SearchInfo* SearchRegistry::find(std::string_view name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : &it->second;
}

std::vector<const SearchInfo*> SearchRegistry::all() {
  std::vector<const SearchInfo*> searches;
  for (const auto& [name, info] : registry()) searches.push_back(&info);
  return searches;
}

void check_search_name(std::string_view name) {
  if (SearchRegistry::find(name)) return;
  std::vector<std::string> names;
  for (const SearchInfo* known : SearchRegistry::all()) names.push_back(known->name);
  fail("no search strategy '{}' (there are: {})", name, fmt::join(names, ", "));
}

std::unique_ptr<Search> make_search(std::string_view name, const SearchSpace& space,
                                    uint64_t seed) {
  check_search_name(name);
  return SearchRegistry::find(name)->make(space, seed);
}

RegisterSearch::RegisterSearch(const char* name, SearchFactory make, const char* summary) {
  SearchRegistry::add(name, std::move(make), summary);
}

}  // namespace minic::autotune
