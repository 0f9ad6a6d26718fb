// The autotuner from Python. Course module 8 (the API) over module 5 (the tuner,
// include/minic/autotune/tuner.h, called as `minic tune` calls it).
//
//   tasks = _minic.tune(graph, "db.jsonl", options, on_round)
//
// `on_round` is called after every round with a dict of its progress (the tuner runs with
// the GIL released and takes it back for the call); the Python side draws a progress bar
// from it. Ctrl-C is seen at the next round: Python's KeyboardInterrupt ends the tuning,
// and every record measured so far is in the database already.
//
// Chapter: docs/module8-deployment.md#5-minic-from-python
#include "bindings.h"

#include "minic/autotune/cost_model.h"
#include "minic/autotune/database.h"
#include "minic/autotune/search_registry.h"
#include "minic/autotune/task.h"
#include "minic/autotune/tuner.h"
#include "minic/driver/target.h"
#include "minic/passes/pipeline.h"

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <filesystem>

namespace minic::python {
namespace {

// Which of `options` (a dict) are set: trials, budget_s, seed, per_round, cost_model,
// search, threads, finalists, compile_jobs, resume. Unknown keys are an Error.
autotune::TuneOptions tune_options(const py::dict& options) {
  autotune::TuneOptions tune;
  tune.measure.threads = 1;
  for (const auto& [key_object, value] : options) {
    const std::string key = key_object.cast<std::string>();
    if (key == "trials") tune.trials = value.cast<int>();
    else if (key == "budget_s") tune.budget_s = value.cast<double>();
    else if (key == "seed") tune.seed = value.cast<uint64_t>();
    else if (key == "per_round") tune.per_round = value.cast<int>();
    else if (key == "cost_model") tune.cost_model = value.cast<std::string>();
    else if (key == "search") tune.search = value.cast<std::string>();
    else if (key == "threads") tune.measure.threads = value.cast<int>();
    else if (key == "finalists") tune.finalists = value.cast<int>();
    else if (key == "compile_jobs") tune.measure.compile_jobs = value.cast<int>();
    else if (key == "resume") tune.resume = value.cast<bool>();
    else fail("tune: unknown option '{}'", key);
  }
  if (tune.trials < 1) fail("tune: trials must be at least 1");
  if (tune.per_round < 1) fail("tune: per_round must be at least 1");
  if (tune.finalists < 0) fail("tune: finalists must be 0 or more");
  if (tune.budget_s < 0) fail("tune: budget_s must be 0 (none) or more");
  autotune::check_search_name(tune.search);
  autotune::check_cost_model_name(tune.cost_model);
  return tune;
}

py::list tune(const Graph& graph, const std::string& records, const std::string& target,
              const py::dict& options, const std::function<void(py::dict)>& on_round) {
  const autotune::TuneOptions tune = tune_options(options);
  const Target parsed = parse_target(target);
  if (!parsed.is_cpu()) fail("tune: the tuner measures on this machine's CPU, not {}", target);
  if (!tune.resume && std::filesystem::exists(records)) {
    fail("{} exists: pass resume=True to go on from it, or choose another file", records);
  }
  std::unique_ptr<Graph> copy = graph.clone();
  autotune::TuneReport report;
  {
    py::gil_scoped_release release;
    std::vector<autotune::Task> tasks =
        autotune::extract_tasks(std::move(*copy), default_pipeline(), parsed);
    autotune::Database database = tune.resume
                                      ? autotune::Database::load(records, /*missing_ok=*/true)
                                      : autotune::Database{};
    database.attach(records);
    report = autotune::tune(tasks, database, parsed, tune, [&](const autotune::RoundReport& r) {
      if (!on_round) return;
      py::gil_scoped_acquire acquire;
      py::dict round;
      round["round"] = r.round;
      round["task"] = tasks[static_cast<size_t>(r.task_index)].name;
      round["task_index"] = r.task_index;
      round["task_count"] = r.task_count;
      round["trials"] = r.trials;
      round["best_us"] = r.best_us;
      round["best_gflops"] = r.best_gflops;
      round["elapsed_s"] = r.elapsed_s;
      round["eta_s"] = r.eta_s;
      on_round(round);
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    });
  }
  py::list tasks;
  for (const autotune::TaskSummary& task : report.tasks) {
    py::dict dict;
    dict["name"] = task.name;
    dict["workload_key"] = task.workload_key;
    dict["weight"] = task.weight;
    dict["trials"] = task.trials;
    dict["default_us"] = task.default_us;
    dict["best_us"] = task.best_us;
    dict["finalists"] = task.finalists;
    dict["flops"] = task.flops;
    tasks.append(dict);
  }
  return tasks;
}

}  // namespace

void bind_tune(py::module_& m) {
  m.def("tune", &tune, py::arg("graph"), py::arg("records"), py::arg("target"),
        py::arg("options"), py::arg("on_round"),
        "Tunes the graph's kernels, appending every measurement to the records file");
}

}  // namespace minic::python
