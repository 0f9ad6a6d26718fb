// The native module minic._minic (python/src/bindings.h). Course module 8.
//
// minic's errors (minic::Error and its kinds: a bad model, a bad trace, an internal error)
// arrive in Python as minic.Error, a RuntimeError, with minic's message unchanged.
//
// Chapter: docs/module8-deployment.md#5-minic-from-python
#include "arrays.h"
#include "bindings.h"

#include "minic/support/error.h"

PYBIND11_MODULE(_minic, m) {
  namespace py = pybind11;
  m.doc() = "minic's C++ API for the minic package (use `import minic`, not this module)";
  static py::exception<minic::Error> error(m, "Error", PyExc_RuntimeError);
  error.attr("__module__") = "minic";  // shown as minic.Error
  py::register_exception_translator([](std::exception_ptr raised) {
    try {
      if (raised) std::rethrow_exception(raised);
    } catch (const minic::Error& e) {
      error(e.what());
    }
  });
  minic::python::bind_arrays(m);
  minic::python::bind_graph(m);
  minic::python::bind_compiled(m);
  minic::python::bind_schedule(m);
  minic::python::bind_tune(m);
  minic::python::bind_custom_op(m);
}
