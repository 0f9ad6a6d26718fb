// The executor: a loop over the steps of an execution plan. Course module 4.
#include "minic/runtime/executor.h"

#include "minic/support/error.h"

#include <chrono>
#include <cstring>

namespace minic::runtime {

Executor::Executor(ExecutionPlan plan) : plan_(std::move(plan)) {
  // One extra alignment's worth of bytes lets the arena start on an aligned address.
  arena_.resize(static_cast<size_t>(plan_.memory.arena_bytes + kBufferAlignment));
}

std::vector<Tensor> Executor::run(const std::vector<Tensor>& inputs,
                                  std::vector<StepProfile>* profile) {
  if (inputs.size() != plan_.inputs.size()) {
    fail("the model takes {} input{}, given {}", plan_.inputs.size(),
         plan_.inputs.size() == 1 ? "" : "s", inputs.size());
  }
  // The address of every buffer.
  std::vector<void*> address(plan_.buffers.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const PlanBuffer& buffer = plan_.buffers[plan_.inputs[i]];
    if (inputs[i].type() != buffer.type) {
      fail("input '{}' must be {}, not {}", buffer.name, type_string(buffer.type),
           type_string(inputs[i].type()));
    }
    // Kernels only read inputs; the cast drops const for the common calling convention.
    address[plan_.inputs[i]] = const_cast<std::byte*>(inputs[i].bytes().data());
  }
  auto aligned = reinterpret_cast<uintptr_t>(arena_.data());
  aligned = (aligned + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
  std::vector<Tensor> results;
  std::vector<int> result_of(plan_.buffers.size(), -1);
  for (size_t b = 0; b < plan_.buffers.size(); ++b) {
    const PlanBuffer& buffer = plan_.buffers[b];
    switch (buffer.kind) {
      case BufferKind::input:
        break;
      case BufferKind::constant:
        address[b] = const_cast<std::byte*>(buffer.constant->bytes().data());
        break;
      case BufferKind::intermediate:
        address[b] = reinterpret_cast<std::byte*>(aligned) + buffer.arena_offset;
        break;
      case BufferKind::output:
        result_of[b] = static_cast<int>(results.size());
        results.emplace_back(buffer.type);
        address[b] = results.back().bytes().data();
        break;
    }
  }

  std::vector<void*> args;
  for (const PlanStep& step : plan_.steps) {
    args.clear();
    for (int b : step.args) args.push_back(address[b]);
    auto start = std::chrono::steady_clock::now();
    step.call(args.data());
    if (profile) {
      std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
      profile->push_back({step.kernel, step.op, step.compiled, took.count()});
    }
  }

  std::vector<Tensor> outputs;
  for (int b : plan_.outputs) {
    if (result_of[b] >= 0) {
      outputs.push_back(results[result_of[b]]);
      continue;
    }
    // An output that is an input or a constant: a copy of it.
    Tensor copy(plan_.buffers[b].type);
    std::memcpy(copy.bytes().data(), address[b], copy.bytes().size());
    outputs.push_back(std::move(copy));
  }
  return outputs;
}

}  // namespace minic::runtime
