// minic-conformance: ONNX's backend node tests and the light models, through the
// reference interpreter. Course module 2 (the interpreter is the oracle; this checks the
// oracle against ONNX's own expected outputs).
//
//   minic-conformance node DIR [--filter SUBSTR] [--expected FILE] [--write-expected FILE]
//                              [--verbose] [--passes default|none|a,b,c]
//   minic-conformance light-models DIR [--passes default|none|a,b,c]
//
// A node case is a folder with model.onnx and test_data_set_0/input_K.pb, output_K.pb.
// Its inputs are bound to the model's graph inputs by position, all passed to the importer
// as known inputs (so inputs that decide shapes are frozen into the graph); the inputs
// still in the graph after import are passed to interpret() in graph-input order. Every
// output must match output_K.pb within rtol 1e-3, atol 1e-7, ONNX's own runner's
// tolerances. Each case runs inside its own try block: a broken case is a FAIL line, never
// the end of the run.
//
// With --expected, the run checks a committed list of cases that passed before: a listed
// case that fails is a REGRESSION and the exit status is 1.
//
// With --passes, the graph passes run between import and interpretation (the default
// pipeline, none, or the passes named), so the same expected outputs check the optimised
// graph. For the light models the run also prints how the op histogram changed (nodes
// counted inside fused bodies too) and which of the ops the default pipeline must remove
// -- ConstantOfShape, BatchNormalization, Dropout, Identity -- are left; after
// `--passes default` a model where one is left FAILS, whatever its outputs.
#include "minic/frontend/onnx.h"
#include "minic/passes/pass_manager.h"
#include "minic/runtime/compare.h"
#include "minic/runtime/interpreter.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace fs = std::filesystem;
using namespace minic;

namespace {

constexpr Tolerance kNodeTolerance{1e-3, 1e-7};
constexpr Tolerance kLightModelTolerance{1e-3, 1e-5};

// The ops that exporters leave in inference graphs and that the default pipeline removes:
// folded into constants (ConstantOfShape), into the Conv before them (BatchNormalization),
// or dropped as no-ops at inference (Dropout, Identity).
const std::vector<std::string> kOpsRemovedByDefaultPipeline = {
    "ConstantOfShape", "BatchNormalization", "Dropout", "Identity"};

// What --passes asks for: the passes to run after import, in order.
struct PassSelection {
  std::vector<std::string> passes;
  bool is_default_pipeline = false;
};

// "default" (the default pipeline), "none" (no pass), or "a,b,c". Unknown names are an
// error before any case runs.
PassSelection parse_pass_selection(const std::string& text) {
  PassSelection selection;
  if (text == "default") {
    selection.passes = default_pipeline();
    selection.is_default_pipeline = true;
    return selection;
  }
  if (text == "none" || text.empty()) return selection;
  std::stringstream stream(text);
  for (std::string name; std::getline(stream, name, ',');) {
    if (name.empty()) continue;
    if (!PassRegistry::find(name)) fail("--passes: unknown pass '{}'", name);
    selection.passes.push_back(name);
  }
  return selection;
}

struct CaseResult {
  std::string name;
  bool passed = false;
  std::string reason;     // why it failed
  std::vector<std::string> details;  // one line per output, for --verbose
  double milliseconds = 0;
};

double elapsed_ms(std::chrono::steady_clock::time_point start) {
  auto now = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(now - start).count();
}

// Compares every output with its expected tensor; fills the result's reason on the first
// mismatch and one detail line per output.
void compare_all(const std::vector<Tensor>& outputs, const std::vector<Tensor>& expected,
                 const Tolerance& tolerance, CaseResult& result) {
  if (outputs.size() != expected.size()) {
    fail("the model has {} outputs, the test expects {}", outputs.size(), expected.size());
  }
  result.passed = true;
  for (size_t k = 0; k < outputs.size(); ++k) {
    TensorComparison comparison = compare_tensors(outputs[k], expected[k], tolerance);
    std::string line = fmt::format("output {}: {}", k, describe(comparison));
    result.details.push_back(line);
    if (!comparison.ok() && result.passed) {
      result.passed = false;
      result.reason = line;
    }
  }
}

// The files dir/prefix0.pb, dir/prefix1.pb, ... that exist, in order.
std::vector<fs::path> numbered_files(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int k = 0;; ++k) {
    fs::path file = dir / fmt::format("{}{}.pb", prefix, k);
    if (!fs::exists(file)) return files;
    files.push_back(file);
  }
}

void run_node_case_unguarded(const fs::path& folder, const std::vector<std::string>& passes,
                             CaseResult& result) {
  const std::string model = (folder / "model.onnx").string();
  const fs::path data = folder / "test_data_set_0";
  OnnxModelSummary summary = summarize_onnx(model);

  std::vector<fs::path> input_files = numbered_files(data, "input_");
  if (input_files.size() > summary.inputs.size()) {
    fail("{} input files for {} graph inputs", input_files.size(), summary.inputs.size());
  }
  OnnxImportOptions options;
  for (size_t k = 0; k < input_files.size(); ++k) {
    options.known_inputs[summary.inputs[k].name] = read_tensor_proto(input_files[k].string());
  }
  Graph graph = import_onnx(model, options);
  run_passes(graph, passes);

  std::vector<Tensor> inputs;
  for (const Value* input : graph.inputs()) {
    auto given = options.known_inputs.find(input->name);
    if (given == options.known_inputs.end()) {
      fail("no input file for graph input '{}'", input->name);
    }
    inputs.push_back(given->second);
  }
  std::vector<Tensor> outputs = interpret(graph, inputs);

  std::vector<Tensor> expected;
  for (const fs::path& file : numbered_files(data, "output_")) {
    expected.push_back(read_tensor_proto(file.string()));
  }
  compare_all(outputs, expected, kNodeTolerance, result);
}

// An error message as one line, without the case's folder in front of the file names.
std::string one_line_reason(std::string message, const fs::path& folder) {
  const std::string prefix = folder.string() + "/";
  for (size_t at = message.find(prefix); at != std::string::npos; at = message.find(prefix)) {
    message.erase(at, prefix.size());
  }
  std::string line;
  bool after_newline = false;
  for (char c : message) {
    if (c == '\n') {
      after_newline = true;
    } else if (after_newline && c == ' ') {
      continue;  // the indentation of a continuation line
    } else {
      if (after_newline) line += ' ';
      after_newline = false;
      line += c;
    }
  }
  return line;
}

CaseResult run_node_case(const fs::path& folder, const std::vector<std::string>& passes) {
  CaseResult result;
  result.name = folder.filename().string();
  auto start = std::chrono::steady_clock::now();
  try {
    run_node_case_unguarded(folder, passes, result);
  } catch (const std::exception& e) {  // minic::Error, and anything else a case throws
    result.passed = false;
    result.reason = one_line_reason(e.what(), folder);
  }
  result.milliseconds = elapsed_ms(start);
  return result;
}

// MANIFEST.tsv's "folder" → "op" columns, if DIR has one.
std::map<std::string, std::string> read_manifest(const fs::path& dir) {
  std::map<std::string, std::string> ops;
  std::ifstream file(dir / "MANIFEST.tsv");
  std::string line;
  std::getline(file, line);  // the header
  while (std::getline(file, line)) {
    std::istringstream fields(line);
    std::string folder, op;
    if (std::getline(fields, folder, '\t') && std::getline(fields, op, '\t')) ops[folder] = op;
  }
  return ops;
}

// The op a case tests: from the manifest, else the model's first op by name.
std::string case_op(const std::map<std::string, std::string>& manifest, const fs::path& folder) {
  auto it = manifest.find(folder.filename().string());
  if (it != manifest.end()) return it->second;
  try {
    OnnxModelSummary summary = summarize_onnx((folder / "model.onnx").string());
    if (!summary.op_counts.empty()) return summary.op_counts.begin()->first;
  } catch (const std::exception&) {
    // An unreadable model is reported by the case itself.
  }
  return "?";
}

// Case names, one a line; '#' starts a comment.
std::set<std::string> read_case_list(const std::string& path) {
  std::ifstream file(path);
  if (!file) fail("cannot read the expected-pass list '{}'", path);
  std::set<std::string> names;
  std::string line;
  while (std::getline(file, line)) {
    line = line.substr(0, line.find('#'));
    line.erase(std::remove_if(line.begin(), line.end(),
                              [](unsigned char c) { return std::isspace(c); }),
               line.end());
    if (!line.empty()) names.insert(line);
  }
  return names;
}

void write_case_list(const std::string& path, const std::vector<CaseResult>& results) {
  std::ofstream file(path);
  if (!file) fail("cannot write '{}'", path);
  file << "# ONNX backend node tests that minic's reference interpreter passes\n"
          "# (outputs within rtol 1e-3, atol 1e-7 of ONNX's). ctest's conformance/node fails\n"
          "# if any case listed here fails. Generated by:\n"
          "#   build/tests/onnx/minic-conformance node ../shared/onnx/node \\\n"
          "#       --write-expected tests/onnx/expected_pass.txt\n";
  for (const CaseResult& result : results) {
    if (result.passed) file << result.name << "\n";
  }
}

struct NodeOptions {
  std::string dir;
  std::string filter;
  std::string expected;
  std::string write_expected;
  bool verbose = false;
  std::string passes = "none";
};

int run_node_tests(const NodeOptions& options) {
  if (!options.filter.empty() && !options.write_expected.empty()) {
    fail("--write-expected writes the full list; it cannot be combined with --filter");
  }
  std::vector<fs::path> folders;
  for (const fs::directory_entry& entry : fs::directory_iterator(options.dir)) {
    std::string name = entry.path().filename().string();
    if (!fs::exists(entry.path() / "model.onnx")) continue;
    if (name.find(options.filter) == std::string::npos) continue;
    folders.push_back(entry.path());
  }
  std::sort(folders.begin(), folders.end());
  const PassSelection selection = parse_pass_selection(options.passes);

  const std::map<std::string, std::string> manifest = read_manifest(options.dir);
  std::vector<CaseResult> results;
  std::map<std::string, std::pair<int, int>> by_op;  // op → (passed, total)
  int passed = 0;
  for (const fs::path& folder : folders) {
    if (options.verbose) {
      // Printed first, so that a case that crashes the runner is the last name shown.
      fmt::print("RUN  {}\n", folder.filename().string());
      std::fflush(stdout);
    }
    CaseResult result = run_node_case(folder, selection.passes);
    if (result.passed) {
      fmt::print("PASS {}\n", result.name);
    } else {
      fmt::print("FAIL {}: {}\n", result.name, result.reason);
    }
    if (options.verbose) {
      for (const std::string& line : result.details) fmt::print("    {}\n", line);
      fmt::print("    {:.1f} ms\n", result.milliseconds);
    }
    std::fflush(stdout);
    auto& [op_passed, op_total] = by_op[case_op(manifest, folder)];
    op_passed += result.passed;
    ++op_total;
    passed += result.passed;
    results.push_back(std::move(result));
  }

  fmt::print("\nper op (passed/total):\n");
  for (const auto& [op, counts] : by_op) {
    fmt::print("  {:<28} {}/{}\n", op, counts.first, counts.second);
  }
  fmt::print("\n{} passed, {} failed\n", passed, results.size() - passed);

  if (!options.write_expected.empty()) {
    write_case_list(options.write_expected, results);
    fmt::print("wrote {} passing cases to {}\n", passed, options.write_expected);
  }
  if (options.expected.empty()) return 0;

  const std::set<std::string> expected = read_case_list(options.expected);
  std::set<std::string> ran;
  int regressions = 0;
  std::vector<std::string> newly_passing;
  for (const CaseResult& result : results) {
    ran.insert(result.name);
    if (expected.count(result.name) && !result.passed) {
      fmt::print("REGRESSION {}: {}\n", result.name, result.reason);
      ++regressions;
    }
    if (!expected.count(result.name) && result.passed) newly_passing.push_back(result.name);
  }
  for (const std::string& name : expected) {
    if (ran.count(name) || name.find(options.filter) == std::string::npos) continue;
    fmt::print("REGRESSION {}: listed in {} but not found in {}\n", name, options.expected,
               options.dir);
    ++regressions;
  }
  for (const std::string& name : newly_passing) {
    fmt::print("newly passing (add to expected_pass.txt): {}\n", name);
  }
  fmt::print("{} regressions against {}\n", regressions, options.expected);
  return regressions == 0 ? 0 : 1;
}

// The light models' input: arange(n) / n in float32, as ONNX computed their outputs.
Tensor arange_input(const OnnxValueInfo& input) {
  if (input.dtype != "f32") fail("input '{}' is {}, not f32", input.name, input.dtype);
  Shape shape;
  for (const std::string& dim : input.dims) {
    if (dim.empty() ||
        !std::all_of(dim.begin(), dim.end(), [](unsigned char c) { return std::isdigit(c); })) {
      fail("input '{}' has a symbolic dimension '{}'", input.name, dim);
    }
    shape.push_back(std::stoll(dim));
  }
  Tensor tensor(DType::f32, shape);
  std::span<float> values = tensor.values<float>();
  const double n = static_cast<double>(values.size());
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i / n);
  return tensor;
}

// How many nodes of each op a graph holds, counting the nodes inside fused bodies (a fused
// node itself is not counted: its body's nodes are), and how many fused nodes it has.
struct OpHistogram {
  std::map<std::string, int> ops;
  int fused_groups = 0;

  int num_nodes() const {
    int total = 0;
    for (const auto& [op, count] : ops) total += count;
    return total;
  }
  int count(const std::string& op) const {
    auto it = ops.find(op);
    return it == ops.end() ? 0 : it->second;
  }
};

void add_to_histogram(const Graph& graph, OpHistogram& histogram) {
  for (const Node* node : graph.nodes()) {
    if (node->is_fused()) {
      ++histogram.fused_groups;
      add_to_histogram(*node->body, histogram);
    } else {
      ++histogram.ops[node->op];
    }
  }
}

OpHistogram op_histogram(const Graph& graph) {
  OpHistogram histogram;
  add_to_histogram(graph, histogram);
  return histogram;
}

struct LightModelResult : CaseResult {
  bool ran_passes = false;
  OpHistogram before;  // as imported
  OpHistogram after;   // after the passes
};

// "nodes 105 → 40 (26 fused groups); ConstantOfShape 39 → 0, Dropout 1 → 0": the change
// in size, and each op the default pipeline removes that was there before or after.
std::string histogram_change(const LightModelResult& result) {
  std::string line = fmt::format("nodes {} → {} ({} fused groups)", result.before.num_nodes(),
                                 result.after.num_nodes(), result.after.fused_groups);
  std::vector<std::string> changes;
  for (const std::string& op : kOpsRemovedByDefaultPipeline) {
    int before = result.before.count(op);
    int after = result.after.count(op);
    if (before > 0 || after > 0) changes.push_back(fmt::format("{} {} → {}", op, before, after));
  }
  if (!changes.empty()) line += fmt::format("; {}", fmt::join(changes, ", "));
  return line;
}

// The ops of kOpsRemovedByDefaultPipeline left in the graph ("left after the default
// pipeline: BatchNormalization 53, Identity 2"), or "" if none is left.
std::string remaining_removable_ops(const OpHistogram& histogram) {
  std::vector<std::string> remaining;
  for (const std::string& op : kOpsRemovedByDefaultPipeline) {
    if (int count = histogram.count(op); count > 0) {
      remaining.push_back(fmt::format("{} {}", op, count));
    }
  }
  if (remaining.empty()) return "";
  return fmt::format("left after the default pipeline: {}", fmt::join(remaining, ", "));
}

void run_light_model_unguarded(const fs::path& model, const PassSelection& selection,
                               LightModelResult& result) {
  OnnxModelSummary summary = summarize_onnx(model.string());
  if (summary.inputs.size() != 1) {
    fail("expected one graph input, the model has {}", summary.inputs.size());
  }
  Graph graph = import_onnx(model.string());
  result.before = op_histogram(graph);
  run_passes(graph, selection.passes);
  result.after = op_histogram(graph);
  result.ran_passes = true;

  std::vector<Tensor> outputs = interpret(graph, {arange_input(summary.inputs[0])});
  fs::path expected_file = model.parent_path() / (model.stem().string() + "_output_0.pb");
  outputs.resize(std::min<size_t>(outputs.size(), 1));  // only output 0 has an expected file
  compare_all(outputs, {read_tensor_proto(expected_file.string())}, kLightModelTolerance, result);

  if (!selection.is_default_pipeline) return;
  std::string remaining = remaining_removable_ops(result.after);
  if (remaining.empty()) return;
  result.reason = result.passed ? remaining : result.reason + "; " + remaining;
  result.passed = false;
}

int run_light_models(const std::string& dir, const std::string& passes) {
  std::vector<fs::path> models;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.starts_with("light_") && name.ends_with(".onnx")) models.push_back(entry.path());
  }
  std::sort(models.begin(), models.end());
  if (models.empty()) fail("no light_*.onnx models in '{}'", dir);
  const PassSelection selection = parse_pass_selection(passes);
  const bool report_passes = !selection.passes.empty();

  int passed = 0;
  for (const fs::path& model : models) {
    LightModelResult result;
    result.name = model.stem().string();
    auto start = std::chrono::steady_clock::now();
    try {
      run_light_model_unguarded(model, selection, result);
    } catch (const std::exception& e) {
      result.passed = false;
      result.reason = e.what();
    }
    double ms = elapsed_ms(start);
    if (result.passed) {
      fmt::print("PASS {} ({:.0f} ms)\n", result.name, ms);
    } else {
      fmt::print("FAIL {}: {} ({:.0f} ms)\n", result.name, result.reason, ms);
    }
    if (report_passes && result.ran_passes) fmt::print("    {}\n", histogram_change(result));
    std::fflush(stdout);
    passed += result.passed;
  }
  fmt::print("\n{} passed, {} failed\n", passed, models.size() - passed);
  return passed == static_cast<int>(models.size()) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Runs ONNX's backend node tests and the light models through minic's "
               "reference interpreter", "minic-conformance"};
  app.require_subcommand(1);

  NodeOptions node;
  CLI::App* node_command = app.add_subcommand("node", "Run the backend node test cases in DIR");
  node_command->add_option("dir", node.dir, "Folder of cases (each with model.onnx)")->required();
  node_command->add_option("--filter", node.filter, "Run only cases whose name contains this");
  node_command->add_option("--expected", node.expected,
                           "List of cases that must pass; exit 1 if one fails");
  node_command->add_option("--write-expected", node.write_expected,
                           "Write the list of passing cases to this file");
  node_command->add_flag("--verbose", node.verbose, "Print every output's comparison and time");
  node_command->add_option("--passes", node.passes,
                           "Graph passes to run after import: 'default' (the default "
                           "pipeline), 'none' (the default) or a,b,c");

  std::string light_dir;
  CLI::App* light_command =
      app.add_subcommand("light-models", "Run light_*.onnx in DIR on arange inputs");
  light_command->add_option("dir", light_dir, "Folder of light_*.onnx models")->required();
  std::string light_passes = "none";
  light_command->add_option("--passes", light_passes,
                            "Graph passes to run after import: 'default' (the default "
                            "pipeline; then ConstantOfShape, BatchNormalization, Dropout and "
                            "Identity must all be gone), 'none' (the default) or a,b,c");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  }
  try {
    if (node_command->parsed()) return run_node_tests(node);
    return run_light_models(light_dir, light_passes);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  }
}
