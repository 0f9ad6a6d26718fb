// The pass manager: runs passes by name, for graph passes and loop passes alike.
//
// Course modules 2 and 4 (docs/module2-graph-passes.md#1-the-pass-manager). One manager
// for both kinds of pass: it looks each name up in the registry (pass_registry.h), runs
// the pass on the IR unit -- a Graph, or every function of a loop::LoopModule -- and then,
// as the options ask, verifies the IR (naming the pass that broke it), prints it, times
// the pass and calls a hook. So `--print-ir-after`, `--print-ir-after-change`,
// `--time-passes` and `--verify-each[=numeric]` mean the same for both kinds, in
// `minic opt` and `minic schedule` alike:
//
//   run_passes(graph, default_pipeline(), target);          // graph passes
//   run_passes(kernels, loop::default_loop_pipeline());     // loop passes, every kernel
//
// This header includes the registry and the default pipelines (pipeline.h), so that one
// include gives a caller all three.
//
// Chapter: docs/module2-graph-passes.md#1-the-pass-manager
#pragma once

#include "minic/ir/graph/graph.h"
#include "minic/ir/loop/stmt.h"
#include "minic/passes/pass_registry.h"
#include "minic/passes/pipeline.h"

#include <functional>
#include <string>
#include <vector>

namespace minic {

// What the manager does around every pass; `IR` is Graph or loop::LoopModule.
template <typename IR>
struct PassManagerOptions {
  // Print the IR after these passes ("all" for every pass).
  std::vector<std::string> print_ir_after;
  // Print the IR after a pass only if the pass changed it.
  bool print_ir_after_change = false;
  // Print a table of the time each pass took.
  bool time_passes = false;
  // Run the structural verifier after each pass (it always runs after the last).
  bool verify_each = true;
  // Called once with the IR before the first pass (not at all when no pass is to run),
  // and after each pass with its name and the IR; a hook throws to stop.
  // `--verify-each=numeric` records results in the first and compares them in the
  // second (include/minic/runtime/numeric_check.h).
  std::function<void(const IR& ir)> before_all;
  std::function<void(const std::string& pass, const IR& ir)> after_each;
  // Where printing goes (stdout when empty).
  std::function<void(const std::string& text)> print;
};

// Runs the graph passes named `passes` in order, for code that will run on `target`.
// Throws Error naming an unknown pass, or the pass after which the graph no longer
// verifies.
void run_passes(Graph& graph, const std::vector<std::string>& passes, const Target& target,
                const PassManagerOptions<Graph>& options = {});

// Runs the loop passes named `passes` in order, each on every function of `module`.
// Throws Error naming an unknown pass, or the pass after which a function no longer
// verifies.
void run_passes(loop::LoopModule& module, const std::vector<std::string>& passes,
                const PassManagerOptions<loop::LoopModule>& options = {});

}  // namespace minic
