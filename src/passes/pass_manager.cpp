// The pass registry and the pass manager. Course module 2.
//
// run_passes: for each pass name, look it up, run it, and then -- as the options ask --
// verify the graph (naming the pass that broke it), print it, time it, and call the hook.
// Whether a pass changed the graph is decided by comparing its text before and after.
#include "minic/passes/pass_manager.h"

#include "minic/ir/graph/text.h"
#include "minic/ir/graph/verifier.h"

#include <algorithm>
#include <chrono>
#include <map>

namespace minic {

void register_builtin_passes();  // registry.cpp

namespace {

std::map<std::string, PassInfo, std::less<>>& registry() {
  static std::map<std::string, PassInfo, std::less<>> passes;
  return passes;
}

// The built-in passes are registered on first use, so that the registry does not depend
// on the order in which static objects start.
void ensure_builtins() {
  static const bool registered = (register_builtin_passes(), true);
  (void)registered;
}

std::string graph_text(const Graph& graph) {
  GraphPrintOptions options;
  options.elide_large_constants = true;
  return print_graph(graph, options);
}

}  // namespace

void PassRegistry::add(std::string name, GraphPassFn run, std::string summary) {
  MINIC_CHECK(!registry().count(name));
  std::string key = name;
  registry().emplace(std::move(key), PassInfo{std::move(name), std::move(summary), std::move(run)});
}

const PassInfo* PassRegistry::find(std::string_view name) {
  ensure_builtins();
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : &it->second;
}

std::vector<const PassInfo*> PassRegistry::all() {
  ensure_builtins();
  std::vector<const PassInfo*> result;
  for (const auto& [name, info] : registry()) result.push_back(&info);
  return result;
}

void run_passes(Graph& graph, const std::vector<std::string>& passes,
                const PassManagerOptions& options) {
  std::vector<const PassInfo*> chosen;
  for (const std::string& name : passes) {
    const PassInfo* pass = PassRegistry::find(name);
    if (!pass) {
      std::vector<std::string> known;
      for (const PassInfo* info : PassRegistry::all()) known.push_back(info->name);
      fail("unknown pass '{}' (passes: {})", name, fmt::join(known, ", "));
    }
    chosen.push_back(pass);
  }
  auto print = [&](const std::string& text) {
    if (options.print) options.print(text);
    else fmt::print("{}", text);
  };
  auto wants_print = [&](const std::string& name) {
    const auto& names = options.print_ir_after;
    return std::find(names.begin(), names.end(), "all") != names.end() ||
           std::find(names.begin(), names.end(), name) != names.end();
  };

  std::vector<std::pair<std::string, double>> times;
  for (size_t i = 0; i < chosen.size(); ++i) {
    const PassInfo& pass = *chosen[i];
    bool printing = wants_print(pass.name);
    std::string before = printing && options.print_ir_after_change ? graph_text(graph) : "";

    auto start = std::chrono::steady_clock::now();
    pass.run(graph);
    auto stop = std::chrono::steady_clock::now();
    times.emplace_back(pass.name, std::chrono::duration<double, std::milli>(stop - start).count());

    if (options.verify_each || i + 1 == chosen.size()) {
      try {
        verify_graph(graph);
      } catch (const Error& error) {
        fail("after pass '{}', the graph is broken: {}", pass.name, error.what());
      }
    }
    if (printing) {
      std::string after = graph_text(graph);
      if (!options.print_ir_after_change || after != before) {
        print(fmt::format("// ----- IR after {} -----\n{}", pass.name, after));
      }
    }
    if (options.after_each) options.after_each(pass.name, graph);
  }

  if (options.time_passes) {
    double total = 0;
    for (const auto& [name, ms] : times) total += ms;
    std::string table = "// ----- pass timing -----\n";
    for (const auto& [name, ms] : times) {
      double percent = total > 0 ? 100 * ms / total : 0.0;
      table += fmt::format("//  {:>9.3f} ms  {:5.1f}%  {}\n", ms, percent, name);
    }
    table += fmt::format("//  {:>9.3f} ms  100.0%  total\n", total);
    print(table);
  }
}

}  // namespace minic
