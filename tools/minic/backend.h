// A model ready to run on one backend, for `minic run` and `minic bench`. Course module 1.
//
// Two backends: "llvm" (the default: compile_model, include/minic/driver/compile.h) and
// "interp" (the reference interpreter, include/minic/runtime/interpreter.h, which runs
// the graph as it is after the graph passes). Both take the graph as imported and run the
// graph passes themselves, so that their compile times compare.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#pragma once

#include "minic/driver/compile.h"
#include "minic/ir/graph/graph.h"

#include <memory>
#include <string>
#include <vector>

namespace minic::cli {

extern const std::vector<std::string> kBackends;  // {"llvm", "interp"}

struct BackendOptions {
  std::string backend = "llvm";
  std::vector<std::string> passes;  // graph passes by name (parse_pass_list)
  int threads = 0;                  // 0: every core
  std::string records;              // a tuning database for llvm (empty: none)
  Target target = codegen::host_target();  // what llvm compiles for (or a CUDA target)
  bool emulate = false;                     // a CUDA target's kernels on the loop interpreter
  std::vector<std::string> backends;        // external back ends (--backends), for llvm
};

// "records: 12 of 54 kernels tuned (DB.jsonl)", and how many records did not replay, if
// any; empty when the model was compiled without records.
std::string records_summary(const CompileStats& stats);

// Error if `records` are given with a directory `minic compile` wrote: its kernels are
// compiled already, with the records given to `minic compile` (which it keeps).
void check_no_records_for_compiled_dir(const std::string& records, const std::string& dir);

class PreparedModel {
 public:
  // Runs the graph passes and, for llvm, compiles (with the records, if given). Error for
  // an unknown backend, or records given to the interpreter.
  PreparedModel(Graph graph, const BackendOptions& options);
  // Loads a directory written by `minic compile` (llvm; its kernels are not generated
  // again, and the records it was compiled with come with it).
  PreparedModel(const std::string& compiled_dir, int threads);

  // The graph after the graph passes (its inputs are the model's).
  const Graph& graph() const;
  std::vector<Tensor> run(const std::vector<Tensor>& inputs,
                          std::vector<runtime::StepProfile>* profile = nullptr);

  double compile_ms() const { return compile_ms_; }
  // The compiled model (llvm only; null for the interpreter).
  const CompiledModel* compiled() const { return compiled_.get(); }
  // One line on what runs: "llvm: 58 kernels (56 compiled, 2 reference: Resize);
  // intermediates in a 6.9 MiB arena (43.2 MiB without reuse)".
  std::string describe() const;
  // records_summary of the compiled model; empty for the interpreter.
  std::string describe_records() const;

 private:
  BackendOptions options_;
  Graph graph_;  // the interpreter's
  std::unique_ptr<CompiledModel> compiled_;
  double compile_ms_ = 0;
};

}  // namespace minic::cli
