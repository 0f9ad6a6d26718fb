// What the graph-level subcommands (opt, viz, and run and bench for .mgraph files) read: an ONNX model or a .mgraph file, and
// a list of passes. Course module 2.
//
// Chapter: docs/module2-graph-passes.md#7-seeing-it
#pragma once

#include "minic/frontend/onnx.h"
#include "minic/ir/graph/graph.h"

#include <string>
#include <vector>

namespace minic::cli {

// An ONNX model (imported; `input_shapes` are --input-shape arguments) or, for a path
// ending in .mgraph, a graph in the text form: parsed, its types inferred, verified. A
// .mgraph that does not name its opset gets the newest minic supports.
Graph read_graph_file(const std::string& path, const std::vector<std::string>& input_shapes);

// Throws an Error naming `path`, a .mgraph file, when --input-shape arguments are given:
// the text form writes every input's shape, so there is nothing for them to bind.
void check_no_input_shapes_for_graph_text(const std::string& path,
                                          const std::vector<std::string>& input_shapes);

// A .mgraph file's counterpart of an ONNX model's graph inputs (OnnxModelSummary::inputs):
// what --input files bind to in `minic run` and `minic bench`.
std::vector<OnnxValueInfo> graph_input_infos(const Graph& graph);

// The passes named by a --passes argument: "default" (the default pipeline), "none" or
// empty (no passes), or a comma-separated list of names.
std::vector<std::string> parse_pass_list(const std::string& passes);

}  // namespace minic::cli
