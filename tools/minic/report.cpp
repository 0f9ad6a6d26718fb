// `minic report MODEL -o report.html`: one page that shows what minic made of a model.
// Course module 1.
//
//   minic report MODEL.onnx|FILE.mgraph -o report.html [--records DB.jsonl] [--threads N]
//                [--input-shape NAME=1x3x224x224]...
//
// One self-contained HTML file (inline CSS and SVG, no script, nothing fetched), in five
// sections:
//   1. the graph as imported and after the default passes, drawn (report_svg.h), each
//      node filled with the colour of the fusion group it ends in;
//   2. each kernel: where its schedule comes from and why (explain.h), the trace, the
//      loop IR after the schedule and the loop passes, and its equivalent C;
//   3. the memory plan: every intermediate as a rectangle from its first to its last step
//      and from its offset to its end in the arena;
//   4. the profile of one run on random inputs (after one run to warm up), a bar per step;
//   5. with --records, the tuning curves: each task's best time so far against its
//      trials, over its first trial's time.
// The model is compiled for this machine's CPU, as `minic run` does.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#include "commands.h"
#include "common_options.h"
#include "explain.h"
#include "graph_input.h"
#include "report_svg.h"
#include "run_inputs.h"

#include "minic/autotune/database.h"
#include "minic/driver/compile.h"
#include "minic/ir/loop/c_printer.h"
#include "minic/ir/loop/printer.h"
#include "minic/lower/lower.h"
#include "minic/passes/pass_manager.h"
#include "minic/support/error.h"
#include "minic/support/file.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <random>

namespace minic::cli {
namespace {

struct ReportOptions {
  std::string model;
  std::string output;
  CommonOptions common;  // --threads, --records, --input-shape
};

const char* const kStyle = R"(body { font-family: sans-serif; margin: 24px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #ccc; }
.scroll { overflow: auto; border: 1px solid #ddd; max-height: 640px; }
pre { background: #f6f6f6; padding: 8px; overflow: auto; max-height: 480px; font-size: 12px; }
details { margin: 6px 0; } summary { cursor: pointer; font-weight: bold; }
td, th { padding: 2px 10px; text-align: left; })";

std::string pre(const std::string& text) { return "<pre>" + escape_html(text) + "</pre>\n"; }

// The fusion group of every value a fused node computes, by name: the groups are the
// fused nodes of the optimised graph, in order.
std::map<std::string, int> fusion_groups(const Graph& optimised) {
  std::map<std::string, int> group_of;
  int group = 0;
  for (const Node* node : optimised.nodes()) {
    if (!node->is_fused()) continue;
    for (const Node* inner : node->body->nodes()) {
      for (const Value* output : inner->outputs()) group_of[output->name()] = group;
    }
    for (const Value* output : node->outputs()) group_of[output->name()] = group;
    ++group;
  }
  return group_of;
}

std::string graphs_section(const Graph& imported, const Graph& optimised) {
  std::map<std::string, int> groups = fusion_groups(optimised);
  std::vector<Node*> nodes = optimised.nodes();
  return fmt::format(
      "<h2>1. The graph</h2>\n<p>As imported: {} nodes. A node's colour is the fusion group "
      "(one kernel) it ends in; white nodes are folded away or stay alone.</p>\n"
      "<div class=\"scroll\">{}</div>\n<p>After the default passes: {} nodes, {} fused.</p>\n"
      "<div class=\"scroll\">{}</div>\n",
      imported.num_nodes(), graph_svg(imported, groups), optimised.num_nodes(),
      std::count_if(nodes.begin(), nodes.end(), [](const Node* node) { return node->is_fused(); }),
      graph_svg(optimised, groups));
}

std::string kernels_section(const CompiledModel& model, const Graph& optimised,
                            const ReportOptions& options,
                            const std::optional<autotune::Database>& records) {
  loop::LoopModule lowered = lower_graph(optimised, model.target(), /*skipped=*/nullptr);
  // Each kernel's compiled function: its own, or that of its workload's first kernel.
  std::map<std::string, const loop::PrimFunc*> function;
  for (const loop::PrimFunc& func : model.kernels().functions) function[func.name] = &func;
  std::map<std::string, const loop::PrimFunc*> compiled;
  for (const runtime::PlanStep& step : model.plan().steps) {
    if (function.count(step.function)) compiled[step.kernel] = function.at(step.function);
  }
  std::string html = fmt::format("<h2>2. The kernels</h2>\n<p>{} kernels for {}.</p>\n",
                                 lowered.functions.size(), escape_html(model.target().str()));
  for (const loop::PrimFunc& func : lowered.functions) {
    KernelSchedule schedule = kernel_schedule(func, records ? &*records : nullptr,
                                              options.common.records, model.target());
    html += fmt::format("<details><summary>{}</summary>\n<p>{}</p>\n<ul>\n",
                        escape_html(func.name), escape_html(schedule.source));
    for (const std::string& note : schedule.notes) {
      html += "<li>" + escape_html(note) + "</li>\n";
    }
    html += "</ul>\n<p>The trace:</p>\n" + pre(schedule.trace);
    auto found = compiled.find(func.name);
    if (found != compiled.end()) {
      html += "<p>The loop IR after the schedule and the loop passes:</p>\n" +
              pre(loop::print_func(*found->second)) + "<p>As C:</p>\n" +
              pre(loop::print_c(*found->second));
    }
    html += "</details>\n";
  }
  return html;
}

std::string memory_section(const runtime::ExecutionPlan& plan) {
  std::vector<Lifetime> buffers;
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    const runtime::PlanBuffer& buffer = plan.buffers[b];
    if (buffer.kind != runtime::BufferKind::intermediate) continue;
    Lifetime lifetime{buffer.name, -1, -1, buffer.arena_offset, buffer.type.num_bytes()};
    for (size_t s = 0; s < plan.steps.size(); ++s) {
      const std::vector<int>& args = plan.steps[s].args;
      if (std::find(args.begin(), args.end(), static_cast<int>(b)) == args.end()) continue;
      if (lifetime.first_step < 0) lifetime.first_step = static_cast<int>(s);
      lifetime.last_step = static_cast<int>(s);
    }
    if (lifetime.first_step >= 0) buffers.push_back(lifetime);
  }
  return fmt::format(
      "<h2>3. The memory plan</h2>\n<p>{} intermediates in an arena of {} bytes ({} without "
      "reuse; at least {}: the most live at one step). Across: the steps; down: the "
      "offset.</p>\n{}",
      buffers.size(), plan.memory.arena_bytes, plan.memory.unshared_bytes,
      plan.memory.lower_bound_bytes,
      lifetimes_svg(buffers, static_cast<int>(plan.steps.size()), plan.memory.arena_bytes));
}

std::string profile_section(CompiledModel& model) {
  std::mt19937_64 random(0);
  std::vector<Tensor> inputs;
  for (int b : model.plan().inputs) {
    inputs.push_back(fill_tensor(model.plan().buffers[b].type, Fill::random, random));
  }
  model.run(inputs);  // warm up: caches, pages, the thread pool
  std::vector<runtime::StepProfile> profile;
  model.run(inputs, &profile);
  std::vector<Bar> bars;
  double total = 0;
  for (const runtime::StepProfile& step : profile) {
    bars.push_back({step.kernel + " (" + step.op + ")", step.milliseconds,
                    step.compiled ? "compiled" : "reference"});
    total += step.milliseconds;
  }
  return fmt::format("<h2>4. The profile</h2>\n<p>One run on random inputs after one to "
                     "warm up: {} steps, {:.3f} ms in kernels.</p>\n{}",
                     profile.size(), total, bars_svg(bars, "ms"));
}

std::string tuning_section(const autotune::Database& records, const std::string& path) {
  // Per task, in the order measured: the best time so far over the first (the default
  // schedule's, in a task's first round), so that tasks of any size share one axis. The
  // finalists' second timings (remeasured) are not trials.
  struct Curve {
    Series series;
    double first_us = 0;
    double best_us = 0;
  };
  std::map<std::string, Curve> by_task;
  for (const autotune::TuningRecord& record : records.records()) {
    if (record.median_us <= 0 || record.remeasured) continue;
    Curve& curve = by_task[record.task_name];
    if (curve.series.points.empty()) {
      curve.series.name = record.task_name;
      curve.first_us = curve.best_us = record.median_us;
    }
    curve.best_us = std::min(curve.best_us, record.median_us);
    curve.series.points.push_back(
        {static_cast<double>(curve.series.points.size() + 1), curve.best_us / curve.first_us});
  }
  std::vector<Series> series;
  for (auto& [task, curve] : by_task) series.push_back(std::move(curve.series));
  return fmt::format("<h2>5. Tuning</h2>\n<p>{}: {} records; each task's best time so far "
                     "against its trials, over its first trial's time (1: no faster than "
                     "the first; lower is faster).</p>\n{}",
                     escape_html(path), records.records().size(),
                     curves_svg(series, "trials", "best so far / first trial"));
}

int run_report(const ReportOptions& options) {
  Graph imported = read_graph_file(options.model, options.common.input_shapes);
  std::unique_ptr<Graph> optimised = imported.clone();
  run_passes(*optimised, default_pipeline(), options.common.parsed_target());
  // The graph is optimised already: compile it without running the passes again.
  CompileOptions compile_options;
  compile_options.graph_passes = {};
  compile_options.threads = options.common.threads;
  compile_options.records = options.common.records;
  std::unique_ptr<CompiledModel> model =
      compile_model(std::move(*optimised->clone()), compile_options);
  std::optional<autotune::Database> records;
  if (!options.common.records.empty()) {
    records = autotune::Database::load(options.common.records);
  }

  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>minic report: {0}</title>"
      "<style>{1}</style></head>\n<body>\n<h1>minic report: {0}</h1>\n",
      escape_html(options.model), kStyle);
  html += graphs_section(imported, *optimised);
  html += kernels_section(*model, *optimised, options, records);
  html += memory_section(model->plan());
  html += profile_section(*model);
  if (records) html += tuning_section(*records, options.common.records);
  html += "</body></html>\n";
  write_file(options.output, html);
  fmt::print("wrote {} ({} KiB)\n", options.output, html.size() / 1024);
  return 0;
}

}  // namespace

Command add_report_command(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* sub = app.add_subcommand(
      "report", "Write one HTML page showing the graph, kernels, memory plan and profile");
  sub->add_option("model", options->model, "The ONNX model file, or a .mgraph file")
      ->required();
  sub->add_option("-o,--output", options->output, "The HTML file to write")->required();
  add_common_options(sub, options->common, {CommonOption::threads, CommonOption::records,
                                            CommonOption::input_shape});
  return {sub, [options] { return run_report(*options); }};
}

}  // namespace minic::cli
