// Graph passes by name, and the pass manager that runs them.
//
// Course module 2. A graph pass is a function that rewrites a graph in place and keeps
// what it computes. Each pass lives in one file of src/passes/graph/ and is registered by
// name in src/passes/registry.cpp, one line a pass:
//
//   PassRegistry::add("dce", eliminate_dead_code, "remove nodes whose results are unused");
//
// `minic opt MODEL --passes=dce` then runs it alone. The default pipeline is one list in
// src/passes/pipeline.cpp. The pass manager verifies the graph after every pass, and can
// print it, time the passes, and call a hook (the CLI's numeric check) after each.
#pragma once

#include "minic/ir/graph/graph.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace minic {

using GraphPassFn = std::function<void(Graph&)>;

struct PassInfo {
  std::string name;
  std::string summary;  // one line, shown by `minic opt --list-passes`
  GraphPassFn run;
};

class PassRegistry {
 public:
  // Registers a pass; a name used twice is an internal error.
  static void add(std::string name, GraphPassFn run, std::string summary);
  // The pass named `name`, or null.
  static const PassInfo* find(std::string_view name);
  // Every registered pass, sorted by name.
  static std::vector<const PassInfo*> all();
};

// The passes minic runs by default, in order (src/passes/pipeline.cpp).
const std::vector<std::string>& default_pipeline();

struct PassManagerOptions {
  // Print the graph after these passes ("all" for every pass).
  std::vector<std::string> print_ir_after;
  // Print the graph after a pass only if the pass changed it.
  bool print_ir_after_change = false;
  // Print a table of the time each pass took.
  bool time_passes = false;
  // Run the structural verifier after each pass (it always runs after the last).
  bool verify_each = true;
  // Called after each pass with its name and the graph; throws to stop (the CLI's
  // `--verify-each=numeric` compares outputs with the interpreter here).
  std::function<void(const std::string& pass, const Graph& graph)> after_each;
  // Where printing goes.
  std::function<void(const std::string& text)> print;
};

// Runs the passes named `passes` in order. Throws Error naming an unknown pass, or the
// pass after which the graph no longer verifies.
void run_passes(Graph& graph, const std::vector<std::string>& passes,
                const PassManagerOptions& options = {});

}  // namespace minic
