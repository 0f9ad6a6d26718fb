// model.c, model.h and weights.bin: the execution plan of a compiled model for C
// programs. Course module 6.
//
// The generated source reads like the executor (src/runtime/executor.cpp) unrolled:
//
//   int minic_model_init(const char* weights_path);   loads weights.bin, allocates the arena
//   void minic_model_run(void* const* inputs, void* const* outputs);
//   void minic_model_free(void);
//
//   void minic_model_run(void* const* inputs, void* const* outputs) {
//     void* args[4];
//     /* step 0: gemm_relu (Fused) */
//     args[0] = inputs[0]; args[1] = minic_weights + 0; ...; args[3] = minic_arena + 0;
//     gemm_relu(args);
//     ...
//   }
//
// The fixed text is a template with named fields ({weights_bytes}, {arena_allocated}, ...);
// the steps add one line per argument and one call each.
//
// Chapter: docs/module6-llvm-cpu.md#5-ahead-of-time-minic-compile
#include "aot_entry.h"

#include "minic/codegen/llvm.h"
#include "minic/runtime/memory_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace minic {
namespace {

using runtime::BufferKind;

int64_t aligned(int64_t bytes) {
  return (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
}

// "f32[1,784]" as a C comment.
std::string describe(const runtime::PlanBuffer& buffer) {
  return fmt::format("{}: {} ({} bytes)", buffer.name, type_string(buffer.type),
                     buffer.type.num_bytes());
}

// The end of model.h: the three calls of a C program.
constexpr const char* kHeaderDeclarations = R"(#pragma once

#ifdef __cplusplus
extern "C" {
#endif

// 0 on success; else the weights file could not be read or memory allocated.
int minic_model_init(const char* weights_path);
void minic_model_run(void* const* inputs, void* const* outputs);
void minic_model_free(void);

#ifdef __cplusplus
}
#endif
)";

// model.h: the model's inputs and outputs in order, then kHeaderDeclarations.
std::string model_header(const runtime::ExecutionPlan& plan) {
  std::string h =
      "// The whole model as one call, for C programs (written by `minic compile`).\n"
      "// minic_model_init loads weights.bin and allocates the intermediates; then each\n"
      "// minic_model_run takes the inputs and fills the outputs, in this order:\n";
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    h += fmt::format("//   inputs[{}]   {}\n", i, describe(plan.buffers[plan.inputs[i]]));
  }
  for (size_t k = 0; k < plan.outputs.size(); ++k) {
    h += fmt::format("//   outputs[{}]  {}\n", k, describe(plan.buffers[plan.outputs[k]]));
  }
  return h + kHeaderDeclarations;
}

// The address of every buffer the steps use, as a C expression; appends every constant
// to `weights` (each at an aligned offset).
std::map<int, std::string> buffer_addresses(const runtime::ExecutionPlan& plan,
                                            std::string& weights) {
  std::map<int, std::string> address;
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    address[plan.inputs[i]] = fmt::format("inputs[{}]", i);
  }
  for (size_t k = 0; k < plan.outputs.size(); ++k) {
    if (plan.buffers[plan.outputs[k]].kind == BufferKind::output) {
      address[plan.outputs[k]] = fmt::format("outputs[{}]", k);
    }
  }
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    const runtime::PlanBuffer& buffer = plan.buffers[b];
    if (buffer.kind == BufferKind::constant) {
      int64_t offset = static_cast<int64_t>(weights.size());
      const auto bytes = buffer.constant->bytes();
      weights.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      weights.resize(static_cast<size_t>(aligned(static_cast<int64_t>(weights.size()))));
      address[static_cast<int>(b)] = fmt::format("(minic_weights + {})", offset);
    } else if (buffer.kind == BufferKind::intermediate) {
      address[static_cast<int>(b)] = fmt::format("(minic_arena + {})", buffer.arena_offset);
    }
  }
  return address;
}

// model.c up to the first step: the buffers, init, free, and the start of run.
constexpr const char* kSourceHead =
    "// The execution plan of a model compiled by `minic compile`, as C11 (see model.h).\n"
    R"(#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "model.h"

static unsigned char* minic_weights;
static unsigned char* minic_arena;

int minic_model_init(const char* weights_path) {{
  FILE* file = fopen(weights_path, "rb");
  if (!file) return 1;
  minic_weights = aligned_alloc(64, {weights_allocated});
  minic_arena = aligned_alloc(64, {arena_allocated});
  size_t read = minic_weights ? fread(minic_weights, 1, {weights_bytes}, file) : 0;
  fclose(file);
  if (!minic_weights || !minic_arena) return 2;
  return read == {weights_bytes} ? 0 : 1;
}}

void minic_model_free(void) {{
  free(minic_weights);
  free(minic_arena);
}}

void minic_model_run(void* const* inputs, void* const* outputs) {{
  void* args[{max_args}];
)";

// model.c: kSourceHead, then one call per step, then the outputs that are copies.
std::string model_source(const runtime::ExecutionPlan& plan,
                         const std::map<int, std::string>& address, size_t weights_bytes) {
  size_t max_args = 1;
  for (const runtime::PlanStep& step : plan.steps) max_args = std::max(max_args, step.args.size());
  std::string c = fmt::format(
      kSourceHead,
      fmt::arg("weights_allocated",
               std::max<int64_t>(aligned(static_cast<int64_t>(weights_bytes)), kBufferAlignment)),
      fmt::arg("arena_allocated",
               std::max<int64_t>(aligned(plan.memory.arena_bytes), kBufferAlignment)),
      fmt::arg("weights_bytes", weights_bytes), fmt::arg("max_args", max_args));
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const runtime::PlanStep& step = plan.steps[s];
    c += fmt::format("  /* step {}: {} ({}) */\n", s, step.kernel, step.op);
    for (size_t a = 0; a < step.args.size(); ++a) {
      c += fmt::format("  args[{}] = {};\n", a, address.at(step.args[a]));
    }
    c += fmt::format("  {}(args);\n", codegen::kernel_symbol(step.function));
  }
  for (size_t k = 0; k < plan.outputs.size(); ++k) {
    const runtime::PlanBuffer& buffer = plan.buffers[plan.outputs[k]];
    if (buffer.kind == BufferKind::output) continue;
    c += fmt::format(
        "  memcpy(outputs[{}], {}, {});  /* an output that is an input or a constant */\n", k,
        address.at(plan.outputs[k]), buffer.type.num_bytes());
  }
  return c + "}\n";
}

}  // namespace

ModelEntry model_entry(const CompiledModel& model) {
  ModelEntry entry;
  const runtime::ExecutionPlan& plan = model.plan();
  for (const runtime::PlanStep& step : plan.steps) {
    if (!step.compiled) {
      entry.reason = fmt::format("step {} ({}) runs the reference kernel of {}", step.kernel,
                                 step.op, step.op);
      return entry;
    }
  }
  entry.complete = true;
  std::map<int, std::string> address = buffer_addresses(plan, entry.weights);
  entry.header = model_header(plan);
  entry.source = model_source(plan, address, entry.weights.size());
  return entry;
}

}  // namespace minic
