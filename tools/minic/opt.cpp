// `minic opt MODEL.onnx|FILE.mgraph [-o OUT.mgraph]`: the graph IR as text.
// Course module 2.
//
// Reads an ONNX model (importing it: static shapes, inferred types, verified) or a graph
// in the text form (parsed, shapes re-inferred, verified) and prints the graph's text
// form, which parses back to the same graph. The graph passes that give `opt` its name
// (constant folding, dead-code elimination, fusion) run here once they exist; with none,
// `minic opt` shows what the frontend built, and `minic opt FILE.mgraph` checks that a
// hand-written graph is well formed.
#include "commands.h"
#include "run_inputs.h"

#include "minic/frontend/onnx.h"
#include "minic/ir/graph_text.h"
#include "minic/ir/verifier.h"
#include "minic/ops/shape_inference.h"
#include "minic/support/file.h"

#include <fmt/format.h>

#include <fstream>
#include <memory>

namespace minic::cli {
namespace {

struct OptOptions {
  std::string input;
  std::vector<std::string> input_shapes;  // "NAME=1x3x224x224"
  std::string output;
  bool elide_constants = false;
};

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Graph read_graph_text(const std::string& path) {
  Graph graph = parse_graph(read_file(path), path);
  // A hand-written graph that does not name its opset means the ops as they are now.
  if (graph.opset == 0) graph.opset = kMaxOpset;
  try {
    infer_shapes(graph);
    verify_graph(graph);
  } catch (const Error& error) {
    fail("{}: {}", path, error.what());
  }
  return graph;
}

Graph read_graph(const OptOptions& options) {
  if (ends_with(options.input, ".mgraph")) return read_graph_text(options.input);
  OnnxImportOptions import_options;
  OnnxModelSummary summary = summarize_onnx(options.input);
  import_options.input_shapes = parse_input_shapes(options.input_shapes, summary.inputs);
  return import_onnx(options.input, import_options);
}

int run_opt(const OptOptions& options) {
  Graph graph = read_graph(options);
  GraphPrintOptions print_options;
  print_options.elide_large_constants = options.elide_constants;
  std::string text = print_graph(graph, print_options);
  if (options.output.empty() || options.output == "-") {
    fmt::print("{}", text);
    return 0;
  }
  std::ofstream stream(options.output, std::ios::binary | std::ios::trunc);
  stream << text;
  stream.close();
  if (!stream) fail("{}: cannot write the file", options.output);
  return 0;
}

}  // namespace

Command add_opt_command(CLI::App& app) {
  auto options = std::make_shared<OptOptions>();
  CLI::App* sub = app.add_subcommand(
      "opt", "Read an ONNX model or a .mgraph file and print the graph IR as text");
  sub->add_option("input", options->input, "MODEL.onnx or FILE.mgraph")->required();
  sub->add_option("--input-shape", options->input_shapes,
                  "Size of an input with symbolic dimensions: NAME=1x3x224x224");
  sub->add_option("-o,--output", options->output, "Write the text here instead of stdout");
  sub->add_flag("--elide-constants", options->elide_constants,
                "Summarise large constants (the text then does not parse back)");
  return {sub, [options] { return run_opt(*options); }};
}

}  // namespace minic::cli
