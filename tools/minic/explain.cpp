// `minic explain MODEL`: what the compiler did to a model and why, one line per decision.
// Course module 1.
//
//   minic explain MODEL.onnx|FILE.mgraph [--pass NAME] [--kernel NAME] [--passes ...]
//                 [--target T] [--records DB.jsonl] [--input-shape NAME=1x3x224x224]...
//
// Two parts, each filtered by its option:
//   graph passes  after each pass, what it changed, from the graph before and after it:
//                 the nodes it removed, those it added (a fused node with the ops of its
//                 body), and those it rewrote in place (another op, other inputs); or that
//                 it changed nothing. Then what it left undone and why, as the pass said
//                 through minic/support/explain.h (fuse-ops: each node kept out of its
//                 post-dominator's group). The passes are --passes' (the default pipeline).
//   kernels       for each kernel of the optimised graph, lowered for --target: where its
//                 schedule comes from (a tuning record of --records, by workload, or the
//                 default rules), each rule the default schedule chose or refused for a
//                 block and why (the rules say so through minic/support/explain.h), and
//                 the trace that schedule is.
// Nodes without a compute rule are listed as running their reference kernel.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#include "commands.h"
#include "common_options.h"
#include "explain.h"
#include "graph_input.h"

#include "minic/autotune/database.h"
#include "minic/autotune/task.h"
#include "minic/lower/lower.h"
#include "minic/passes/pass_manager.h"
#include "minic/schedule/rules.h"
#include "minic/schedule/trace.h"
#include "minic/support/error.h"
#include "minic/support/explain.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

namespace minic::cli {
namespace {

struct ExplainOptions {
  std::string model;
  std::string pass;    // only this pass's lines
  std::string kernel;  // only this kernel
  CommonOptions common;
};

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

// A node as the explanation names it: "Conv %y" or "Fused %y (Conv, Add, Relu)".
std::string node_text(const Node& node) {
  std::string text = fmt::format("{} %{}", node.op, node.output(0)->name());
  if (node.is_fused()) {
    std::vector<std::string> ops;
    for (const Node* inner : node.body->nodes()) ops.push_back(inner->op);
    text += fmt::format(" ({})", fmt::join(ops, ", "));
  }
  return text;
}

// What a node computes, to tell a node rewritten in place: its op and inputs.
std::string signature(const Node& node) {
  std::vector<std::string> inputs;
  for (const Value* input : node.inputs()) inputs.push_back(input ? "%" + input->name() : "_");
  return fmt::format("{}({})", node_text(node), fmt::join(inputs, ", "));
}

// The graph's nodes by their first output's name, each with its signature.
std::map<std::string, std::string> snapshot(const Graph& graph) {
  std::map<std::string, std::string> nodes;
  for (const Node* node : graph.nodes()) nodes[node->output(0)->name()] = signature(*node);
  return nodes;
}

// The lines of one pass: what changed between `before` and `after`.
std::vector<std::string> changes(const std::map<std::string, std::string>& before,
                                 const std::map<std::string, std::string>& after) {
  std::vector<std::string> lines;
  for (const auto& [name, was] : before) {
    auto now = after.find(name);
    if (now == after.end()) {
      lines.push_back("removed " + was);
    } else if (now->second != was) {
      lines.push_back(fmt::format("rewrote {} into {}", was, now->second));
    }
  }
  for (const auto& [name, now] : after) {
    if (!before.count(name)) lines.push_back("added " + now);
  }
  return lines;
}

void explain_passes(Graph& graph, const ExplainOptions& options) {
  fmt::print("graph passes:\n");
  PassManagerOptions<Graph> pass_options;
  auto previous = std::make_shared<std::map<std::string, std::string>>();
  // Collects what each pass notes while it runs; taken after each pass, so that every
  // note is printed under the pass that made it.
  explain::Recorder recorder;
  pass_options.before_all = [previous](const Graph& ir) { *previous = snapshot(ir); };
  pass_options.after_each = [previous, &options, &recorder](const std::string& pass,
                                                            const Graph& ir) {
    std::map<std::string, std::string> now = snapshot(ir);
    std::vector<std::string> notes = recorder.take();
    if (options.pass.empty() || options.pass == pass) {
      std::vector<std::string> lines = changes(*previous, now);
      if (lines.empty()) fmt::print("  {}: no change\n", pass);
      for (const std::string& line : lines) fmt::print("  {}: {}\n", pass, line);
      for (const std::string& note : notes) fmt::print("  {}: {}\n", pass, note);
    }
    *previous = std::move(now);
  };
  std::vector<std::string> passes = parse_pass_list(options.common.passes);
  if (!options.pass.empty() &&
      std::find(passes.begin(), passes.end(), options.pass) == passes.end()) {
    fail("--pass {}: not a pass of the pipeline ({})", options.pass, fmt::join(passes, ", "));
  }
  run_passes(graph, passes, options.common.parsed_target(), pass_options);
}

void explain_kernels(const Graph& graph, const ExplainOptions& options) {
  const Target target = options.common.parsed_target();
  std::vector<const Node*> skipped;
  loop::LoopModule kernels = lower_graph(graph, target, &skipped);
  std::optional<autotune::Database> records;
  if (!options.common.records.empty()) {
    records = autotune::Database::load(options.common.records);
  }
  fmt::print("\nkernels for {}:\n", target.str());
  bool found = options.kernel.empty();
  for (const loop::PrimFunc& func : kernels.functions) {
    if (!options.kernel.empty() && func.name != options.kernel) continue;
    found = true;
    fmt::print("  {}:\n", func.name);
    KernelSchedule schedule =
        kernel_schedule(func, records ? &*records : nullptr, options.common.records, target);
    fmt::print("    {}\n", schedule.source);
    for (const std::string& line : schedule.notes) fmt::print("    {}\n", line);
    fmt::print("    trace:\n");
    for (const std::string& line : split_lines(schedule.trace)) fmt::print("      {}\n", line);
  }
  if (!found) fail("--kernel {}: the model has no kernel of that name", options.kernel);
  for (const Node* node : skipped) {
    if (options.kernel.empty()) {
      fmt::print("  {}: no compute rule; it runs its reference kernel\n", node_text(*node));
    }
  }
}

}  // namespace

KernelSchedule kernel_schedule(const loop::PrimFunc& func, const autotune::Database* records,
                               const std::string& records_path, const Target& target) {
  const std::string key = autotune::workload_key(func);
  std::optional<autotune::TuningRecord> best;
  if (records) best = records->best(key, target);
  if (best) {
    return {fmt::format("the tuning record of trial {} in {} ({:.1f} us{}), the best of "
                        "workload {}", best->trial, records_path, best->median_us,
                        best->remeasured ? " as a finalist timed again" : "", key),
            {}, best->trace};
  }
  KernelSchedule schedule;
  schedule.source = "the default rules";
  if (records) {
    schedule.source += fmt::format(" (no record of workload {} in {})", key, records_path);
  }
  explain::Recorder recorder;
  schedule.trace = schedule::print_trace(schedule::default_trace(func, target));
  schedule.notes = recorder.take();
  return schedule;
}

namespace {

int run_explain(const ExplainOptions& options) {
  Graph graph = read_graph_file(options.model, options.common.input_shapes);
  explain_passes(graph, options);
  explain_kernels(graph, options);
  return 0;
}

}  // namespace

Command add_explain_command(CLI::App& app) {
  auto options = std::make_shared<ExplainOptions>();
  CLI::App* sub = app.add_subcommand(
      "explain", "Say what the passes did to a model and how each kernel is scheduled, and why");
  sub->add_option("model", options->model, "The ONNX model file, or a .mgraph file")
      ->required();
  sub->add_option("--pass", options->pass, "Only the lines of this graph pass");
  sub->add_option("--kernel", options->kernel, "Only this kernel");
  add_common_options(sub, options->common, {CommonOption::passes, CommonOption::records,
                                            CommonOption::input_shape, CommonOption::target});
  return {sub, [options] { return run_explain(*options); }};
}

}  // namespace minic::cli
