// The graph IR from Python: load a model, read it, run graph passes on it, interpret it.
// Course module 8 (the API) over modules 1 and 2 (what it calls).
//
//   graph = _minic.load_onnx("model.onnx", {"x": [1, 3, 224, 224]})
//   graph.inputs()                  # [("x", "f32", [1, 3, 224, 224])]
//   graph.run_passes(["fold-constants", "fuse-elementwise"], "llvm")
//   print(graph.text())             # the graph IR's text form
//   graph.interpret([x])            # the reference interpreter's outputs
//
// Chapter: docs/module8-deployment.md#5-minic-from-python
#include "arrays.h"
#include "bindings.h"

#include "minic/driver/target.h"
#include "minic/frontend/onnx.h"
#include "minic/ir/graph/text.h"
#include "minic/ir/graph/verifier.h"
#include "minic/ops/op.h"
#include "minic/ops/shape_inference.h"
#include "minic/passes/pass_manager.h"
#include "minic/passes/pipeline.h"
#include "minic/passes/pass_registry.h"
#include "minic/runtime/interpreter.h"

#include <pybind11/stl.h>

#include <map>
#include <tuple>

namespace minic::python {
namespace {

using ValueInfo = std::tuple<std::string, std::string, std::vector<int64_t>>;

std::vector<ValueInfo> value_infos(const std::vector<Value*>& values) {
  std::vector<ValueInfo> infos;
  for (const Value* value : values) {
    infos.emplace_back(value->name(), std::string(dtype_name(value->type.dtype)),
                       value->type.shape);
  }
  return infos;
}

// How often each op is used, looking inside fused nodes' bodies (as `minic inspect` counts;
// the library has no such function because exercise m2-count-ops writes one).
void count_ops(const Graph& graph, std::map<std::string, int>& counts) {
  for (const Node* node : graph.nodes()) {
    if (node->is_fused()) {
      count_ops(*node->body, counts);
    } else {
      ++counts[node->op];
    }
  }
}

Graph load_onnx(const std::string& path, const std::map<std::string, Shape>& input_shapes) {
  OnnxImportOptions options;
  options.input_shapes = input_shapes;
  return import_onnx(path, options);
}

// A graph in the text form, typed and verified as `minic opt` reads a .mgraph file.
Graph parse_graph_text(const std::string& text, const std::string& source) {
  Graph graph = parse_graph(text, source);
  if (graph.opset == 0) graph.opset = kMaxOpset;
  infer_shapes(graph);
  verify_graph(graph);
  return graph;
}

std::vector<std::tuple<std::string, std::string>> registered_passes(const std::string& kind) {
  if (kind != "graph" && kind != "loop") fail("pass kind '{}': graph or loop", kind);
  std::vector<std::tuple<std::string, std::string>> passes;
  for (const PassInfo* info :
       PassRegistry::all(kind == "graph" ? PassKind::graph : PassKind::loop)) {
    passes.emplace_back(info->name, info->summary);
  }
  return passes;
}

}  // namespace

void bind_graph(py::module_& m) {
  py::class_<Graph>(m, "Graph", "A model in minic's graph IR (include/minic/ir/graph/graph.h)")
      .def("inputs", [](const Graph& g) { return value_infos(g.inputs()); },
           "The graph inputs: (name, element type, shape) each")
      .def("outputs", [](const Graph& g) { return value_infos(g.outputs()); },
           "The graph outputs: (name, element type, shape) each")
      .def("text", [](const Graph& g) { return print_graph(g); }, "The graph IR's text form")
      .def("op_counts",
           [](const Graph& g) {
             std::map<std::string, int> counts;
             count_ops(g, counts);
             return counts;
           },
           "How often each op is used, fused nodes' bodies included")
      .def("num_nodes", [](const Graph& g) { return g.num_nodes(); },
           "Nodes at the top level: after fusion, the kernels a compiled model launches")
      .def("opset", [](const Graph& g) { return g.opset; })
      .def("clone", [](const Graph& g) { return std::move(*g.clone()); }, "A copy")
      .def("run_passes",
           [](Graph& g, const std::vector<std::string>& passes, const std::string& target) {
             run_passes(g, passes, parse_target(target));
           },
           py::arg("passes"), py::arg("target") = "llvm",
           "Runs graph passes by name, in place")
      .def("interpret",
           [](const Graph& g, const std::vector<py::buffer>& arrays) {
             std::vector<Tensor> inputs = InputArrays(arrays, g.inputs()).tensors();
             std::vector<Tensor> outputs;
             {
               py::gil_scoped_release release;
               outputs = interpret(g, inputs);
             }
             return to_arrays(std::move(outputs));
           },
           py::arg("inputs"), "The reference interpreter's outputs on one array per input")
      .def("export_onnx", [](const Graph& g, const std::string& path) { export_onnx(g, path); },
           py::arg("path"), "Writes the graph as an ONNX model");

  m.def("load_onnx", &load_onnx, py::arg("path"),
        py::arg("input_shapes") = std::map<std::string, Shape>{},
        "Imports an ONNX model; input_shapes sizes its symbolic input dimensions");
  m.def("parse_graph", &parse_graph_text, py::arg("text"), py::arg("source") = "<text>",
        "A graph from its text form, typed and verified");
  m.def("passes", &registered_passes, py::arg("kind"),
        "The registered passes of a kind ('graph' or 'loop'): (name, summary) each");
  m.def("default_pipeline", [] { return default_pipeline(); },
        "The graph passes compile runs by default");
  m.def("default_loop_pipeline", [] { return loop::default_loop_pipeline(); },
        "The loop passes compile runs on every kernel by default");
}

}  // namespace minic::python
