// What the graph-level subcommands (opt, viz) read: an ONNX model or a .mgraph file, and
// a list of passes. Course module 2.
//
// Chapter: docs/module2-graph-passes.md#7-seeing-it
#pragma once

#include "minic/ir/graph/graph.h"

#include <string>
#include <vector>

namespace minic::cli {

// An ONNX model (imported; `input_shapes` are --input-shape arguments) or, for a path
// ending in .mgraph, a graph in the text form: parsed, its types inferred, verified. A
// .mgraph that does not name its opset gets the newest minic supports.
Graph read_graph_file(const std::string& path, const std::vector<std::string>& input_shapes);

// The passes named by a --passes argument: "default" (the default pipeline), "none" or
// empty (no passes), or a comma-separated list of names.
std::vector<std::string> parse_pass_list(const std::string& passes);

}  // namespace minic::cli
