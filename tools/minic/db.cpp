// `minic db show|best|merge`: reading and combining tuning databases. Course module 5.
//
//   minic db show DB.jsonl [--workload KEY]     a line per workload and target
//   minic db best DB.jsonl -o OUT.jsonl         the best record of each
//   minic db merge A.jsonl B.jsonl... -o OUT.jsonl
//
// The files are the JSON Lines databases `minic tune` writes (include/minic/autotune/
// database.h). `show` answers "what did tuning find?": per workload and target, in order of
// first appearance, the task, how many candidates were measured and how many ran, the
// latency of the record a model would run (Database::best's choice) and its GFLOP/s, and
// the default schedule's latency (the record without search decisions; its re-measurement
// if there is one) with the speed-up over it. `best` keeps one record per
// workload and target, a small file to ship next to a model; `merge` joins the databases
// of several runs or machines, dropping records present twice.
//
// Chapter: docs/module5-autotuning.md#7-the-database
#include "commands.h"

#include "minic/autotune/database.h"
#include "minic/support/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

namespace minic::cli {
namespace {

using autotune::Database;
using autotune::TuningRecord;

struct DbOptions {
  std::vector<std::string> inputs;  // one for show and best, any number for merge
  std::string workload;             // show: only this workload key
  std::string output;               // best, merge
};

// One line of `show`: the records of one workload on one target.
struct WorkloadSummary {
  std::string task;
  std::string workload;
  std::string target;
  int trials = 0;          // first timings
  int ok = 0;
  std::optional<TuningRecord> best;  // Database::best's choice; none: nothing ran
  double default_us = 0;   // 0: the default schedule was not measured
};

std::vector<WorkloadSummary> summarize(const Database& database) {
  std::vector<WorkloadSummary> summaries;
  std::map<std::pair<std::string, std::string>, size_t> index_of;
  for (const TuningRecord& record : database.records()) {
    auto [slot, inserted] =
        index_of.try_emplace({record.workload_key, record.target}, summaries.size());
    if (inserted) {
      summaries.push_back({record.task_name, record.workload_key, record.target});
    }
    WorkloadSummary& summary = summaries[slot->second];
    if (!record.remeasured) {
      ++summary.trials;
      if (record.ok()) ++summary.ok;
    }
    if (!record.ok()) continue;
    if (!summary.best || autotune::chosen_over(record, *summary.best)) summary.best = record;
    // The default schedule is the record the rules made without the search's decisions,
    // as first measured or as timed again beside the finalists.
    if (record.decisions.empty() && (summary.default_us == 0 || record.remeasured)) {
      summary.default_us = record.median_us;
    }
  }
  return summaries;
}

std::string time_text(double microseconds) {
  return microseconds > 0 ? fmt::format("{:.1f}", microseconds) : "-";
}

double best_us(const WorkloadSummary& summary) {
  return summary.best ? summary.best->median_us : 0;
}

std::string gflops_text(const WorkloadSummary& summary) {
  if (best_us(summary) <= 0 || summary.best->flops <= 0) return "-";
  return fmt::format("{:.2f}", summary.best->flops / best_us(summary) / 1e3);
}

std::string speedup_text(const WorkloadSummary& summary) {
  if (best_us(summary) <= 0 || summary.default_us <= 0) return "-";
  return fmt::format("{:.2f}x", summary.default_us / best_us(summary));
}

// Prints rows as columns: the first column left-aligned, the numbers right-aligned.
void print_table(const std::vector<std::vector<std::string>>& rows, size_t text_columns) {
  std::vector<size_t> widths(rows.front().size(), 0);
  for (const std::vector<std::string>& row : rows) {
    for (size_t column = 0; column < row.size(); ++column) {
      widths[column] = std::max(widths[column], row[column].size());
    }
  }
  for (const std::vector<std::string>& row : rows) {
    std::string line;
    for (size_t column = 0; column < row.size(); ++column) {
      if (column > 0) line += "  ";
      line += column < text_columns ? fmt::format("{:<{}}", row[column], widths[column])
                                    : fmt::format("{:>{}}", row[column], widths[column]);
    }
    line.erase(line.find_last_not_of(' ') + 1);
    fmt::print("{}\n", line);
  }
}

int run_show(const DbOptions& options) {
  const std::string& path = options.inputs.front();
  Database database = Database::load(path);
  std::vector<WorkloadSummary> summaries = summarize(database);
  if (!options.workload.empty()) {
    std::erase_if(summaries, [&](const WorkloadSummary& summary) {
      return summary.workload != options.workload;
    });
    if (summaries.empty()) fail("{}: no records of workload {}", path, options.workload);
  }
  std::vector<std::vector<std::string>> rows = {{"task", "workload", "target", "trials",
                                                 "ok", "best us", "GFLOP/s", "default us",
                                                 "speedup"}};
  for (const WorkloadSummary& summary : summaries) {
    rows.push_back({summary.task, summary.workload, summary.target,
                    std::to_string(summary.trials), std::to_string(summary.ok),
                    time_text(best_us(summary)), gflops_text(summary),
                    time_text(summary.default_us), speedup_text(summary)});
  }
  print_table(rows, /*text_columns=*/3);
  size_t remeasured = std::count_if(database.records().begin(), database.records().end(),
                                    [](const TuningRecord& r) { return r.remeasured; });
  fmt::print("{} records{}, {} workloads\n", database.records().size(),
             remeasured ? fmt::format(" ({} of them finalists timed again)", remeasured) : "",
             database.workloads().size());
  return 0;
}

int run_best(const DbOptions& options) {
  Database database = Database::load(options.inputs.front());
  Database best = autotune::best_records(database);
  best.save(options.output);
  fmt::print("wrote {} best records (of {}) to {}\n", best.records().size(),
             database.records().size(), options.output);
  return 0;
}

int run_merge(const DbOptions& options) {
  std::vector<Database> databases;
  size_t total = 0;
  for (const std::string& path : options.inputs) {
    databases.push_back(Database::load(path));
    total += databases.back().records().size();
  }
  Database merged = autotune::merge_databases(databases);
  merged.save(options.output);
  fmt::print("wrote {} records from {} files to {} ({} duplicates dropped)\n",
             merged.records().size(), databases.size(), options.output,
             total - merged.records().size());
  return 0;
}

}  // namespace

Command add_db_command(CLI::App& app) {
  auto options = std::make_shared<DbOptions>();
  CLI::App* db = app.add_subcommand("db", "Show, reduce and merge tuning databases (.jsonl)");
  db->require_subcommand(1);

  CLI::App* show = db->add_subcommand(
      "show", "A line per workload and target: trials, best latency, GFLOP/s, speed-up");
  show->add_option("database", options->inputs, "DB.jsonl")->required()->expected(1);
  show->add_option("--workload", options->workload, "Only this workload key");

  CLI::App* best = db->add_subcommand("best", "Keep the best record of each workload");
  best->add_option("database", options->inputs, "DB.jsonl")->required()->expected(1);
  best->add_option("-o,--output", options->output, "OUT.jsonl")->required();

  CLI::App* merge = db->add_subcommand("merge", "Join databases, dropping duplicate records");
  merge->add_option("databases", options->inputs, "A.jsonl B.jsonl ...")->required();
  merge->add_option("-o,--output", options->output, "OUT.jsonl")->required();

  return {db, [options, show, best] {
            if (show->parsed()) return run_show(*options);
            if (best->parsed()) return run_best(*options);
            return run_merge(*options);
          }};
}

}  // namespace minic::cli
