// Tuning a model: the loop that ties tasks, search, measurement and the database together.
//
// Course module 5. tune() runs rounds until the trial budget or the time budget is spent:
//   1. the task scheduler (task_scheduler.h) picks a task;
//   2. the task's search (search.h; the evolutionary search unless TuneOptions::search
//      names another) proposes candidates for it, ranked by the cost model;
//   3. the best few are measured (measure.h) and appended to the database;
//   4. the cost model is retrained on every measurement so far.
// Then, once:
//   5. each task's fastest few schedules and its default one are timed again, side by side
//      (the finalists; TuneOptions::finalists), and recorded as re-measured: the fastest of
//      many noisy timings is too often a lucky one, and a model runs the fastest finalist.
// The first round of every task also measures the default schedule, so a tuned kernel is
// never slower than the untuned one by more than the timing noise. With `resume`, the
// records already in the database for these tasks count as measured: the search starts
// from them and the trial budget counts them.
//
// Chapter: docs/module5-autotuning.md#8-the-task-scheduler-and-the-tuning-loop
#pragma once

#include "minic/autotune/database.h"
#include "minic/autotune/measure.h"
#include "minic/autotune/task.h"
#include "minic/target/target.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace minic::autotune {

struct TuneOptions {
  int trials = 64;             // measured candidates, over all tasks
  double budget_s = 0;         // wall-clock limit (0: none)
  int per_round = 8;           // candidates measured per round
  uint64_t seed = 1;
  bool resume = false;
  std::string cost_model = "xgboost";  // or "random"
  std::string search = "evolutionary";  // a strategy of search_registry.h
  // Step 5: the fastest schedules of each task timed again with its default (0: none).
  // Not counted in `trials`; it runs after the time budget too.
  int finalists = 3;
  MeasureOptions measure;
};

// One line of progress, after each round.
struct RoundReport {
  int round = 0;
  int task_index = 0;          // into the tasks
  int task_count = 0;
  int trials = 0;              // measured so far, all tasks
  double best_us = 0;          // the task's best so far
  double best_gflops = 0;
  double elapsed_s = 0;
  double eta_s = 0;            // by the trial budget or the time budget
};

// How each task ended.
struct TaskSummary {
  std::string name;
  std::string workload_key;
  int weight = 0;
  int trials = 0;
  double default_us = 0;       // the default schedule (0 if it could not be measured)
  double best_us = 0;          // the best measured (0 if nothing ran)
  int finalists = 0;           // re-measured in step 5 (then both times above are theirs)
  double flops = 0;
};

struct TuneReport {
  std::vector<TaskSummary> tasks;
  int trials = 0;
  double elapsed_s = 0;
};

// Tunes `tasks` for `target`, a CPU this machine can run code for (Error otherwise),
// appending every measurement to `database` (which should be attached to its file), each
// record keyed by target.str(). `progress` is called after every round.
TuneReport tune(const std::vector<Task>& tasks, Database& database, const Target& target,
                const TuneOptions& options,
                const std::function<void(const RoundReport&)>& progress = {});

}  // namespace minic::autotune
