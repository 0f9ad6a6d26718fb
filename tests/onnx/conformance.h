// minic-conformance: ONNX's backend node tests and the light models, through the
// reference interpreter or compiled (--backend llvm, cuda, emulate, nvrtc). Course module
// 2 (the interpreter is the oracle; this checks the oracle against ONNX's own expected
// outputs) and module 6 (the compiled code against the same outputs).
//
//   minic-conformance node DIR [--cases FILE] [--filter SUBSTR] [--expected FILE]
//                              [--write-expected FILE] [--verbose]
//                              [--passes default|none|a,b,c] [--backend B] [--target T]
//   minic-conformance light-models DIR [--passes default|none|a,b,c] [--backend B]
//                                      [--target T]
//
// The backends: interp (the reference interpreter), llvm (compiled for a CPU), cuda (on
// GPU 0), emulate (the GPU schedules on the loop interpreter) and nvrtc (compiled by
// NVRTC for sm_90 and sm_90a without register spills; nothing runs, so a case passes when
// it compiles).
//
// The code is split by mode: node_tests.cpp, light_models.cpp, main.cpp; this header holds
// what they share.
//
// DIR is ONNX's backend/test/data/node (build/onnx-data/node, tests/CMakeLists.txt) or a
// folder laid out the same; --cases names the cases to run (node_cases.tsv: each must be
// in DIR), else every folder of DIR runs.
//
// A node case is a folder with model.onnx and test_data_set_0/input_K.pb, output_K.pb.
// Its inputs are bound to the model's graph inputs by position, all passed to the importer
// as known inputs (so inputs that decide shapes are frozen into the graph); the inputs
// still in the graph after import are passed to the backend in graph-input order. Every
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
// `--passes default` a model where one is left FAILS, whatever its outputs. With --target
// (llvm only) the models are compiled for that CPU instead of this machine's: with
// `llvm -mcpu=x86-64-v3`, schedules for 8-lane AVX2 vectors, checked against the same
// outputs.
#pragma once

#include "minic/driver/compile.h"
#include "minic/driver/target.h"
#include "minic/frontend/onnx.h"
#include "minic/passes/pass_manager.h"
#include "minic/runtime/compare.h"
#include "minic/runtime/interpreter.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace conformance {

namespace fs = std::filesystem;
using namespace minic;

constexpr Tolerance kNodeTolerance{1e-3, 1e-7};
constexpr Tolerance kLightModelTolerance{1e-3, 1e-5};

// The ops that exporters leave in inference graphs and that the default pipeline removes:
// folded into constants (ConstantOfShape), into the Conv before them (BatchNormalization),
// or dropped as no-ops at inference (Dropout, Identity).
inline const std::vector<std::string> kOpsRemovedByDefaultPipeline = {
    "ConstantOfShape", "BatchNormalization", "Dropout", "Identity"};

// What --passes asks for: the passes to run after import, in order.
struct PassSelection {
  std::vector<std::string> passes;
  bool is_default_pipeline = false;
};

// "default" (the default pipeline), "none" (no pass), or "a,b,c". Unknown names are an
// error before any case runs.
inline PassSelection parse_pass_selection(const std::string& text) {
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
    if (!PassRegistry::find(PassKind::graph, name)) fail("--passes: unknown pass '{}'", name);
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

inline double elapsed_ms(std::chrono::steady_clock::time_point start) {
  auto now = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(now - start).count();
}

// Compares every output with its expected tensor; fills the result's reason on the first
// mismatch and one detail line per output.
inline void compare_all(const std::vector<Tensor>& outputs, const std::vector<Tensor>& expected,
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
inline std::vector<fs::path> numbered_files(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int k = 0;; ++k) {
    fs::path file = dir / fmt::format("{}{}.pb", prefix, k);
    if (!fs::exists(file)) return files;
    files.push_back(file);
  }
}

// How a graph runs after its passes: "interp" (the reference interpreter) or "llvm"
// (compile_model for `target` with no further graph passes, then the compiled code).
// The architectures the nvrtc backend compiles every model for.
inline const std::vector<std::string> kNvrtcArchitectures = {"sm_90", "sm_90a"};

// Error naming the kernels whose ptxas report (NVRTC's log with --ptxas-options=-v) shows
// spill stores or loads: registers that did not suffice.
inline void check_no_spills(const std::string& log, const std::string& arch) {
  std::istringstream lines(log);
  std::string line, kernel, spilling;
  while (std::getline(lines, line)) {
    if (size_t at = line.find("Compiling entry function '"); at != std::string::npos) {
      size_t begin = at + 26;
      kernel = line.substr(begin, line.find('\'', begin) - begin);
    }
    bool spills = (line.find("bytes spill stores") != std::string::npos ||
                   line.find("bytes spill loads") != std::string::npos) &&
                  (line.find(" 0 bytes spill stores") == std::string::npos ||
                   line.find(" 0 bytes spill loads") == std::string::npos);
    if (spills) spilling += (spilling.empty() ? "" : ", ") + kernel;
  }
  if (!spilling.empty()) fail("{}: ptxas spills registers in {}", arch, spilling);
}

// The model's outputs on `backend`: interp, llvm (for `target`, a CPU), cuda (on the GPU,
// for `target`, a CUDA target), emulate (the GPU schedules on the loop interpreter) or
// nvrtc (the CUDA C compiled by NVRTC for kNvrtcArchitectures, without spills: nothing
// runs, so nullopt).
inline std::optional<std::vector<Tensor>> run_on_backend(Graph graph,
                                                         const std::vector<Tensor>& inputs,
                                                         const std::string& backend,
                                                         const Target& target) {
  if (backend == "interp") return interpret(graph, inputs);
  CompileOptions options;
  options.target = target;
  options.graph_passes = {};
  const bool gpu = backend == "cuda" || backend == "emulate" || backend == "nvrtc";
  if (gpu && !target.is_cuda()) fail("--backend {} needs a CUDA --target", backend);
  // emulate: the CUDA C without NVRTC; the nvrtc backend compiles it below.
  options.emulate = backend == "emulate" || backend == "nvrtc";
  if (!gpu && backend != "llvm") {
    fail("--backend: '{}' is not interp, llvm, cuda, emulate or nvrtc", backend);
  }
  std::unique_ptr<CompiledModel> model = compile_model(std::move(graph), options);
  if (backend != "nvrtc") return model->run(inputs);
  for (const std::string& arch : kNvrtcArchitectures) {
    codegen::CudaBinary binary = codegen::compile_cuda(model->cuda()->module.source, arch, true);
    check_no_spills(binary.log, arch);
  }
  return std::nullopt;
}

// The target a backend compiles for when --target is not given: this machine's CPU, or
// for cuda, emulate and nvrtc the GPU of `cuda` (sm_90).
inline Target default_target(const std::string& backend) {
  if (backend == "cuda" || backend == "emulate" || backend == "nvrtc") return parse_target("cuda");
  return codegen::host_target();
}

struct NodeOptions {
  std::string dir;
  std::string cases;  // a case list (node_cases.tsv); empty: every case in dir
  std::string filter;
  std::string expected;
  std::string write_expected;
  bool verbose = false;
  std::string passes = "none";
  std::string backend = "interp";
  std::string target;  // empty: default_target(backend)
};

int run_node_tests(const NodeOptions& options);
int run_light_models(const std::string& dir, const std::string& passes,
                     const std::string& backend, const Target& target);

}  // namespace conformance
