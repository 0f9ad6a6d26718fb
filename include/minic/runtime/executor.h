// The executor: runs a compiled model's execution plan.
//
// Course module 4 (runtime). A compiled model is a list of kernel calls in topological
// order (the steps), and the buffers they read and write: the model's inputs and
// outputs, its constants (weights), and its intermediate values, which live in one arena
// at the offsets of the static memory plan (memory_plan.h). Running the model is then a
// loop over the steps: look up each argument's address, call the kernel. Nothing is
// allocated per step; the arena is allocated once per run (or kept, see Executor).
//
// Every kernel has the one calling convention of compiled code, `void kernel(void**
// args)`: the addresses of its buffers in parameter order. A step whose op has no compute
// rule runs the op's reference kernel behind the same convention, so the executor does
// not care which is which; the profiler reports it.
#pragma once

#include "minic/tensor/tensor.h"
#include "minic/runtime/memory_plan.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace minic::runtime {

using KernelCall = std::function<void(void** args)>;

enum class BufferKind { input, output, constant, intermediate };

struct PlanBuffer {
  std::string name;  // the graph value's name
  TensorType type;
  BufferKind kind = BufferKind::intermediate;
  std::shared_ptr<const Tensor> constant;  // the data of a constant
  int64_t arena_offset = 0;                // where an intermediate lives
};

struct PlanStep {
  std::string kernel;    // the kernel's name
  std::string op;        // the graph op ("Conv", "Fused", ...), for the profile
  bool compiled = true;  // false: the op's reference kernel runs
  KernelCall call;
  std::vector<int> args;  // indices into ExecutionPlan::buffers, in parameter order
};

struct ExecutionPlan {
  std::vector<PlanBuffer> buffers;
  std::vector<PlanStep> steps;
  std::vector<int> inputs;   // the model's inputs, in order (buffers of kind input)
  std::vector<int> outputs;  // the model's outputs, in order (any kind: an output may be a
                             // constant or an input passed through)
  MemoryPlan memory;         // the arena of the intermediates
};

// The time each step took in one run, for `minic run --profile`.
struct StepProfile {
  std::string kernel;
  std::string op;
  bool compiled = true;
  double milliseconds = 0;
};

class Executor {
 public:
  explicit Executor(ExecutionPlan plan);

  const ExecutionPlan& plan() const { return plan_; }

  // Runs the model on `inputs` (one per model input, of its type; Error naming the input
  // otherwise) and returns its outputs. With `profile`, also the time of every step.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs,
                          std::vector<StepProfile>* profile = nullptr);

 private:
  ExecutionPlan plan_;
  std::vector<std::byte> arena_;  // kept between runs
};

}  // namespace minic::runtime
