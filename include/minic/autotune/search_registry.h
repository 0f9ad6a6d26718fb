// Every search strategy by name, for `minic tune --search NAME`. Course module 5.
//
// A strategy is a class with the Search interface (search.h) and a factory that makes one
// for a task's space. Two are built in: "evolutionary" (search.h), the default, and
// "bayesian" (bayesian_search.h); another strategy registers itself with one line at the
// end of its own file:
//
//   MINIC_REGISTER_SEARCH("random", make_random_search,
//                         "uniform random points of the space, no cost model");
//
// where make_random_search has the type SearchFactory. Only the linker's keeping of that
// file matters: the exercises' code (exercises/) is linked into minic whole.
//
// Chapter: docs/module5-autotuning.md#5-evolutionary-search
#pragma once

#include "minic/autotune/search.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace minic::autotune {

// Makes a strategy for one task: its space (alive as long as the search) and a seed.
using SearchFactory =
    std::function<std::unique_ptr<Search>(const SearchSpace& space, uint64_t seed)>;

struct SearchInfo {
  std::string name;
  std::string summary;  // one line, shown by `minic tune --help`
  SearchFactory make;
};

class SearchRegistry {
 public:
  // Registers a strategy; a name used twice is an internal error.
  static void add(std::string name, SearchFactory make, std::string summary);
  // The strategy named `name`, or null.
  static const SearchInfo* find(std::string_view name);
  // Every strategy, the built-in one included, sorted by name.
  static std::vector<const SearchInfo*> all();
};

// Throws Error naming the strategies there are when no strategy is called `name`.
void check_search_name(std::string_view name);

// The search `name` for `space` (check_search_name first).
std::unique_ptr<Search> make_search(std::string_view name, const SearchSpace& space,
                                    uint64_t seed);

// What MINIC_REGISTER_SEARCH makes: an object that registers a strategy when it is built.
struct RegisterSearch {
  RegisterSearch(const char* name, SearchFactory make, const char* summary);
};

}  // namespace minic::autotune

#define MINIC_SEARCH_CONCAT_INNER(a, b) a##b
#define MINIC_SEARCH_CONCAT(a, b) MINIC_SEARCH_CONCAT_INNER(a, b)

// Registers the search strategy made by `factory` (a SearchFactory) under `name`.
#define MINIC_REGISTER_SEARCH(name, factory, summary)                                       \
  static const ::minic::autotune::RegisterSearch MINIC_SEARCH_CONCAT(minic_search_, __LINE__)( \
      name, factory, summary)
