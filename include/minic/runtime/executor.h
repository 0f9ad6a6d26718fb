// The executor: runs a compiled model's execution plan on a device.
//
// Course module 4 (runtime). A compiled model is a list of kernel calls in topological
// order (the steps), and the buffers they read and write: the model's inputs and
// outputs, its constants (weights), and its intermediate values, which live in one arena
// at the offsets of the static memory plan (memory_plan.h). Running the model is then a
// loop over the steps: look up each argument's address, call the kernel. Nothing is
// allocated per step; the arena is allocated once, when the plan is loaded, and kept.
//
// Every kernel has the one calling convention of compiled code, `void kernel(void**
// args)`: the addresses of its buffers in parameter order. A step whose op has no compute
// rule runs the op's reference kernel behind the same convention, on the host; the
// profile says which is which.
//
// The executor talks to a Device (device.h) for memory, copies, launches, synchronisation
// and timing. On the host CPU device memory is host memory: the steps read the caller's
// inputs and the constants where they are and write the outputs straight into the
// returned tensors, so nothing is copied. On a device with memory of its own the
// executor copies as device.h describes.
//
// Chapter: docs/module4-schedules.md#6-the-executor-and-threads
#pragma once

#include "minic/tensor/tensor.h"
#include "minic/runtime/device.h"
#include "minic/runtime/memory_plan.h"

#include <memory>
#include <string>
#include <span>
#include <vector>

namespace minic::runtime {

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
  int num_outputs = 0;    // the last num_outputs of args are the buffers the step writes
  std::string function;   // the compiled function `call` runs: the kernel's own, or that of
                          // another kernel of the same workload (compiled once); empty for
                          // a reference kernel
  std::string backend;   // the external back end whose call this is (empty: minic's)
  bool beside_previous = false;  // runs at the same time as the step before it: neither
                                 // needs the other, and their buffers are apart
                                 // (src/driver/execution_plan.cpp)
};

struct ExecutionPlan {
  std::vector<PlanBuffer> buffers;
  std::vector<PlanStep> steps;
  std::vector<int> inputs;   // the model's inputs, in order (buffers of kind input)
  std::vector<int> outputs;  // the model's outputs, in order (any kind: an output may be a
                             // constant or an input passed through)
  MemoryPlan memory;         // the arena of the intermediates
};

// An input held elsewhere, read in place: its type and the address of its bytes (row-major,
// aligned to its element size), both owned by the caller. What a Tensor gives, and what a
// caller with memory of its own (a numpy array in the Python package) gives without
// copying it into a Tensor.
struct TensorView {
  const TensorType* type = nullptr;
  const std::byte* data = nullptr;
};

// The time each step took in one run, for `minic run --profile`.
struct StepProfile {
  std::string kernel;
  std::string op;
  bool compiled = true;
  double milliseconds = 0;
  std::string backend;  // an external back end's step: its name
};

class Executor {
 public:
  // Loads `plan` onto `device`: allocates the arena there, kept for every run, and on a
  // device with memory of its own also the inputs, outputs and constants, copying the
  // constants in.
  Executor(ExecutionPlan plan, std::unique_ptr<Device> device);

  const ExecutionPlan& plan() const { return plan_; }
  const Device& device() const { return *device_; }

  // Runs the model on `inputs` (one per model input, of its type; Error naming the input
  // otherwise) and returns its outputs. With `profile`, also the time of every step.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs,
                          std::vector<StepProfile>* profile = nullptr);
  // The same on tensors held elsewhere, read in place (a compiled control-flow body runs
  // so at every iteration, on its states and on the outer values it captures).
  std::vector<Tensor> run_in_place(std::span<const Tensor* const> inputs,
                                   std::vector<StepProfile>* profile = nullptr);
  std::vector<Tensor> run_views(std::span<const TensorView> inputs,
                                std::vector<StepProfile>* profile = nullptr);

 private:
  struct FreeOnDevice {
    Device* device;
    void operator()(void* memory) const { device->free(memory); }
  };

  void check_inputs(std::span<const TensorView> inputs) const;
  void* allocate(int64_t bytes);
  // One step, on `args` (device addresses); the milliseconds it took when `timed`.
  double run_step(const PlanStep& step, std::vector<void*>& args, bool timed);
  // Steps [first, last) at once (each beside the one before it), on `address`.
  void run_side_by_side(size_t first, size_t last, const std::vector<void*>& address,
                        std::vector<StepProfile>* profile);
  void run_reference_step(const PlanStep& step, std::vector<void*>& args);

  ExecutionPlan plan_;
  std::unique_ptr<Device> device_;
  std::vector<std::unique_ptr<void, FreeOnDevice>> memory_;  // what this allocated on it
  // The device address of every buffer that has one before a run: intermediates, and
  // constants (and, on a device with memory of its own, inputs and outputs too).
  std::vector<void*> address_;
};

}  // namespace minic::runtime
