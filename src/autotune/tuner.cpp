// tune(): rounds of search, measurement and retraining until the budget is spent.
// Course module 5; the steps are those of tuner.h.
//
// Chapter: docs/module5-autotuning.md#8-the-task-scheduler-and-the-tuning-loop
#include "minic/autotune/tuner.h"

#include "minic/autotune/features.h"
#include "minic/autotune/search.h"
#include "minic/autotune/search_registry.h"
#include "minic/autotune/search_space.h"
#include "minic/autotune/task_scheduler.h"
#include "minic/codegen/llvm.h"
#include "minic/schedule/rules.h"
#include "minic/schedule/schedule.h"
#include "minic/schedule/trace.h"
#include "minic/support/error.h"

#include <algorithm>
#include <chrono>
#include <memory>

namespace minic::autotune {
namespace {

using Clock = std::chrono::steady_clock;

// One candidate of a round, ready to measure.
struct Candidate {
  Decisions decisions;  // empty for the default schedule
  std::string trace_text;
  loop::PrimFunc scheduled;
  std::vector<float> features;
};

// Everything the tuner knows about one task.
struct TaskState {
  const Task* task = nullptr;
  std::unique_ptr<SearchSpace> space;
  std::unique_ptr<Search> search;
  bool default_measured = false;
  double default_us = 0;
  double best_us = 0;
  int trials = 0;
  int measured_here = 0;  // trials of this run (not resumed)
  int finalists = 0;      // re-measured in step 5
};

// A measured candidate, for training the cost model.
struct Sample {
  int task = 0;
  std::vector<float> features;
  double latency_us = 0;  // 0: it failed
};

// The point of a measured candidate: the default schedule (a record without decisions) is
// the space's default point, so that the search can start from it.
const Decisions& point_of(const TaskState& state, const Decisions& decisions) {
  return decisions.empty() ? state.space->default_point() : decisions;
}

Candidate default_candidate(const Task& task, const Target& target) {
  schedule::Schedule sch(task.func);
  sch.replay(schedule::default_cpu_trace(task.func, target));
  Candidate candidate;
  candidate.trace_text = schedule::print_trace(sch.trace());
  candidate.scheduled = sch.func();
  candidate.features = features_of_scheduled(candidate.scheduled);
  return candidate;
}

// Retrains the model on every sample: each scored by its task's best latency over its
// own (1 for the best of its task), 0 for a failure.
void retrain(CostModel& model, const std::vector<Sample>& samples,
             const std::vector<TaskState>& states) {
  std::vector<std::vector<float>> features;
  std::vector<double> scores;
  for (const Sample& sample : samples) {
    double best = states[sample.task].best_us;
    features.push_back(sample.features);
    scores.push_back(sample.latency_us > 0 && best > 0 ? best / sample.latency_us : 0);
  }
  if (!features.empty()) model.train(features, scores);
}

// Takes the records the database already has for the task (--resume): they count as
// measured, seed the search and train the model.
void resume_task(TaskState& state, int index, const Database& database, const Target& target,
                 std::vector<Sample>& samples) {
  for (const TuningRecord& record : database.of_workload(state.task->workload_key, target)) {
    if (record.remeasured) continue;  // a second timing of a record already read
    Sample sample;
    sample.task = index;
    try {
      schedule::Schedule sch(state.task->func);
      sch.replay(schedule::parse_trace(record.trace, "the tuning database"));
      sample.features = features_of_scheduled(sch.func());
    } catch (const schedule::TraceError&) {
      continue;  // a record this version of minic cannot replay: not a sample
    }
    sample.latency_us = record.ok() ? record.median_us : 0;
    samples.push_back(sample);
    state.search->add_measured(point_of(state, record.decisions), record.trace,
                               record.ok() ? 1 / record.median_us : 0);
    state.trials = std::max(state.trials, record.trial + 1);
    if (record.decisions.empty()) {
      state.default_measured = true;
      if (record.ok()) state.default_us = record.median_us;
    }
    if (record.ok() && (state.best_us == 0 || record.median_us < state.best_us)) {
      state.best_us = record.median_us;
    }
  }
}

// The tuner's state over all tasks: each task's, and every sample so far.
struct Tuning {
  std::vector<TaskState> states;
  std::vector<Sample> samples;
  int trials = 0;          // measured, resumed records included
  int resumed_trials = 0;  // of which taken from the database
  int round = 0;
};

// Before the first round: a search space and a search per task, and with `resume` the
// task's records from the database.
Tuning start_tuning(const std::vector<Task>& tasks, const Database& database,
                    const Target& target, const TuneOptions& options) {
  Tuning tuning;
  tuning.states.resize(tasks.size());
  for (size_t t = 0; t < tasks.size(); ++t) {
    TaskState& state = tuning.states[t];
    state.task = &tasks[t];
    state.space = std::make_unique<SearchSpace>(tasks[t].func, target);
    state.search = make_search(options.search, *state.space, options.seed + t);
    if (options.resume) {
      resume_task(state, static_cast<int>(t), database, target, tuning.samples);
    }
    tuning.resumed_trials += state.trials;
  }
  tuning.trials = tuning.resumed_trials;
  return tuning;
}

// Step 2: the round's candidates for one task: the default schedule first (once), then
// the search's.
std::vector<Candidate> round_candidates(TaskState& state, CostModel& model,
                                        const Target& target, int wanted) {
  std::vector<Candidate> batch;
  if (!state.default_measured) {
    batch.push_back(default_candidate(*state.task, target));
    state.search->exclude(batch.back().trace_text);
  }
  int more = std::max(wanted - static_cast<int>(batch.size()), 0);
  for (Proposal& proposal : state.search->propose(model, more)) {
    batch.push_back({proposal.decisions, proposal.trace_text, proposal.scheduled,
                     proposal.features});
  }
  return batch;
}

// Step 3 after the timing: each candidate's record appended to the database, and what the
// task, the search and the samples learn from it.
void record_round(Tuning& tuning, int t, const std::vector<Candidate>& batch,
                  const std::vector<MeasureResult>& results, const Target& target,
                  Database& database) {
  TaskState& state = tuning.states[t];
  const Task& task = *state.task;
  for (size_t i = 0; i < batch.size(); ++i) {
    const Candidate& candidate = batch[i];
    const MeasureResult& result = results[i];
    TuningRecord record;
    record.workload_key = task.workload_key;
    record.task_name = task.name;
    record.target = target.str();
    record.trace = candidate.trace_text;
    record.decisions = candidate.decisions;
    record.times_us = result.times_us;
    record.median_us = result.ok ? result.median_us : 0;
    record.error = result.ok ? "" : result.error;
    record.flops = task.flops;
    record.trial = state.trials++;
    ++state.measured_here;
    record.time = utc_timestamp();
    database.add(record);
    ++tuning.trials;

    double latency = result.ok ? result.median_us : 0;
    tuning.samples.push_back({t, candidate.features, latency});
    state.search->add_measured(point_of(state, candidate.decisions), candidate.trace_text,
                               latency > 0 ? 1 / latency : 0);
    if (candidate.decisions.empty()) {
      state.default_measured = true;
      state.default_us = latency;
    }
    if (latency > 0 && (state.best_us == 0 || latency < state.best_us)) state.best_us = latency;
  }
}

// The progress line after a round of task `t`, with the time left by the trial budget or
// the time budget, whichever ends first.
RoundReport round_report(const Tuning& tuning, int t, const TuneOptions& options,
                         double elapsed_s) {
  const TaskState& state = tuning.states[t];
  RoundReport report;
  report.round = tuning.round;
  report.task_index = t;
  report.task_count = static_cast<int>(tuning.states.size());
  report.trials = tuning.trials;
  report.best_us = state.best_us;
  report.best_gflops = state.best_us > 0 ? state.task->flops / state.best_us / 1e3 : 0;
  report.elapsed_s = elapsed_s;
  int done_here = tuning.trials - tuning.resumed_trials;
  double by_trials = report.elapsed_s / done_here * (options.trials - tuning.trials);
  report.eta_s = options.budget_s > 0
                     ? std::min(by_trials, std::max(options.budget_s - report.elapsed_s, 0.0))
                     : by_trials;
  return report;
}

// Step 5's finalists among a task's records: the `count` fastest first timings, and the
// default schedule's, each trace once.
std::vector<TuningRecord> finalists_of(std::vector<TuningRecord> records, int count) {
  std::erase_if(records, [](const TuningRecord& r) { return !r.ok() || r.remeasured; });
  std::stable_sort(records.begin(), records.end(), [](const auto& a, const auto& b) {
    return a.median_us < b.median_us;
  });
  std::vector<TuningRecord> finalists;
  auto has = [&](const TuningRecord& r) {
    return std::any_of(finalists.begin(), finalists.end(),
                       [&](const TuningRecord& f) { return f.trace == r.trace; });
  };
  for (const TuningRecord& record : records) {
    if (static_cast<int>(finalists.size()) == count) break;
    if (!has(record)) finalists.push_back(record);
  }
  for (const TuningRecord& record : records) {
    if (record.decisions.empty() && !has(record)) finalists.push_back(record);
  }
  return finalists;
}

// Step 5 for one task: its finalists timed kRemeasureRounds times in turn (A B C, A B C,
// ...), so that a change in the machine's speed during the run touches all of them alike,
// and appended to the database as re-measured records with every timing.
void remeasure_task(TaskState& state, const Target& target, const TuneOptions& options,
                    Database& database) {
  constexpr int kRemeasureRounds = 2;
  std::vector<TuningRecord> finalists;
  std::vector<loop::PrimFunc> funcs;
  for (const TuningRecord& finalist :
       finalists_of(database.of_workload(state.task->workload_key, target), options.finalists)) {
    try {
      schedule::Schedule sch(state.task->func);
      sch.replay(schedule::parse_trace(finalist.trace, "the tuning database"));
      funcs.push_back(sch.func());
      finalists.push_back(finalist);
    } catch (const schedule::TraceError&) {
      // A record of another version of minic (--resume): it is not a candidate any more.
    }
  }
  if (finalists.size() < 2) return;  // nothing to choose between
  // The finalists were compiled during the search, and their code is in the cache: no
  // compiling children first (measure.h), each timing child reads its code.
  MeasureOptions measure_options = options.measure;
  measure_options.compile_jobs = 1;
  std::vector<std::vector<double>> times(finalists.size());
  for (int round = 0; round < kRemeasureRounds; ++round) {
    std::vector<MeasureResult> results = measure(funcs, target, measure_options);
    for (size_t i = 0; i < finalists.size(); ++i) {
      if (!results[i].ok) continue;
      times[i].insert(times[i].end(), results[i].times_us.begin(), results[i].times_us.end());
    }
  }
  double best_us = 0;
  for (size_t i = 0; i < finalists.size(); ++i) {
    if (times[i].empty()) continue;  // failed this time: it cannot be chosen
    TuningRecord record = finalists[i];
    record.times_us = times[i];
    record.median_us = median_of(times[i]);
    record.time = utc_timestamp();
    record.remeasured = true;
    database.add(record);
    ++state.finalists;
    if (record.decisions.empty()) state.default_us = record.median_us;
    if (best_us == 0 || record.median_us < best_us) best_us = record.median_us;
  }
  if (best_us > 0) state.best_us = best_us;
}

TuneReport final_report(const Tuning& tuning, double elapsed_s) {
  TuneReport report;
  report.trials = tuning.trials;
  report.elapsed_s = elapsed_s;
  for (const TaskState& state : tuning.states) {
    report.tasks.push_back({state.task->name, state.task->workload_key, state.task->weight,
                            state.trials, state.default_us, state.best_us, state.finalists,
                            state.task->flops});
  }
  return report;
}

}  // namespace

TuneReport tune(const std::vector<Task>& tasks, Database& database, const Target& target,
                const TuneOptions& options,
                const std::function<void(const RoundReport&)>& progress) {
  if (tasks.empty()) fail("nothing to tune: the model has no compiled kernels");
  codegen::check_runs_here(target);
  auto start = Clock::now();
  auto elapsed_s = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::unique_ptr<CostModel> model = make_cost_model(options.cost_model, options.seed);
  Tuning tuning = start_tuning(tasks, database, target, options);
  std::vector<int> weights;
  for (const Task& task : tasks) weights.push_back(task.weight);
  TaskScheduler scheduler(weights);
  for (size_t t = 0; t < tasks.size(); ++t) {
    const TaskState& state = tuning.states[t];
    if (state.trials > 0) scheduler.report(static_cast<int>(t), 0, state.best_us);
  }
  retrain(*model, tuning.samples, tuning.states);

  while (tuning.trials < options.trials &&
         (options.budget_s <= 0 || elapsed_s() < options.budget_s)) {
    // 1. A task.
    int t = scheduler.next();
    if (t < 0) break;  // every space is exhausted
    TaskState& state = tuning.states[t];
    // 2. Its candidates.
    std::vector<Candidate> batch = round_candidates(
        state, *model, target, std::min(options.per_round, options.trials - tuning.trials));
    if (batch.empty()) {
      scheduler.finish(t);
      continue;
    }
    // 3. Timed and recorded. A candidate over twice as slow as the task's best is timed
    //    once only.
    std::vector<loop::PrimFunc> funcs;
    for (const Candidate& candidate : batch) funcs.push_back(candidate.scheduled);
    MeasureOptions measure_options = options.measure;
    if (state.best_us > 0) measure_options.give_up_us = 2 * state.best_us;
    double best_before = state.best_us;
    record_round(tuning, t, batch, measure(funcs, target, measure_options), target, database);
    scheduler.report(t, best_before, state.best_us);
    // 4. The cost model retrained.
    retrain(*model, tuning.samples, tuning.states);
    ++tuning.round;
    if (progress) progress(round_report(tuning, t, options, elapsed_s()));
  }
  // 5. The finalists timed again, for every task this run measured.
  if (options.finalists > 0) {
    for (TaskState& state : tuning.states) {
      if (state.measured_here > 0) remeasure_task(state, target, options, database);
    }
  }
  return final_report(tuning, elapsed_s());
}

}  // namespace minic::autotune
