// The native module minic._minic: what each file of python/src/ adds to it. Course module 8.
//
// The bindings are thin: each function takes Python values, calls the C++ API of
// include/minic/ (the same calls the CLI makes), and returns Python values. What makes the
// API pleasant to use from Python (names instead of positions, dataclasses, a progress
// bar) is Python, in python/minic/.
//
// Chapter: docs/module8-deployment.md#5-minic-from-python
#pragma once

#include <pybind11/pybind11.h>

namespace minic::python {

namespace py = pybind11;

void bind_graph(py::module_& m);      // graph.cpp: load, parse, passes, the interpreter
void bind_compiled(py::module_& m);   // compiled.cpp: compile, run, profile, bench
void bind_schedule(py::module_& m);   // schedule.cpp: loop IR, schedules, traces
void bind_tune(py::module_& m);       // tune.cpp: the autotuner
void bind_custom_op(py::module_& m);  // custom_op.cpp: custom ops from Python, plugins

}  // namespace minic::python
