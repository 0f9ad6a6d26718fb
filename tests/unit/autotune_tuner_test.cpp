// Tests of the autotuner's tasks, task scheduler and tuning loop (course module 5): tasks
// group equal kernels; the scheduler tries every task once, then the largest expected
// saving; a small tuning run with a fixed seed proposes the same first candidates twice,
// and what it chooses computes what the unscheduled kernel computes; the finalists are
// timed again and chosen among; a resumed run goes on from the database without measuring
// a trace twice; every stored record replays.
#include "minic/autotune/search_space.h"
#include "minic/autotune/task.h"
#include "minic/autotune/task_scheduler.h"
#include "minic/autotune/tuner.h"
#include "minic/codegen/llvm.h"
#include "minic/ir/loop/interpreter.h"
#include "minic/ir/loop/printer.h"
#include "minic/runtime/compare.h"
#include "minic/schedule/schedule.h"

#include "loop_test_util.h"
#include "pass_test_util.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>

#include <unistd.h>

using namespace minic;
using namespace minic::autotune;

namespace {

// Two MatMul + Relu kernels over different values but equal shapes, and a third of
// another shape. The graph passes are left out, so every node is a kernel.
const char* kThreeMatMuls = R"(graph g(%a: f32[32,48], %b: f32[48,32], %c: f32[48,32]) -> (%y: f32[32,32], %z: f32[32,32], %w: f32[32,48]) opset 17 {
  %y = MatMul(%a, %b)
  %z = MatMul(%a, %c)
  %t = Transpose(%c) {perm = [1, 0]}
  %w = MatMul(%y, %t)
  return %y, %z, %w
})";

// The tuner times candidates here: it tunes for this machine's CPU.
const Target& host() {
  static const Target target = codegen::host_target();
  return target;
}

std::vector<Task> three_matmul_tasks() {
  return extract_tasks(testing::graph_from_text(kThreeMatMuls), {}, host());
}

// The outputs of `func` on random inputs (every parameter filled, then run).
std::vector<Tensor> run_on_random_inputs(const loop::PrimFunc& func, uint64_t seed) {
  std::mt19937 rng(static_cast<unsigned>(seed));
  std::vector<Tensor> args;
  for (const loop::Buffer& param : func.params) {
    args.push_back(loop::test::uniform_tensor(param->shape, rng));
  }
  std::vector<Tensor*> pointers;
  for (Tensor& arg : args) pointers.push_back(&arg);
  loop::run_func(func, pointers);
  return args;
}

TuneOptions small_run(int trials, uint64_t seed) {
  TuneOptions options;
  options.trials = trials;
  options.per_round = 3;
  options.seed = seed;
  options.cost_model = "random";
  options.measure.repeats = 2;
  options.measure.min_repeat_ms = 1;
  options.finalists = 0;  // the tests of step 5 ask for it
  return options;
}

}  // namespace

TEST_CASE("tasks group kernels that differ only in names", "[autotune_tuner]") {
  std::vector<Task> tasks = three_matmul_tasks();
  // y and z are one workload; the transpose and w are two more.
  REQUIRE(tasks.size() == 3);
  CHECK(tasks[0].weight == 2);
  CHECK(tasks[1].weight == 1);
  CHECK(tasks[2].weight == 1);
  std::set<std::string> keys;
  for (const Task& task : tasks) keys.insert(task.workload_key);
  CHECK(keys.size() == 3);
  // The key ignores the function's name.
  loop::PrimFunc renamed = tasks[0].func;
  renamed.name = "another_name";
  CHECK(workload_key(renamed) == tasks[0].workload_key);
}

TEST_CASE("count_flops counts a multiply-add as two operations", "[autotune_tuner]") {
  std::vector<Task> tasks = three_matmul_tasks();
  CHECK(tasks[0].flops == 2.0 * 32 * 48 * 32);
  CHECK(tasks[1].flops == 0);  // a transpose only moves data
  CHECK(tasks[2].flops == 2.0 * 32 * 32 * 48);
}

TEST_CASE("the task scheduler tries every task, then the largest expected saving",
          "[autotune_tuner]") {
  TaskScheduler scheduler({1, 3});
  CHECK(scheduler.next() == 0);
  scheduler.report(0, 0, 100);
  CHECK(scheduler.next() == 1);
  scheduler.report(1, 0, 50);
  // Task 1 weighs 3 x 50 us against task 0's 1 x 100 us.
  CHECK(scheduler.next() == 1);
  scheduler.report(1, 50, 50);  // no gain: down to the floor
  CHECK(scheduler.next() == 0);
  scheduler.finish(0);
  CHECK(scheduler.next() == 1);
  scheduler.finish(1);
  CHECK(scheduler.next() == -1);
}

TEST_CASE("a small tuning run is deterministic and its choice is correct", "[autotune_tuner]") {
  std::vector<Task> tasks = three_matmul_tasks();
  std::vector<Task> one = {tasks[2]};
  Database first;
  Database second;
  TuneReport report = tune(one, first, host(), small_run(6, 7));
  tune(one, second, host(), small_run(6, 7));
  REQUIRE(first.records().size() == 6);
  REQUIRE(second.records().size() == 6);
  CHECK(report.trials == 6);
  // The first round (the default schedule, then two proposals) depends on the seed only.
  for (size_t i = 0; i < 3; ++i) {
    CHECK(first.records()[i].trace == second.records()[i].trace);
    CHECK(first.records()[i].decisions == second.records()[i].decisions);
  }
  CHECK(first.records()[0].decisions.empty());  // the default schedule comes first
  for (const TuningRecord& record : first.records()) {
    INFO(record.trace << record.error);
    CHECK(record.ok());
    CHECK(record.workload_key == one[0].workload_key);
  }

  // The best record is the one the tuner reports.
  std::optional<TuningRecord> best = first.best(one[0].workload_key, host());
  REQUIRE(best);
  CHECK(report.tasks[0].best_us == best->median_us);

  // Every stored record, the chosen one included, replays on the task's function (after
  // a round trip through the text form) and computes what the unscheduled function does.
  std::vector<Tensor> expected = run_on_random_inputs(one[0].func, 3);
  for (const TuningRecord& stored : first.records()) {
    TuningRecord record = record_from_json(record_to_json(stored), "<test>");
    INFO(record.trace);
    schedule::Schedule sch(one[0].func);
    sch.replay(schedule::parse_trace(record.trace));
    CHECK(schedule::print_trace(sch.trace()) == record.trace);
    std::vector<Tensor> actual = run_on_random_inputs(sch.func(), 3);
    REQUIRE(actual.size() == expected.size());
    for (size_t k = 0; k < actual.size(); ++k) {
      CHECK(compare_tensors(actual[k], expected[k], {1e-5, 1e-6}).ok());
    }
  }
}

TEST_CASE("the finalists are timed again in turns and chosen among", "[autotune_tuner]") {
  std::vector<Task> tasks = three_matmul_tasks();
  std::vector<Task> one = {tasks[2]};
  Database database;
  TuneOptions options = small_run(6, 7);
  options.finalists = 2;
  TuneReport report = tune(one, database, host(), options);
  CHECK(report.trials == 6);  // the re-measurements are not trials

  std::vector<TuningRecord> first;
  std::vector<TuningRecord> again;
  for (const TuningRecord& record : database.records()) {
    (record.remeasured ? again : first).push_back(record);
  }
  REQUIRE(first.size() == 6);
  REQUIRE(first[0].decisions.empty());
  // The two fastest first timings and the default schedule (unless it is one of them).
  std::vector<TuningRecord> by_time = first;
  std::stable_sort(by_time.begin(), by_time.end(),
                   [](const auto& a, const auto& b) { return a.median_us < b.median_us; });
  std::set<std::string> expected = {by_time[0].trace, by_time[1].trace, first[0].trace};
  std::set<std::string> remeasured;
  for (const TuningRecord& record : again) {
    INFO(record.trace << record.error);
    CHECK(record.ok());
    remeasured.insert(record.trace);
    // Two turns of options.measure.repeats timings, under the trial it was first timed in.
    CHECK(record.times_us.size() == 2 * 2);
    auto original = std::find_if(first.begin(), first.end(),
                                 [&](const auto& f) { return f.trace == record.trace; });
    REQUIRE(original != first.end());
    CHECK(record.trial == original->trial);
    CHECK(record.decisions == original->decisions);
  }
  CHECK(remeasured == expected);
  CHECK(again.size() == expected.size());
  CHECK(report.tasks[0].finalists == static_cast<int>(again.size()));

  // The database chooses among the finalists, and the report gives their times.
  std::optional<TuningRecord> best = database.best(one[0].workload_key, host());
  REQUIRE(best);
  CHECK(best->remeasured);
  CHECK(report.tasks[0].best_us == best->median_us);
  for (const TuningRecord& record : again) {
    CHECK(best->median_us <= record.median_us);
    if (record.decisions.empty()) CHECK(report.tasks[0].default_us == record.median_us);
  }
}

TEST_CASE("a resumed run goes on from the database", "[autotune_tuner]") {
  std::vector<Task> tasks = three_matmul_tasks();
  std::vector<Task> one = {tasks[0]};
  // One file per process: two test binaries (a sanitizer build beside a release one) may
  // run this test at once.
  std::string path = (std::filesystem::temp_directory_path() /
                      ("minic_resume_test_" + std::to_string(getpid()) + ".jsonl"))
                         .string();
  std::filesystem::remove(path);
  {
    Database database;
    database.attach(path);
    tune(one, database, host(), small_run(4, 11));
  }
  Database resumed = Database::load(path);
  REQUIRE(resumed.records().size() == 4);
  resumed.attach(path);
  TuneOptions options = small_run(7, 12);
  options.resume = true;
  TuneReport report = tune(one, resumed, host(), options);
  CHECK(report.trials == 7);

  // Three more records, numbered on from the first run's, none a repeat.
  Database file = Database::load(path);
  REQUIRE(file.records().size() == 7);
  std::set<std::string> traces;
  std::set<int> trials;
  int defaults = 0;
  for (const TuningRecord& record : file.records()) {
    traces.insert(record.trace);
    trials.insert(record.trial);
    if (record.decisions.empty()) ++defaults;
  }
  CHECK(traces.size() == 7);
  CHECK(trials == std::set<int>{0, 1, 2, 3, 4, 5, 6});
  CHECK(defaults == 1);  // the default schedule was measured once, in the first run
  std::filesystem::remove(path);
}
