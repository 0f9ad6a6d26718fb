// The graph the graph-level subcommands work on (graph_input.h): an ONNX model, imported,
// or a .mgraph file, parsed, typed again and verified; and the list of passes to run.
// Course module 2.
//
// Chapter: docs/module2-graph-passes.md#7-seeing-it
#include "graph_input.h"

#include "common_options.h"
#include "run_inputs.h"

#include "minic/frontend/onnx.h"
#include "minic/ir/graph/text.h"
#include "minic/ir/graph/verifier.h"
#include "minic/ops/shape_inference.h"
#include "minic/passes/pass_manager.h"
#include "minic/support/file.h"


namespace minic::cli {

namespace {

Graph read_graph_text(const std::string& path) {
  Graph graph = parse_graph(read_file(path), path);
  if (graph.opset == 0) graph.opset = kMaxOpset;
  try {
    infer_shapes(graph);
    verify_graph(graph);
  } catch (const Error& error) {
    fail("{}: {}", path, error.what());
  }
  return graph;
}

}  // namespace

Graph read_graph_file(const std::string& path, const std::vector<std::string>& input_shapes) {
  if (path.ends_with(".mgraph")) return read_graph_text(path);
  OnnxImportOptions import_options;
  OnnxModelSummary summary = summarize_onnx(path);
  import_options.input_shapes = parse_input_shapes(input_shapes, summary.inputs);
  return import_onnx(path, import_options);
}

void check_no_input_shapes_for_graph_text(const std::string& path,
                                          const std::vector<std::string>& input_shapes) {
  if (input_shapes.empty()) return;
  fail("{}: --input-shape binds an ONNX model's symbolic dimensions; a .mgraph file writes "
       "its inputs' shapes (change them in the file)",
       path);
}

std::vector<OnnxValueInfo> graph_input_infos(const Graph& graph) {
  std::vector<OnnxValueInfo> infos;
  for (const Value* input : graph.inputs()) {
    OnnxValueInfo info;
    info.name = input->name();
    info.dtype = dtype_name(input->type.dtype);
    for (int64_t dim : input->type.shape) info.dims.push_back(std::to_string(dim));
    infos.push_back(std::move(info));
  }
  return infos;
}

std::vector<std::string> parse_pass_list(const std::string& passes) {
  if (passes == "default") return default_pipeline();
  std::vector<std::string> names = comma_list(passes);
  std::erase(names, "none");
  return names;
}

}  // namespace minic::cli
