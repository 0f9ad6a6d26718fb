// The executor: a loop over the steps of an execution plan, on a device. Course module 4.
//
// Loading a plan (the constructor) gives every buffer that outlives a run its device
// address: the intermediates their arena offsets, the constants their data (copied to
// the device where its memory is its own). A run then
//   1. binds the inputs: in place on the host, else copied to the device;
//   2. makes the result tensors, which the steps write in place on the host;
//   3. runs the steps in order, each on its arguments' addresses, and steps planned side
//      by side (PlanStep::beside_previous) at once, on the device's threads;
//   4. synchronises, and gives back the outputs (copied from the device where its memory
//      is its own; an output that is an input or a constant is always a copy).
//
// Chapter: docs/module4-schedules.md#6-the-executor-and-threads
#include "minic/runtime/executor.h"

#include "minic/support/error.h"

#include <algorithm>
#include <chrono>

namespace minic::runtime {

Executor::Executor(ExecutionPlan plan, std::unique_ptr<Device> device)
    : plan_(std::move(plan)), device_(std::move(device)), address_(plan_.buffers.size()) {
  auto* arena = static_cast<std::byte*>(allocate(plan_.memory.arena_bytes));
  const bool in_place = device_->shares_host_memory();
  for (size_t b = 0; b < plan_.buffers.size(); ++b) {
    const PlanBuffer& buffer = plan_.buffers[b];
    if (buffer.kind == BufferKind::intermediate) {
      address_[b] = arena + buffer.arena_offset;
    } else if (in_place) {
      // Kernels only read constants; the cast drops const for the common calling convention.
      // Inputs and outputs are the caller's tensors, bound by each run.
      if (buffer.kind == BufferKind::constant) {
        address_[b] = const_cast<std::byte*>(buffer.constant->bytes().data());
      }
    } else {
      address_[b] = allocate(buffer.type.num_bytes());
      if (buffer.kind == BufferKind::constant) {
        device_->copy_to_device(address_[b], buffer.constant->bytes().data(),
                                buffer.type.num_bytes());
      }
    }
  }
}

void* Executor::allocate(int64_t bytes) {
  memory_.emplace_back(device_->allocate(bytes, kBufferAlignment), FreeOnDevice{device_.get()});
  return memory_.back().get();
}

void Executor::check_inputs(std::span<const TensorView> inputs) const {
  if (inputs.size() != plan_.inputs.size()) {
    fail("the model takes {} input{}, given {}", plan_.inputs.size(),
         plan_.inputs.size() == 1 ? "" : "s", inputs.size());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const PlanBuffer& buffer = plan_.buffers[plan_.inputs[i]];
    if (*inputs[i].type != buffer.type) {
      fail("input '{}' must be {}, not {}", buffer.name, type_string(buffer.type),
           type_string(*inputs[i].type));
    }
  }
}

std::vector<Tensor> Executor::run(const std::vector<Tensor>& inputs,
                                  std::vector<StepProfile>* profile) {
  std::vector<const Tensor*> pointers;
  for (const Tensor& input : inputs) pointers.push_back(&input);
  return run_in_place(pointers, profile);
}

std::vector<Tensor> Executor::run_in_place(std::span<const Tensor* const> inputs,
                                           std::vector<StepProfile>* profile) {
  std::vector<TensorView> views;
  for (const Tensor* input : inputs) views.push_back({&input->type(), input->bytes().data()});
  return run_views(views, profile);
}

std::vector<Tensor> Executor::run_views(std::span<const TensorView> inputs,
                                        std::vector<StepProfile>* profile) {
  check_inputs(inputs);
  const bool in_place = device_->shares_host_memory();
  std::vector<void*> address = address_;

  // 1. The inputs.
  for (size_t i = 0; i < inputs.size(); ++i) {
    int b = plan_.inputs[i];
    if (in_place) {
      // Kernels only read inputs; the cast drops const for the common calling convention.
      address[b] = const_cast<std::byte*>(inputs[i].data);
    } else {
      device_->copy_to_device(address[b], inputs[i].data, inputs[i].type->num_bytes());
    }
  }
  // 2. The result tensors, one per buffer of kind output.
  std::vector<Tensor> results;
  std::vector<int> result_of(plan_.buffers.size(), -1);
  for (size_t b = 0; b < plan_.buffers.size(); ++b) {
    if (plan_.buffers[b].kind != BufferKind::output) continue;
    result_of[b] = static_cast<int>(results.size());
    results.emplace_back(plan_.buffers[b].type);
    if (in_place) address[b] = results.back().bytes().data();
  }
  // 3. The steps, in order; steps planned side by side at once.
  std::vector<void*> args;
  for (size_t s = 0; s < plan_.steps.size();) {
    size_t last = s + 1;
    while (last < plan_.steps.size() && plan_.steps[last].beside_previous) ++last;
    if (last - s > 1) {
      run_side_by_side(s, last, address, profile);
      s = last;
      continue;
    }
    const PlanStep& step = plan_.steps[s++];
    args.clear();
    for (int b : step.args) args.push_back(address[b]);
    double milliseconds = run_step(step, args, profile != nullptr);
    if (profile) {
      profile->push_back({step.kernel, step.op, step.compiled, milliseconds, step.backend});
    }
  }
  device_->synchronize();
  // 4. The outputs: each result moved into its last place among them (a buffer may be
  // two outputs), copied into the others.
  std::vector<Tensor> outputs;
  for (size_t k = 0; k < plan_.outputs.size(); ++k) {
    const int b = plan_.outputs[k];
    if (result_of[b] >= 0) {
      Tensor& result = results[result_of[b]];
      if (!in_place) {
        device_->copy_to_host(result.bytes().data(), address[b],
                              static_cast<int64_t>(result.bytes().size()));
      }
      const bool again = std::find(plan_.outputs.begin() + static_cast<std::ptrdiff_t>(k) + 1,
                                   plan_.outputs.end(), b) != plan_.outputs.end();
      if (again) {
        outputs.push_back(result);
      } else {
        outputs.push_back(std::move(result));
      }
      continue;
    }
    // An output that is an input or a constant: a copy of it.
    Tensor copy(plan_.buffers[b].type);
    device_->copy_to_host(copy.bytes().data(), address[b],
                          static_cast<int64_t>(copy.bytes().size()));
    outputs.push_back(std::move(copy));
  }
  return outputs;
}

double Executor::run_step(const PlanStep& step, std::vector<void*>& args, bool timed) {
  if (step.compiled) {
    if (timed) return device_->launch_timed(step.call, args.data());
    device_->launch(step.call, args.data());
    return 0;
  }
  // A reference kernel runs on the host, timed by the host's clock.
  auto start = std::chrono::steady_clock::now();
  run_reference_step(step, args);
  std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  return timed ? took.count() : 0;
}

void Executor::run_side_by_side(size_t first, size_t last, const std::vector<void*>& address,
                                std::vector<StepProfile>* profile) {
  std::vector<std::vector<void*>> args(last - first);
  std::vector<double> milliseconds(last - first, 0.0);
  device_->run_side_by_side(static_cast<int64_t>(last - first), [&](int64_t k) {
    const PlanStep& step = plan_.steps[first + static_cast<size_t>(k)];
    for (int b : step.args) args[k].push_back(address[b]);
    milliseconds[k] = run_step(step, args[k], profile != nullptr);
  });
  for (size_t s = first; profile && s < last; ++s) {
    const PlanStep& step = plan_.steps[s];
    profile->push_back(
        {step.kernel, step.op, step.compiled, milliseconds[s - first], step.backend});
  }
}

// Reference kernels run on the host, on host memory: on a device with memory of its own,
// the buffers the step reads are copied to the host, and the ones it writes (the last
// num_outputs arguments) copied back.
void Executor::run_reference_step(const PlanStep& step, std::vector<void*>& args) {
  if (device_->shares_host_memory()) {
    step.call(args.data());
    return;
  }
  device_->synchronize();
  const size_t first_output = args.size() - static_cast<size_t>(step.num_outputs);
  std::vector<std::vector<std::byte>> host(args.size());
  std::vector<void*> host_args;
  for (size_t a = 0; a < args.size(); ++a) {
    host[a].resize(static_cast<size_t>(plan_.buffers[step.args[a]].type.num_bytes()));
    if (a < first_output) {
      device_->copy_to_host(host[a].data(), args[a], static_cast<int64_t>(host[a].size()));
    }
    host_args.push_back(host[a].data());
  }
  step.call(host_args.data());
  for (size_t a = first_output; a < args.size(); ++a) {
    device_->copy_to_device(args[a], host[a].data(), static_cast<int64_t>(host[a].size()));
  }
}

}  // namespace minic::runtime
