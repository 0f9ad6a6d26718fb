// Compiling and running a model from Python. Course module 8 (the API) over module 1 (the
// driver, include/minic/driver/compile.h, which it calls as `minic run` does).
//
//   model = _minic.compile(graph, "llvm", passes, True, loop_passes, "", 0, False, [])
//   outputs = model.run([x])                       # numpy arrays in, numpy arrays out
//   outputs, steps = model.run_profiled([x])       # and each kernel's time
//   model.bench([x], 2, 10)                        # minic bench's statistics
//
// The GIL is released while minic compiles and runs: other Python threads go on, and a
// model's own thread pool never waits for Python.
//
// Chapter: docs/module8-deployment.md#5-minic-from-python
#include "arrays.h"
#include "bindings.h"

#include "minic/backends/backend.h"
#include "minic/driver/compile.h"
#include "minic/driver/target.h"
#include "minic/ir/loop/printer.h"
#include "minic/runtime/latency.h"

#include <pybind11/stl.h>

#include <chrono>
#include <memory>
#include <optional>

namespace minic::python {
namespace {

std::unique_ptr<CompiledModel> compile(const Graph& graph, const std::string& target,
                                       const std::optional<std::vector<std::string>>& passes,
                                       bool schedule,
                                       const std::optional<std::vector<std::string>>& loop_passes,
                                       const std::string& records, int threads, bool emulate,
                                       const std::vector<std::string>& backends) {
  CompileOptions options;
  options.target = parse_target(target);
  if (passes) options.graph_passes = *passes;
  if (loop_passes) options.loop_passes = *loop_passes;
  options.schedule = schedule;
  options.records = records;
  options.threads = threads;
  options.emulate = emulate;
  options.backends = backends;
  if (threads < 0) fail("threads {}: must be 0 (every core) or more", threads);
  std::unique_ptr<Graph> copy = graph.clone();  // compile_model takes the graph it compiles
  py::gil_scoped_release release;
  return compile_model(std::move(*copy), options);
}

std::vector<Tensor> run(CompiledModel& model, const std::vector<py::buffer>& arrays,
                        std::vector<runtime::StepProfile>* profile) {
  InputArrays inputs(arrays, model.graph().inputs());
  py::gil_scoped_release release;
  return model.run_views(inputs.views(), profile);
}

py::dict stats_dict(const CompiledModel& model) {
  const CompileStats& stats = model.stats();
  py::dict dict;
  dict["kernels"] = stats.kernels;
  dict["compiled_kernels"] = stats.compiled_kernels;
  dict["functions"] = stats.functions;
  dict["compile_ms"] = stats.compile_ms;
  dict["codegen_ms"] = stats.codegen_ms;
  dict["reference_ops"] = stats.reference_ops;
  dict["records"] = stats.records;
  dict["tuned_kernels"] = stats.tuned_kernels;
  dict["failed_records"] = stats.failed_records;
  dict["backend_kernels"] = stats.backend_kernels;
  dict["arena_bytes"] = model.plan().memory.arena_bytes;
  dict["unshared_bytes"] = model.plan().memory.unshared_bytes;
  return dict;
}

py::list profile_list(const std::vector<runtime::StepProfile>& profile) {
  py::list steps;
  for (const runtime::StepProfile& step : profile) {
    py::dict dict;
    dict["kernel"] = step.kernel;
    dict["op"] = step.op;
    dict["compiled"] = step.compiled;
    dict["ms"] = step.milliseconds;
    dict["backend"] = step.backend;
    steps.append(dict);
  }
  return steps;
}

// `warmup` untimed runs and `repeat` timed ones on the same inputs (minic bench's protocol,
// include/minic/runtime/latency.h); the inputs cross from numpy once, before the first.
py::dict bench(CompiledModel& model, const std::vector<py::buffer>& arrays, int warmup,
               int repeat) {
  if (warmup < 0) fail("warmup {}: must be 0 or more", warmup);
  if (repeat < 1) fail("repeat {}: must be 1 or more", repeat);
  InputArrays inputs(arrays, model.graph().inputs());
  std::vector<double> samples;
  {
    py::gil_scoped_release release;
    samples = runtime::time_runs([&] { model.run_views(inputs.views()); }, warmup, repeat);
  }
  runtime::LatencyStats stats = runtime::summarize_latencies(samples);
  py::dict dict;
  dict["median_ms"] = stats.median;
  dict["mean_ms"] = stats.mean;
  dict["min_ms"] = stats.min;
  dict["max_ms"] = stats.max;
  dict["p90_ms"] = stats.p90;
  dict["p99_ms"] = stats.p99;
  dict["peak_rss_mb"] = runtime::peak_rss_mb();
  dict["samples_ms"] = samples;
  return dict;
}

std::vector<std::tuple<std::string, std::string>> kernel_texts(const CompiledModel& model) {
  std::vector<std::tuple<std::string, std::string>> kernels;
  for (const loop::PrimFunc& func : model.kernels().functions) {
    kernels.emplace_back(func.name, loop::print_func(func));
  }
  return kernels;
}

}  // namespace

void bind_compiled(py::module_& m) {
  py::class_<CompiledModel>(m, "CompiledModel",
                            "A model compiled by minic (include/minic/driver/compile.h)")
      .def("graph", [](const CompiledModel& c) { return c.graph().clone(); },
           "The graph after the graph passes (a copy)")
      .def("run", [](CompiledModel& c, const std::vector<py::buffer>& arrays) {
             return to_arrays(run(c, arrays, nullptr));
           },
           py::arg("inputs"), "The outputs on one array per input")
      .def("run_profiled",
           [](CompiledModel& c, const std::vector<py::buffer>& arrays) {
             std::vector<runtime::StepProfile> profile;
             std::vector<Tensor> outputs = run(c, arrays, &profile);
             return py::make_tuple(to_arrays(std::move(outputs)), profile_list(profile));
           },
           py::arg("inputs"), "The outputs, and each step's kernel, op and milliseconds")
      .def("bench", &bench, py::arg("inputs"), py::arg("warmup"), py::arg("repeat"),
           "minic bench's statistics of `repeat` runs after `warmup` untimed ones")
      .def("stats", &stats_dict, "How the compile went (CompileStats, and the memory plan)")
      .def("backend_reports", &CompiledModel::backend_reports,
           "What each external back end's runs have cost so far")
      .def("target", [](const CompiledModel& c) { return c.target().str(); })
      .def("kernels", &kernel_texts, "Every compiled kernel's loop IR: (name, text) each")
      .def("loop_ir", [](const CompiledModel& c) { return loop::print_module(c.kernels()); },
           "The loop IR of every compiled kernel, scheduled")
      .def("llvm_ir",
           [](const CompiledModel& c) { return c.code().llvm_ir(); },
           "The LLVM IR of a model compiled for a CPU")
      .def("assembly", [](const CompiledModel& c) { return c.code().assembly(); },
           "The machine code of a model compiled for a CPU, as assembly")
      .def("cuda_source",
           [](const CompiledModel& c) -> std::string {
             if (!c.cuda()) {
               fail("the model was compiled for {}, not a CUDA target", c.target().str());
             }
             return c.cuda()->module.source;
           },
           "The CUDA C of a model compiled for a CUDA target");
  m.def("compile", &compile, py::arg("graph"), py::arg("target"), py::arg("passes"),
        py::arg("schedule"), py::arg("loop_passes"), py::arg("records"), py::arg("threads"),
        py::arg("emulate"), py::arg("backends"),
        "Compiles a graph (a copy of it) for a target");
  m.def("backends",
        [] {
          std::vector<std::tuple<std::string, std::string>> infos;
          for (const BackendInfo* info : BackendRegistry::all()) {
            infos.emplace_back(info->name, info->summary);
          }
          return infos;
        },
        "The registered external back ends: (name, summary) each");
}

}  // namespace minic::python
