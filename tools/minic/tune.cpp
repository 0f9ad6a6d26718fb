// `minic tune MODEL -o DB.jsonl`: search for faster schedules, and keep them. Course module 5.
//
//   minic tune MODEL -o DB.jsonl [--trials N] [--budget 10m] [--resume] [--seed N]
//                    [--threads N] [--target T] [--per-round N]
//                    [--cost-model NAME] [--search NAME] [--warm-cache]
//                    [--finalists N] [--compile-jobs N]
//                    [--plot FILE.png]
//   minic tune -o DB.jsonl --plot FILE.png        (no model: draws an existing database)
//
// MODEL is an ONNX model or a graph in the text form (.mgraph). Extracts its tasks
// (include/minic/autotune/task.h) for the target (this machine's CPU, or a CPU --target
// names that this machine runs), runs the tuner (include/minic/autotune/tuner.h) with the
// search strategy --search names (include/minic/autotune/search_registry.h) and appends
// every measurement to DB.jsonl as it is made, keyed by the target's text. Prints a line
// per round and a table of tasks at the end. `minic compile|run|bench MODEL --records
// DB.jsonl` then use the best record of each kernel. --plot draws the tuning curve (best
// latency against trials, one line per task) with matplotlib (scripts/plot_tuning.py).
//
// Chapter: docs/module5-autotuning.md#8-the-task-scheduler-and-the-tuning-loop
#include "commands.h"
#include "common_options.h"
#include "graph_input.h"

#include "minic/autotune/cost_model.h"
#include "minic/autotune/database.h"
#include "minic/autotune/search_registry.h"
#include "minic/autotune/task.h"
#include "minic/autotune/tuner.h"
#include "minic/passes/pass_manager.h"
#include "minic/support/error.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

namespace minic::cli {
namespace {

struct TuneCommandOptions {
  std::string model;
  std::string output;
  int trials = 64;
  std::string budget;
  bool resume = false;
  uint64_t seed = 1;
  CommonOptions common;  // --threads (1 unless given), --target
  int per_round = 8;
  std::string cost_model = "xgboost";
  std::string search = "evolutionary";
  std::string plot;
  bool warm_cache = false;
  int finalists = 3;
  int compile_jobs = 0;
};

// "90" or "90s", "10m", "1h" → seconds.
double parse_duration(const std::string& text) {
  if (text.empty()) return 0;
  double scale = 1;
  std::string number = text;
  switch (text.back()) {
    case 's': number.pop_back(); break;
    case 'm': scale = 60; number.pop_back(); break;
    case 'h': scale = 3600; number.pop_back(); break;
    default: break;
  }
  try {
    size_t used = 0;
    double value = std::stod(number, &used);
    if (used == number.size() && value > 0) return value * scale;
  } catch (const std::exception&) {
  }
  fail("--budget '{}' is not a duration (e.g. 90s, 10m, 1h)", text);
}

std::string clock_text(double seconds) {
  int total = static_cast<int>(seconds + 0.5);
  return fmt::format("{}:{:02d}", total / 60, total % 60);
}

void print_summary(const autotune::TuneReport& report) {
  fmt::print("\n{:<32} {:>6} {:>6} {:>12} {:>12} {:>8} {:>9}\n", "task", "weight", "trials",
             "default us", "tuned us", "speedup", "GFLOP/s");
  double default_total = 0;
  double tuned_total = 0;
  for (const autotune::TaskSummary& task : report.tasks) {
    double speedup = task.default_us > 0 && task.best_us > 0 ? task.default_us / task.best_us : 0;
    double gflops = task.best_us > 0 ? task.flops / task.best_us / 1e3 : 0;
    fmt::print("{:<32} {:>6} {:>6} {:>12.1f} {:>12.1f} {:>7.2f}x {:>9.1f}\n",
               task.name.substr(0, 32), task.weight, task.trials, task.default_us, task.best_us,
               speedup, gflops);
    default_total += task.weight * task.default_us;
    tuned_total += task.weight * (task.best_us > 0 ? task.best_us : task.default_us);
  }
  fmt::print("kernels in all (weighted): default {:.1f} us, tuned {:.1f} us; {} trials in {}\n",
             default_total, tuned_total, report.trials, clock_text(report.elapsed_s));
  int finalists = 0;
  for (const autotune::TaskSummary& task : report.tasks) finalists += task.finalists;
  if (finalists > 0) {
    fmt::print("default and tuned us are re-measurements: {} finalists timed again in turns\n",
               finalists);
  }
}

// Draws the tuning curve of `database` into `png` with scripts/plot_tuning.py.
void plot(const std::string& database, const std::string& png) {
  std::filesystem::path script = std::filesystem::path(MINIC_SOURCE_DIR) / "scripts" /
                                 "plot_tuning.py";
  if (!std::filesystem::exists(script)) fail("--plot needs {} (minic's source tree)", script.string());
  std::string command = fmt::format("python3 '{}' '{}' '{}'", script.string(), database, png);
  if (std::system(command.c_str()) != 0) {
    fail("drawing {} failed (python3 with matplotlib runs {})", png, script.string());
  }
  fmt::print("wrote {}\n", png);
}

int run_tune(const TuneCommandOptions& options) {
  if (options.model.empty()) {
    if (options.plot.empty()) fail("tune needs a MODEL (or --plot to draw an existing database)");
    plot(options.output, options.plot);
    return 0;
  }
  autotune::TuneOptions tune_options;
  tune_options.trials = options.trials;
  tune_options.budget_s = parse_duration(options.budget);
  tune_options.resume = options.resume;
  tune_options.seed = options.seed;
  tune_options.per_round = options.per_round;
  tune_options.cost_model = options.cost_model;
  tune_options.search = options.search;
  tune_options.measure.threads = options.common.threads;
  tune_options.measure.flush_cache = !options.warm_cache;
  tune_options.finalists = options.finalists;
  tune_options.measure.compile_jobs = options.compile_jobs;
  if (options.trials < 1) fail("--trials must be at least 1");
  if (options.per_round < 1) fail("--per-round must be at least 1");
  if (options.finalists < 0) fail("--finalists must be 0 or more");
  autotune::check_search_name(options.search);
  autotune::check_cost_model_name(options.cost_model);

  const Target target = options.common.parsed_target();
  require_cpu_target(target, "tune");
  std::vector<autotune::Task> tasks =
      autotune::extract_tasks(read_graph_file(options.model, {}), default_pipeline(), target);
  if (!options.resume && std::filesystem::exists(options.output)) {
    fail("{} exists: pass --resume to go on from it, or choose another file", options.output);
  }
  autotune::Database database =
      options.resume ? autotune::Database::load(options.output, /*missing_ok=*/true)
                     : autotune::Database{};
  database.attach(options.output);
  int kernels = 0;
  for (const autotune::Task& task : tasks) kernels += task.weight;
  fmt::print("tuning {} for {}: {} tasks ({} kernels), {} trials{}, {} search, cost model {}, "
             "seed {}\n",
             options.model, target.str(), tasks.size(), kernels, options.trials,
             options.budget.empty() ? "" : fmt::format(" or {}", options.budget),
             options.search, options.cost_model, options.seed);
  std::fflush(stdout);

  autotune::TuneReport report = autotune::tune(
      tasks, database, target, tune_options, [&](const autotune::RoundReport& round) {
        const autotune::Task& task = tasks[round.task_index];
        fmt::print("round {:>3}  task {}/{} {:<24} trials {:>4}/{}  best {:>10.1f} us "
                   "{:>7.1f} GFLOP/s  elapsed {}  eta {}\n",
                   round.round, round.task_index + 1, round.task_count,
                   task.name.substr(0, 24), round.trials, options.trials, round.best_us,
                   round.best_gflops, clock_text(round.elapsed_s), clock_text(round.eta_s));
        std::fflush(stdout);
      });
  print_summary(report);
  fmt::print("records in {}\n", options.output);
  if (!options.plot.empty()) plot(options.output, options.plot);
  return 0;
}

}  // namespace

Command add_tune_command(CLI::App& app) {
  auto options = std::make_shared<TuneCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "tune", "Search for faster schedules of a model's kernels and record them");
  sub->add_option("model", options->model, "The ONNX model file, or a .mgraph file");
  sub->add_option("-o,--output", options->output, "The tuning database (JSON Lines)")
      ->required();
  sub->add_option("--trials", options->trials, "Candidates to measure, over all tasks")
      ->capture_default_str();
  sub->add_option("--budget", options->budget, "Stop after this long (90s, 10m, 1h)");
  sub->add_flag("--resume", options->resume, "Go on from the records already in the database");
  sub->add_option("--seed", options->seed, "Seed of every random choice")->capture_default_str()
      ->check(non_negative());
  options->common.threads = 1;
  add_common_options(sub, options->common,
                     {CommonOption::threads, CommonOption::target, CommonOption::custom_ops});
  sub->add_option("--per-round", options->per_round, "Candidates measured per round")
      ->capture_default_str();
  std::string models;
  for (const autotune::CostModelInfo* info : autotune::CostModelRegistry::all()) {
    models += fmt::format("\n  {}: {}", info->name, info->summary);
  }
  sub->add_option("--cost-model", options->cost_model, "The cost model:" + models)
      ->capture_default_str();
  std::string strategies;
  for (const autotune::SearchInfo* info : autotune::SearchRegistry::all()) {
    strategies += fmt::format("\n  {}: {}", info->name, info->summary);
  }
  sub->add_option("--search", options->search, "The search strategy:" + strategies)
      ->capture_default_str();
  sub->add_option("--plot", options->plot, "Draw the tuning curve into this PNG file");
  sub->add_flag("--warm-cache", options->warm_cache,
                "Time candidates back to back with warm caches (default: each call after "
                "evicting its arguments from the caches, as in a model)");
  sub->add_option("--finalists", options->finalists,
                  "At the end, time each task's N fastest schedules again beside its default "
                  "one, in turns, and choose among those timings (0: keep the first timings)")
      ->capture_default_str();
  sub->add_option("--compile-jobs", options->compile_jobs,
                  "Compile a round's candidates in this many processes at once before timing "
                  "them one by one (0: one per core; 1: each while it is timed)")
      ->capture_default_str()->check(non_negative());
  sub->footer("Use the records with `minic run|bench|compile MODEL --records DB.jsonl`.");
  return {sub, [options] { return run_tune(*options); }};
}

}  // namespace minic::cli
