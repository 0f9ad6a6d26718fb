// The pass manager's flags, declared once for `minic opt` and `minic schedule`:
// --print-ir-after NAME|all, --print-ir-after-change, --time-passes,
// --verify-each[=numeric]. Course modules 2 and 4.
//
// The same flags drive graph passes and loop passes (include/minic/passes/pass_manager.h):
// a command turns them into PassManagerOptions for each kind of pass it runs. What they
// print goes to stderr, so that stdout keeps the IR the command emits.
//
// Chapter: docs/module2-graph-passes.md#1-the-pass-manager
#pragma once

#include "minic/ir/graph/graph.h"
#include "minic/ir/loop/stmt.h"
#include "minic/passes/pass_manager.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace minic::cli {

struct PassFlags {
  std::vector<std::string> print_ir_after;  // pass names, or "all"
  bool print_ir_after_change = false;
  bool time_passes = false;
  std::string verify_each = "structural";   // "structural" or "numeric"
};

// Declares the four flags on `command`, writing into `flags`.
void add_pass_flags(CLI::App& command, PassFlags& flags);

// The options for graph passes and for loop passes. Throws Error if --verify-each names
// neither check. With `--verify-each=numeric`, the options carry the numeric check
// (include/minic/runtime/numeric_check.h) on random inputs of a fixed seed.
PassManagerOptions<Graph> graph_pass_options(const PassFlags& flags);
PassManagerOptions<loop::LoopModule> loop_pass_options(const PassFlags& flags);

// The loop passes named by a --passes argument: "default" (the default loop pipeline),
// "none" or empty (no pass), or a comma-separated list of names.
std::vector<std::string> parse_loop_pass_list(const std::string& passes);

}  // namespace minic::cli
