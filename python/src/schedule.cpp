// Loop IR and schedules from Python. Course module 8 (the API) over modules 3 and 4.
//
//   sch = _minic.Schedule(func_text)             # a kernel's loop IR function
//   b, = sch.apply("get_block", ["C"])           # trace variables come back as names
//   i, j, k = sch.apply("get_loops", [_minic.TraceVar(b)])
//   sch.apply("split", [_minic.TraceVar(i), [-1, 32]])
//   print(sch.func()); print(sch.trace())
//
// Every primitive goes through Schedule::apply, as a replayed trace line does, so a
// primitive registered with MINIC_REGISTER_PRIMITIVE (an exercise's, say) is callable from
// Python as soon as it is linked in.
//
// Chapter: docs/module8-deployment.md#5-minic-from-python
#include "arrays.h"
#include "bindings.h"

#include "minic/autotune/measure.h"
#include "minic/autotune/task.h"
#include "minic/driver/target.h"
#include "minic/ir/loop/interpreter.h"
#include "minic/ir/loop/parser.h"
#include "minic/ir/loop/printer.h"
#include "minic/passes/pass_manager.h"
#include "minic/schedule/primitive_registry.h"
#include "minic/schedule/rules.h"
#include "minic/schedule/schedule.h"

#include <pybind11/stl.h>

namespace minic::python {
namespace {

// The one function of `text`, or the one named `name`.
loop::PrimFunc parse_function(const std::string& text, const std::string& name) {
  loop::LoopModule module = loop::parse_loop_module(text, "<loop IR>");
  return std::move(loop::select_function(module, name, "the loop IR"));
}

// A Python argument of a primitive as a trace argument: a TraceVar, an int, a list of ints
// or a string.
schedule::TraceArg trace_arg(const py::handle& arg) {
  if (py::isinstance<schedule::TraceVar>(arg)) return arg.cast<schedule::TraceVar>();
  if (py::isinstance<py::bool_>(arg)) fail("a primitive takes no bool argument");
  if (py::isinstance<py::int_>(arg)) return arg.cast<int64_t>();
  if (py::isinstance<py::str>(arg)) return arg.cast<std::string>();
  if (py::isinstance<py::list>(arg) || py::isinstance<py::tuple>(arg)) {
    return arg.cast<std::vector<int64_t>>();
  }
  fail("a primitive's argument is a block or loop, an int, a list of ints or a string, not "
       "{}",
       py::str(py::type::of(arg)).cast<std::string>());
}

std::vector<std::string> apply(schedule::Schedule& sch, const std::string& primitive,
                               const py::list& args) {
  schedule::Instruction instruction{primitive, {}, {}};
  for (const py::handle& arg : args) instruction.args.push_back(trace_arg(arg));
  return sch.apply(std::move(instruction));
}

// The function run on the loop interpreter with one array per parameter; returns every
// parameter after the run (the outputs written, the inputs as they were).
py::list run_loop(const std::string& text, const std::vector<py::buffer>& arrays) {
  loop::PrimFunc func = parse_function(text, "");
  if (arrays.size() != func.params.size()) {
    fail("@{} takes {} parameters, given {}", func.name, func.params.size(), arrays.size());
  }
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const loop::Buffer& param = func.params[i];
    tensors.push_back(to_tensor(arrays[i], {param->dtype, param->shape},
                                fmt::format("parameter '{}'", param->name)));
  }
  std::vector<Tensor*> args;
  for (Tensor& tensor : tensors) args.push_back(&tensor);
  {
    py::gil_scoped_release release;
    loop::run_func(func, args);
  }
  return to_arrays(std::move(tensors));
}

// The median microseconds of one call of each function, compiled for `target` (a CPU of
// this machine) and timed as the autotuner times candidates (autotune::measure).
std::vector<double> time_functions(const std::vector<std::string>& texts,
                                   const std::string& target, int threads) {
  std::vector<loop::PrimFunc> funcs;
  for (const std::string& text : texts) funcs.push_back(parse_function(text, ""));
  autotune::MeasureOptions options;
  options.threads = threads;
  const Target parsed = parse_target(target);
  std::vector<autotune::MeasureResult> results;
  {
    py::gil_scoped_release release;
    results = autotune::measure(funcs, parsed, options);
  }
  std::vector<double> medians;
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].ok) fail("@{}: {}", funcs[i].name, results[i].error);
    medians.push_back(results[i].median_us);
  }
  return medians;
}

}  // namespace

void bind_schedule(py::module_& m) {
  py::class_<schedule::TraceVar>(m, "TraceVar", "A block or loop of a schedule, by name")
      .def(py::init([](std::string name) { return schedule::TraceVar{std::move(name)}; }))
      .def_readonly("name", &schedule::TraceVar::name);

  py::class_<schedule::Schedule>(m, "Schedule",
                                 "A schedule of one loop IR function (schedule/schedule.h)")
      .def(py::init([](const std::string& text, const std::string& name) {
             return schedule::Schedule(parse_function(text, name));
           }),
           py::arg("text"), py::arg("name") = "")
      .def("func", [](const schedule::Schedule& s) { return loop::print_func(s.func()); },
           "The function as scheduled so far, as loop IR")
      .def("trace", [](const schedule::Schedule& s) { return schedule::print_trace(s.trace()); },
           "The primitives applied so far, as a trace")
      .def("apply", &apply, py::arg("primitive"), py::arg("args"),
           "Applies one primitive; returns the names of the blocks or loops it made")
      .def("replay",
           [](schedule::Schedule& s, const std::string& text) {
             s.replay(schedule::parse_trace(text));
           },
           py::arg("trace"), "Applies every line of a trace's text");

  m.def("primitive_usage",
        [](const std::string& name) -> std::optional<std::string> {
          const schedule::PrimitiveEntry* entry = schedule::find_primitive(name);
          if (!entry) return std::nullopt;
          return entry->usage;
        },
        py::arg("name"), "How a primitive is called (None for an unknown name)");
  m.def("default_trace",
        [](const std::string& text, const std::string& target) {
          return schedule::print_trace(
              schedule::default_trace(parse_function(text, ""), parse_target(target)));
        },
        py::arg("text"), py::arg("target"), "The default schedule of a function, as a trace");
  m.def("run_loop_passes",
        [](const std::string& text, const std::vector<std::string>& passes) {
          loop::LoopModule module = loop::parse_loop_module(text, "<loop IR>");
          run_passes(module, passes);
          return loop::print_module(module);
        },
        py::arg("text"), py::arg("passes"), "Loop passes by name on every function of the text");
  m.def("run_loop", &run_loop, py::arg("text"), py::arg("arrays"),
        "Runs a function on the loop interpreter; returns its parameters after the run");
  m.def("time_functions", &time_functions, py::arg("texts"), py::arg("target"),
        py::arg("threads"), "The median microseconds of a call of each function, compiled");
  m.def("loop_params",
        [](const std::string& text) {
          std::vector<std::tuple<std::string, std::string, std::vector<int64_t>>> params;
          for (const loop::Buffer& param : parse_function(text, "").params) {
            params.emplace_back(param->name, std::string(dtype_name(param->dtype)),
                                param->shape);
          }
          return params;
        },
        py::arg("text"), "A function's parameters: (name, element type, shape) each");
  m.def("count_flops", [](const std::string& text) {
          return autotune::count_flops(parse_function(text, ""));
        },
        py::arg("text"), "The floating-point operations of one call of the function");
}

}  // namespace minic::python
