// Custom operators from Python: ops whose shape rule, reference kernel and (optionally)
// compute rule are Python functions, and plugins loaded into the process. Course module 8
// (the API) over include/minic/ops/custom_op.h.
//
//   _minic.register_op("com.example.Swish", 1, 1, 1, shape, kernel, compute)
//     shape(types, attrs)    -> [(dtype, shape), ...]   None: the type of input 0
//     kernel(arrays, attrs)  -> [array, ...]            the reference kernel (numpy)
//     compute(exprs, attrs)  -> Expr                    None: no compute rule
//
// compute gets one Expr per input present, the element each reads for one output element
// (numpy's broadcasting: an input of fewer dimensions, or of size 1 along one, reads the
// same element along it), and returns the output's element as an Expr, built with Python's
// arithmetic operators and the functions of minic.expr (python/minic/custom_op.py). Such an
// op is elementwise: operator fusion groups it with its neighbours, and it compiles like a
// built-in op.
//
// minic calls the Python functions while it imports, interprets, lowers and runs, which it
// may do with the GIL released (compile, run) or on a thread of its pool: each call takes
// the GIL first. A Python exception becomes an Error naming the node and the function. The
// functions are kept for the life of the process (the op registry is global), so their
// handles are never released: releasing them when the program exits would call into
// Python after it has finished.
//
// Chapter: docs/module8-deployment.md#6-custom-operators
#include "arrays.h"
#include "bindings.h"

#include "minic/ir/loop/printer.h"
#include "minic/ops/compute.h"
#include "minic/ops/custom_op.h"

#include <pybind11/stl.h>

#include <dlfcn.h>

namespace minic::python {
namespace {

py::object attribute_value(const AttributeValue& value) {
  return std::visit(
      [](const auto& v) -> py::object {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Tensor>) {
          return to_array(v);
        } else if constexpr (std::is_same_v<T, GraphAttribute>) {
          return py::none();  // a body is no value a Python function could use
        } else {
          return py::cast(v);
        }
      },
      value);
}

py::dict attributes(const NodeContext& ctx) {
  py::dict dict;
  for (const auto& [name, value] : ctx.node().attributes) {
    dict[name.c_str()] = attribute_value(value);
  }
  return dict;
}

// Calls `function` with `args`; a Python exception becomes an Error naming the node.
py::object call(const py::function& function, const NodeContext& ctx, const char* role,
                py::object inputs) {
  try {
    return function(inputs, attributes(ctx));
  } catch (py::error_already_set& error) {
    ctx.fail("its Python {} raised {}", role, error.what());
  }
}

std::vector<TensorType> python_shape(const py::function* shape, const ShapeContext& ctx,
                                     int outputs) {
  py::gil_scoped_acquire gil;
  if (!shape) return std::vector<TensorType>(static_cast<size_t>(outputs), ctx.input_type(0));
  py::list types;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) {
      types.append(py::none());
      continue;
    }
    const TensorType& type = ctx.input_type(i);
    types.append(py::make_tuple(std::string(dtype_name(type.dtype)), type.shape));
  }
  py::object result = call(*shape, ctx, "shape rule", types);
  std::vector<TensorType> out;
  try {
    for (const py::handle& entry : result) {
      auto [dtype, dims] = entry.cast<std::pair<std::string, Shape>>();
      std::optional<DType> parsed = dtype_from_name(dtype);
      if (!parsed) ctx.fail("its shape rule gave element type '{}'", dtype);
      out.push_back({*parsed, dims});
    }
  } catch (const py::cast_error&) {
    ctx.fail("its shape rule must return a list of (element type, shape) pairs");
  }
  if (out.size() != ctx.num_outputs()) {
    ctx.fail("its shape rule gave {} types for {} outputs", out.size(), ctx.num_outputs());
  }
  return out;
}

std::vector<Tensor> python_kernel(const py::function& kernel, const KernelContext& ctx) {
  py::gil_scoped_acquire gil;
  py::list arrays;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    arrays.append(ctx.has_input(i) ? to_array(ctx.input(i)) : py::none());
  }
  py::object result = call(kernel, ctx, "kernel", arrays);
  if (ctx.num_outputs() == 1 && !py::isinstance<py::list>(result) &&
      !py::isinstance<py::tuple>(result)) {
    result = py::make_tuple(result);
  }
  py::object asarray = py::module_::import("numpy").attr("ascontiguousarray");
  std::vector<Tensor> outputs;
  for (const py::handle& array : result) {
    const size_t k = outputs.size();
    if (k == ctx.num_outputs()) ctx.fail("its Python kernel gave more than {} outputs", k);
    std::string what = fmt::format("{}: output {} of its Python kernel", ctx.node().describe(), k);
    outputs.push_back(to_tensor(asarray(array), ctx.output_type(k), what));
  }
  if (outputs.size() != ctx.num_outputs()) {
    ctx.fail("its Python kernel gave {} outputs for {}", outputs.size(), ctx.num_outputs());
  }
  return outputs;
}

// The op's one output as an elementwise stage (compute.h's `elementwise`: each input read
// at its broadcast indices, in the output's element type), whose formula is the Python
// function's Expr.
std::vector<ComputeTensor> python_compute(const py::function& compute,
                                          const ComputeContext& ctx) {
  if (ctx.num_outputs() != 1) ctx.no_rule("a Python compute rule gives one output");
  const DType dtype = ctx.output_type(0).dtype;
  return {elementwise(ctx, dtype, [&](const std::vector<loop::Expr>& values) {
    py::gil_scoped_acquire gil;
    py::list elements;
    for (const loop::Expr& value : values) elements.append(py::cast(value));
    py::object result = call(compute, ctx, "compute rule", elements);
    if (!py::isinstance<loop::Expr>(result)) {
      ctx.fail("its Python compute rule must return an Expr (minic.expr), not {}",
               py::str(py::type::of(result)).cast<std::string>());
    }
    loop::Expr element = result.cast<loop::Expr>();
    if (element.type().dtype != dtype) {
      ctx.fail("its Python compute rule gave an element of {} for an output of {}",
               dtype_name(element.type().dtype), dtype_name(dtype));
    }
    return element;
  })};
}

void register_python_op(const std::string& name, int min_inputs, int max_inputs, int outputs,
                        const std::optional<py::function>& shape, const py::function& kernel,
                        const std::optional<py::function>& compute,
                        const std::optional<std::string>& cuda_source,
                        const std::string& cuda_kernel, int cuda_block) {
  OpSchema schema;
  schema.name = name;
  schema.min_inputs = min_inputs;
  schema.max_inputs = max_inputs;
  schema.min_outputs = outputs;
  schema.max_outputs = outputs;
  // Kept for the life of the process (see the top of this file).
  const py::function* shape_fn = shape ? new py::function(*shape) : nullptr;
  const py::function* kernel_fn = new py::function(kernel);
  schema.shape_rule = [shape_fn, outputs](const ShapeContext& ctx) {
    return python_shape(shape_fn, ctx, outputs);
  };
  schema.kernel = [kernel_fn](const KernelContext& ctx) { return python_kernel(*kernel_fn, ctx); };
  if (compute) {
    const py::function* compute_fn = new py::function(*compute);
    schema.compute = [compute_fn](const ComputeContext& ctx) {
      return python_compute(*compute_fn, ctx);
    };
    schema.fusion = max_inputs > 1 ? FusionKind::broadcast : FusionKind::elementwise;
  }
  if (cuda_source) schema.cuda = elementwise_cuda_kernel(*cuda_source, cuda_kernel, cuda_block);
  register_custom_op(std::move(schema));
}

// Expr arithmetic: a Python number beside an Expr becomes a constant of the Expr's type.
loop::Expr operand(const loop::Expr& like, const py::object& value) {
  if (py::isinstance<loop::Expr>(value)) return value.cast<loop::Expr>();
  if (py::isinstance<py::float_>(value) || py::isinstance<py::int_>(value)) {
    return loop::make_const(like.type(), value.cast<double>());
  }
  fail("an Expr combines with an Expr or a number, not {}",
       py::str(py::type::of(value)).cast<std::string>());
}

}  // namespace

void bind_custom_op(py::module_& m) {
  py::class_<loop::Expr>(m, "Expr", "An element as a loop IR expression (compute rules)")
      .def("__repr__", [](const loop::Expr& e) { return loop::print_expr(e); })
      .def_property_readonly("dtype",
                             [](const loop::Expr& e) { return dtype_name(e.type().dtype); })
      .def("__add__", [](const loop::Expr& a, py::object b) { return a + operand(a, b); })
      .def("__radd__", [](const loop::Expr& a, py::object b) { return operand(a, b) + a; })
      .def("__sub__", [](const loop::Expr& a, py::object b) { return a - operand(a, b); })
      .def("__rsub__", [](const loop::Expr& a, py::object b) { return operand(a, b) - a; })
      .def("__mul__", [](const loop::Expr& a, py::object b) { return a * operand(a, b); })
      .def("__rmul__", [](const loop::Expr& a, py::object b) { return operand(a, b) * a; })
      .def("__truediv__",
           [](const loop::Expr& a, py::object b) { return loop::Div::make(a, operand(a, b)); })
      .def("__rtruediv__",
           [](const loop::Expr& a, py::object b) { return loop::Div::make(operand(a, b), a); })
      .def("__neg__", [](const loop::Expr& a) { return loop::make_const(a.type(), 0) - a; })
      .def("__lt__",
           [](const loop::Expr& a, py::object b) { return loop::LT::make(a, operand(a, b)); })
      .def("__le__",
           [](const loop::Expr& a, py::object b) { return loop::LE::make(a, operand(a, b)); })
      .def("__gt__",
           [](const loop::Expr& a, py::object b) { return loop::GT::make(a, operand(a, b)); })
      .def("__ge__",
           [](const loop::Expr& a, py::object b) { return loop::GE::make(a, operand(a, b)); });
  m.def("expr_call", [](const std::string& name, const std::vector<loop::Expr>& args) {
          return minic::call(name, args);
        },
        py::arg("name"), py::arg("args"), "An intrinsic (exp, erf, tanh, ...) applied to Exprs");
  m.def("expr_select", [](const loop::Expr& condition, py::object yes, py::object no) {
          loop::Expr like = py::isinstance<loop::Expr>(yes) ? yes.cast<loop::Expr>()
                                                            : no.cast<loop::Expr>();
          return loop::Select::make(condition, operand(like, yes), operand(like, no));
        },
        "condition ? yes : no, element by element");
  m.def("expr_min", [](const loop::Expr& a, py::object b) { return loop::min(a, operand(a, b)); });
  m.def("expr_max", [](const loop::Expr& a, py::object b) { return loop::max(a, operand(a, b)); });

  m.def("register_op", &register_python_op, py::arg("name"), py::arg("min_inputs"),
        py::arg("max_inputs"), py::arg("outputs"), py::arg("shape"), py::arg("kernel"),
        py::arg("compute"), py::arg("cuda_source"), py::arg("cuda_kernel"),
        py::arg("cuda_block"), "Registers a custom op whose rules are Python functions");
  m.def("load_custom_op_library", &load_custom_op_library, py::arg("path"),
        "Loads a plugin of custom ops (a shared library)");
  m.def("custom_ops", &custom_op_names, "The custom ops registered so far");
  m.def("module_path", [] {
          Dl_info info{};
          dladdr(reinterpret_cast<void*>(&register_python_op), &info);
          return std::string(info.dli_fname ? info.dli_fname : "");
        },
        "The file of this native module (for loading plugins against its symbols)");
}

}  // namespace minic::python
