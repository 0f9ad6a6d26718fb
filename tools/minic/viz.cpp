// `minic viz MODEL [--stage onnx|optimized] [--passes a,b] -o FILE.dot|FILE.svg`: draws
// the graph IR with Graphviz. Course module 2.
//
// Reads an ONNX model (imported as `minic run` and `minic opt` import it) or a graph in the
// text form, optionally runs graph passes, and writes the drawing of graph_to_dot
// (include/minic/ir/graph/dot.h):
//   --stage onnx       the graph as imported (the default without --passes);
//   --stage optimized  after the default pipeline (src/passes/pipeline.cpp), so fusion
//                      groups show as clusters;
//   --passes a,b       after exactly these passes (implies the optimized stage).
// `-o FILE.dot` writes the DOT text, `-o -` prints it; `-o FILE.svg` pipes it through
// Graphviz's `dot -Tsvg`, which must be on PATH.
//
// Chapter: docs/module2-graph-passes.md#7-seeing-it
#include "commands.h"
#include "common_options.h"
#include "graph_input.h"
#include "run_inputs.h"

#include "minic/ir/graph/dot.h"
#include "minic/passes/pass_manager.h"
#include "minic/support/file.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace minic::cli {
namespace {

struct VizOptions {
  std::string input;
  CommonOptions common;                   // --input-shape; --passes: empty, the stage decides
  std::string stage;                      // "onnx", "optimized", or "" (chosen by --passes)
  std::string output;
};

// The passes the options ask for, in order.
std::vector<std::string> passes_to_run(const VizOptions& options) {
  if (!options.common.passes.empty()) {
    if (options.stage == "onnx") {
      fail("--passes runs passes, so it cannot be combined with --stage onnx");
    }
    return parse_pass_list(options.common.passes);
  }
  if (options.stage.empty() || options.stage == "onnx") return {};
  if (options.stage == "optimized") return default_pipeline();
  fail("--stage takes 'onnx' or 'optimized', not '{}'", options.stage);
}

// True if an executable named `program` is in one of PATH's directories.
bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::stringstream directories(path);
  for (std::string directory; std::getline(directories, directory, ':');) {
    if (directory.empty()) directory = ".";
    std::string candidate = (std::filesystem::path(directory) / program).string();
    if (access(candidate.c_str(), X_OK) == 0) return true;
  }
  return false;
}

// `text` inside single quotes for the shell: each ' becomes '\''.
std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

void write_svg(const std::string& dot_text, const std::string& path) {
  if (!on_path("dot")) {
    fail("{}: drawing SVG needs Graphviz's 'dot' program, which is not on PATH (install "
         "graphviz, e.g. apt-get install graphviz), or write the DOT text with -o FILE.dot",
         path);
  }
  std::string command = "dot -Tsvg -o " + shell_quote(path);
  FILE* pipe = popen(command.c_str(), "w");
  if (!pipe) fail("{}: cannot start '{}'", path, command);
  size_t written = std::fwrite(dot_text.data(), 1, dot_text.size(), pipe);
  int status = pclose(pipe);
  if (written != dot_text.size() || status != 0) {
    fail("{}: '{}' failed (exit status {})", path, command,
         WIFEXITED(status) ? WEXITSTATUS(status) : status);
  }
}

int run_viz(const VizOptions& options) {
  if (options.input.empty()) fail("viz needs a MODEL.onnx or FILE.mgraph");
  const bool svg = options.output.ends_with(".svg");
  if (!svg && !options.output.ends_with(".dot") && options.output != "-") {
    fail("-o '{}': the drawing is written as FILE.dot (DOT text), FILE.svg (through "
         "Graphviz) or - (DOT text on stdout)",
         options.output);
  }
  std::vector<std::string> passes = passes_to_run(options);
  Graph graph = read_graph_file(options.input, options.common.input_shapes);
  run_passes(graph, passes, options.common.parsed_target());

  std::string dot_text = graph_to_dot(graph);
  if (options.output == "-") {
    fmt::print("{}", dot_text);
  } else if (svg) {
    write_svg(dot_text, options.output);
  } else {
    write_file(options.output, dot_text);
  }
  return 0;
}

}  // namespace

Command add_viz_command(CLI::App& app) {
  auto options = std::make_shared<VizOptions>();
  CLI::App* sub = app.add_subcommand(
      "viz", "Draw the graph IR of an ONNX model or a .mgraph file with Graphviz");
  sub->add_option("input", options->input, "MODEL.onnx or FILE.mgraph");
  options->common.passes = "";  // the stage decides
  add_common_options(sub, options->common, {CommonOption::input_shape, CommonOption::passes});
  sub->add_option("--stage", options->stage,
                  "'onnx' (as imported, the default) or 'optimized' (after the default "
                  "pipeline)");
  sub->add_option("-o,--output", options->output,
                  "FILE.dot (DOT text), FILE.svg (runs Graphviz's dot) or - (DOT on stdout)")
      ->required();
  return {sub, [options] { return run_viz(*options); }};
}

}  // namespace minic::cli
