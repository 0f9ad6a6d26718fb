// minic-conformance node: ONNX's backend node tests, one case a folder. See conformance.h.
#include "conformance.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <set>

namespace conformance {
namespace {

void run_node_case_unguarded(const fs::path& folder, const std::vector<std::string>& passes,
                             const std::string& backend, const Target& target,
                             CaseResult& result) {
  const std::string model = (folder / "model.onnx").string();
  const fs::path data = folder / "test_data_set_0";
  OnnxModelSummary summary = summarize_onnx(model);
  for (const OnnxValueInfo& input : summary.inputs) {
    if (!input.is_tensor) fail("{}", not_a_tensor_message(input, "input"));
  }

  std::vector<fs::path> input_files = numbered_files(data, "input_");
  if (input_files.size() > summary.inputs.size()) {
    fail("{} input files for {} graph inputs", input_files.size(), summary.inputs.size());
  }
  OnnxImportOptions options;
  for (size_t k = 0; k < input_files.size(); ++k) {
    options.known_inputs[summary.inputs[k].name] = read_tensor_proto(input_files[k].string());
  }
  Graph graph = import_onnx(model, options);
  run_passes(graph, passes, target);

  std::vector<Tensor> inputs;
  for (const Value* input : graph.inputs()) {
    auto given = options.known_inputs.find(input->name());
    if (given == options.known_inputs.end()) {
      fail("no input file for graph input '{}'", input->name());
    }
    inputs.push_back(given->second);
  }
  std::optional<std::vector<Tensor>> outputs =
      run_on_backend(std::move(graph), inputs, backend, target);
  if (!outputs) {  // compiled only (nvrtc)
    result.passed = true;
    return;
  }

  std::vector<Tensor> expected;
  for (const fs::path& file : numbered_files(data, "output_")) {
    expected.push_back(read_tensor_proto(file.string()));
  }
  compare_all(*outputs, expected, kNodeTolerance, result);
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

CaseResult run_node_case(const fs::path& folder, const std::vector<std::string>& passes,
                         const std::string& backend, const Target& target) {
  CaseResult result;
  result.name = folder.filename().string();
  auto start = std::chrono::steady_clock::now();
  try {
    run_node_case_unguarded(folder, passes, backend, target, result);
  } catch (const std::exception& e) {  // minic::Error, and anything else a case throws
    result.passed = false;
    result.reason = one_line_reason(e.what(), folder);
  }
  result.milliseconds = elapsed_ms(start);
  return result;
}

// `text` without the white space around it.
std::string trimmed(const std::string& text) {
  auto space = [](unsigned char c) { return std::isspace(c); };
  auto begin = std::find_if_not(text.begin(), text.end(), space);
  auto end = std::find_if_not(text.rbegin(), std::make_reverse_iterator(begin), space).base();
  return std::string(begin, end);
}

// A case list (node_cases.tsv, expected_pass.txt): a case's folder and, after a tab, the op
// it tests (node_cases.tsv only), one case a line; '#' starts a comment. `what` names the
// list in the error for a file that cannot be read.
std::vector<std::pair<std::string, std::string>> read_cases(const std::string& path,
                                                            std::string_view what) {
  std::ifstream file(path);
  if (!file) fail("cannot read the {} '{}'", what, path);
  std::vector<std::pair<std::string, std::string>> cases;
  std::string line;
  while (std::getline(file, line)) {
    line = line.substr(0, line.find('#'));
    size_t tab = line.find('\t');
    std::string folder = trimmed(line.substr(0, tab));
    std::string op = tab == std::string::npos ? "" : trimmed(line.substr(tab + 1));
    if (!folder.empty()) cases.emplace_back(folder, op);
  }
  return cases;
}

// The op a case tests: from the case list; for an `_expanded` case, the op of the case it
// expands (the folder without the suffix); else the model's first op by name.
std::string case_op(const std::map<std::string, std::string>& listed, const fs::path& folder) {
  auto it = listed.find(folder.filename().string());
  if (it != listed.end() && !it->second.empty()) return it->second;
  const std::string name = folder.filename().string();
  constexpr std::string_view kExpanded = "_expanded";
  if (name.ends_with(kExpanded)) {
    fs::path unexpanded = folder.parent_path() / name.substr(0, name.size() - kExpanded.size());
    if (fs::exists(unexpanded / "model.onnx")) return case_op(listed, unexpanded);
  }
  try {
    OnnxModelSummary summary = summarize_onnx((folder / "model.onnx").string());
    if (!summary.op_counts.empty()) return summary.op_counts.begin()->first;
  } catch (const std::exception&) {
    // An unreadable model is reported by the case itself.
  }
  return "?";
}

// The case folders to run: those of --cases, each of which must be in DIR, or else every
// folder of DIR with a model.onnx; then those whose name contains --filter.
std::vector<fs::path> case_folders(const NodeOptions& options,
                                   std::map<std::string, std::string>& ops) {
  std::vector<fs::path> folders;
  if (!options.cases.empty()) {
    for (const auto& [name, op] : read_cases(options.cases, "case list")) {
      if (!fs::exists(fs::path(options.dir) / name / "model.onnx")) {
        fail("case '{}' of {} is not in {} (no {}/model.onnx)", name, options.cases,
             options.dir, name);
      }
      ops[name] = op;
      folders.push_back(fs::path(options.dir) / name);
    }
  } else {
    for (const fs::directory_entry& entry : fs::directory_iterator(options.dir)) {
      if (fs::exists(entry.path() / "model.onnx")) folders.push_back(entry.path());
    }
  }
  std::erase_if(folders, [&](const fs::path& folder) {
    return folder.filename().string().find(options.filter) == std::string::npos;
  });
  std::sort(folders.begin(), folders.end());
  return folders;
}

// The names of a case list.
std::set<std::string> read_case_list(const std::string& path) {
  std::set<std::string> names;
  for (const auto& [name, op] : read_cases(path, "expected-pass list")) names.insert(name);
  return names;
}

void write_case_list(const std::string& path, const std::vector<CaseResult>& results) {
  std::ofstream file(path);
  if (!file) fail("cannot write '{}'", path);
  file << "# ONNX backend node tests that minic's reference interpreter passes\n"
          "# (outputs within rtol 1e-3, atol 1e-7 of ONNX's). ctest's conformance/node fails\n"
          "# if any case listed here fails. Generated by:\n"
          "#   build/tests/onnx/minic-conformance node build/onnx-data/node \\\n"
          "#       --write-expected tests/onnx/expected_pass.txt\n";
  for (const CaseResult& result : results) {
    if (result.passed) file << result.name << "\n";
  }
}

}  // namespace

int run_node_tests(const NodeOptions& options) {
  if ((!options.filter.empty() || !options.cases.empty()) && !options.write_expected.empty()) {
    fail("--write-expected writes the full list; it cannot be combined with --filter or "
         "--cases");
  }
  if (!fs::is_directory(options.dir)) fail("'{}' is not a folder of node test cases", options.dir);
  std::map<std::string, std::string> ops;  // case → op, from the case list
  const std::vector<fs::path> folders = case_folders(options, ops);
  const PassSelection selection = parse_pass_selection(options.passes);
  const Target target =
      options.target.empty() ? default_target(options.backend) : parse_target(options.target);

  std::vector<CaseResult> results;
  std::map<std::string, std::pair<int, int>> by_op;  // op → (passed, total)
  int passed = 0;
  for (const fs::path& folder : folders) {
    if (options.verbose) {
      // Printed first, so that a case that crashes the runner is the last name shown.
      fmt::print("RUN  {}\n", folder.filename().string());
      std::fflush(stdout);
    }
    CaseResult result = run_node_case(folder, selection.passes, options.backend, target);
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
    auto& [op_passed, op_total] = by_op[case_op(ops, folder)];
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
  // A listed case that did not run is missing from DIR, unless --filter or --cases left it
  // out (a --cases list names only folders that exist, checked above).
  for (const std::string& name : expected) {
    if (ran.count(name) || name.find(options.filter) == std::string::npos) continue;
    if (!options.cases.empty()) continue;
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

}  // namespace conformance
