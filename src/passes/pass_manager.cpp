// The pass manager, written once for both kinds of pass. Course modules 2 and 4.
//
// run_pipeline is a template over the IR unit. What differs between a Graph and a
// loop::LoopModule -- which registry entries to look in, how a pass runs on the unit (a
// graph pass is also handed the target), how the unit prints and verifies -- is in one
// small struct per unit, below; the rest is the same code for both:
//   1. look every name up first, so that an unknown pass fails before any pass runs;
//   2. call the before_all hook with the IR as given (unless no pass is to run);
//   3. for each pass: run it (timed); verify the IR when asked, and always after the
//      last pass, naming the pass that broke it; print the IR when asked (only if its
//      text changed, with --print-ir-after-change); call the after_each hook;
//   4. print the timing table when asked.
//
// Chapter: docs/module2-graph-passes.md#1-the-pass-manager
#include "minic/passes/pass_manager.h"

#include "minic/ir/graph/text.h"
#include "minic/ir/loop/printer.h"
#include "minic/ir/loop/verifier.h"
#include "minic/ir/graph/verifier.h"
#include "minic/support/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace minic {
namespace {

struct GraphUnit {
  static constexpr PassKind kind = PassKind::graph;
  const Target& target;  // what the graph is compiled for: handed to every pass

  void run(const PassInfo& pass, Graph& graph) const {
    std::get<GraphPassFn>(pass.run)(graph, target);
  }
  static std::string text(const Graph& graph) {
    GraphPrintOptions options;
    options.elide_large_constants = true;
    return print_graph(graph, options);
  }
  static void verify(const std::string& pass, const Graph& graph) {
    try {
      verify_graph(graph);
    } catch (const Error& error) {
      fail("after pass '{}', the graph is broken: {}", pass, error.what());
    }
  }
};

struct LoopUnit {
  static constexpr PassKind kind = PassKind::loop;

  void run(const PassInfo& pass, loop::LoopModule& module) const {
    const LoopPassFn& fn = std::get<LoopPassFn>(pass.run);
    for (loop::PrimFunc& func : module.functions) func = fn(std::move(func));
  }
  static std::string text(const loop::LoopModule& module) { return loop::print_module(module); }
  static void verify(const std::string& pass, const loop::LoopModule& module) {
    for (const loop::PrimFunc& func : module.functions) {
      try {
        loop::verify_func(func);
      } catch (const Error& error) {
        fail("loop pass '{}' produced invalid IR: {}", pass, error.what());
      }
    }
  }
};

template <typename Unit>
std::vector<const PassInfo*> look_up(const std::vector<std::string>& names) {
  std::vector<const PassInfo*> passes;
  for (const std::string& name : names) {
    const PassInfo* pass = PassRegistry::find(Unit::kind, name);
    if (!pass) {
      std::vector<std::string> known;
      for (const PassInfo* info : PassRegistry::all(Unit::kind)) known.push_back(info->name);
      fail("unknown {} pass '{}' (passes: {})", pass_kind_name(Unit::kind), name,
           fmt::join(known, ", "));
    }
    passes.push_back(pass);
  }
  return passes;
}

bool wants_print(const std::vector<std::string>& print_ir_after, const std::string& name) {
  return std::find(print_ir_after.begin(), print_ir_after.end(), "all") != print_ir_after.end() ||
         std::find(print_ir_after.begin(), print_ir_after.end(), name) != print_ir_after.end();
}

std::string timing_table(PassKind kind, const std::vector<std::pair<std::string, double>>& times) {
  double total = 0;
  for (const auto& [name, ms] : times) total += ms;
  std::string table = fmt::format("// ----- {} pass timing -----\n", pass_kind_name(kind));
  for (const auto& [name, ms] : times) {
    double percent = total > 0 ? 100 * ms / total : 0.0;
    table += fmt::format("//  {:>9.3f} ms  {:5.1f}%  {}\n", ms, percent, name);
  }
  table += fmt::format("//  {:>9.3f} ms  100.0%  total\n", total);
  return table;
}

template <typename Unit, typename IR>
void run_pipeline(const Unit& unit, IR& ir, const std::vector<std::string>& names,
                  const PassManagerOptions<IR>& options) {
  std::vector<const PassInfo*> passes = look_up<Unit>(names);
  auto print = [&](const std::string& text) {
    if (options.print) options.print(text);
    else fmt::print("{}", text);
  };
  if (options.before_all && !passes.empty()) options.before_all(ir);

  std::vector<std::pair<std::string, double>> times;
  for (size_t i = 0; i < passes.size(); ++i) {
    const PassInfo& pass = *passes[i];
    bool printing = wants_print(options.print_ir_after, pass.name);
    std::string before = printing && options.print_ir_after_change ? Unit::text(ir) : "";

    auto start = std::chrono::steady_clock::now();
    unit.run(pass, ir);
    auto stop = std::chrono::steady_clock::now();
    times.emplace_back(pass.name, std::chrono::duration<double, std::milli>(stop - start).count());

    if (options.verify_each || i + 1 == passes.size()) Unit::verify(pass.name, ir);
    if (printing) {
      std::string after = Unit::text(ir);
      if (!options.print_ir_after_change || after != before) {
        print(fmt::format("// ----- IR after {} pass {} -----\n{}", pass_kind_name(Unit::kind),
                          pass.name, after));
      }
    }
    if (options.after_each) options.after_each(pass.name, ir);
  }
  if (options.time_passes) print(timing_table(Unit::kind, times));
}

}  // namespace

void run_passes(Graph& graph, const std::vector<std::string>& passes, const Target& target,
                const PassManagerOptions<Graph>& options) {
  run_pipeline(GraphUnit{target}, graph, passes, options);
}

void run_passes(loop::LoopModule& module, const std::vector<std::string>& passes,
                const PassManagerOptions<loop::LoopModule>& options) {
  run_pipeline(LoopUnit{}, module, passes, options);
}

}  // namespace minic
