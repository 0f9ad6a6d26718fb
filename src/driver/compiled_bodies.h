// Control-flow bodies as compiled code: the BodyEvaluator a compiled model gives the
// reference steps of its If, Loop and Scan nodes. Private to src/driver. Course module 2.
//
// A body whose shapes follow from its inputs' types alone (the usual case: a recurrence
// over fixed-size states) is typed for those types, compiled once by compile_model with
// the model's own options, and run as native code on every iteration after. A body whose
// shapes depend on values (a Slice at the iteration number) is not compiled; the op's
// kernel runs it through the reference kernels (src/ops/subgraph.h).
//
// Two control-flow steps may run side by side (execution_plan.cpp), each calling run on
// its own thread: bodies are looked up and compiled under one lock, and each compiled body
// runs under a lock of its own (its executor's arena is one), so different bodies run at
// once.
//
// Chapter: docs/module2-graph-ir.md#control-flow-if-loop-scan
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "minic/driver/compile.h"
#include "minic/ops/op.h"

namespace minic {

class CompiledBodies : public BodyEvaluator {
 public:
  // The bodies compile with the model's options, their kernels generated afresh (a kernel
  // library written for the model holds none of theirs).
  explicit CompiledBodies(CompileOptions options) : options_(std::move(options)) {
    options_.kernel_library.clear();
  }

  std::optional<std::vector<Tensor>> run(const Graph& body, int opset,
                                         std::span<const Tensor* const> inputs) override;
  // How many distinct bodies (a body and its input types) it has compiled.
  int compiled() const;

 private:
  // A body compiled for one list of input types: null where it cannot be compiled.
  struct Compiled {
    std::vector<TensorType> types;
    std::unique_ptr<CompiledModel> model;
    std::mutex running;  // held while the model runs
  };

  CompileOptions options_;
  // By body, then by input types (found by comparing them: a body runs at every iteration,
  // so the lookup allocates nothing). Entries stay where they are as others are added.
  std::map<const Graph*, std::vector<std::unique_ptr<Compiled>>> models_;
  mutable std::mutex models_mutex_;  // guards models_ (lookups, and compiling a body)
};

}  // namespace minic
