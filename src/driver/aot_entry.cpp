// model.c, model.h and weights.bin: the execution plan of a compiled model for C
// programs. Course module 8.
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

  // The address of every buffer, as C.
  std::map<int, std::string> address;
  for (size_t i = 0; i < plan.inputs.size(); ++i) address[plan.inputs[i]] = fmt::format("inputs[{}]", i);
  for (size_t k = 0; k < plan.outputs.size(); ++k) {
    if (plan.buffers[plan.outputs[k]].kind == BufferKind::output) {
      address[plan.outputs[k]] = fmt::format("outputs[{}]", k);
    }
  }
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    const runtime::PlanBuffer& buffer = plan.buffers[b];
    if (buffer.kind == BufferKind::constant) {
      int64_t offset = static_cast<int64_t>(entry.weights.size());
      const auto bytes = buffer.constant->bytes();
      entry.weights.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      entry.weights.resize(static_cast<size_t>(aligned(static_cast<int64_t>(entry.weights.size()))));
      address[static_cast<int>(b)] = fmt::format("(minic_weights + {})", offset);
    } else if (buffer.kind == BufferKind::intermediate) {
      address[static_cast<int>(b)] = fmt::format("(minic_arena + {})", buffer.arena_offset);
    }
  }

  std::string& h = entry.header;
  h = "// The whole model as one call, for C programs (written by `minic compile`).\n"
      "// minic_model_init loads weights.bin and allocates the intermediates; then each\n"
      "// minic_model_run takes the inputs and fills the outputs, in this order:\n";
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    h += fmt::format("//   inputs[{}]   {}\n", i, describe(plan.buffers[plan.inputs[i]]));
  }
  for (size_t k = 0; k < plan.outputs.size(); ++k) {
    h += fmt::format("//   outputs[{}]  {}\n", k, describe(plan.buffers[plan.outputs[k]]));
  }
  h += "#pragma once\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
       "// 0 on success; else the weights file could not be read or memory allocated.\n"
       "int minic_model_init(const char* weights_path);\n"
       "void minic_model_run(void* const* inputs, void* const* outputs);\n"
       "void minic_model_free(void);\n\n#ifdef __cplusplus\n}\n#endif\n";

  std::string& c = entry.source;
  size_t max_args = 1;
  for (const runtime::PlanStep& step : plan.steps) max_args = std::max(max_args, step.args.size());
  c = fmt::format(
      "// The execution plan of a model compiled by `minic compile`, as C11 (see model.h).\n"
      "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n"
      "#include \"kernels.h\"\n#include \"model.h\"\n\n"
      "static unsigned char* minic_weights;\nstatic unsigned char* minic_arena;\n\n"
      "int minic_model_init(const char* weights_path) {{\n"
      "  FILE* file = fopen(weights_path, \"rb\");\n"
      "  if (!file) return 1;\n"
      "  minic_weights = aligned_alloc(64, {0});\n"
      "  minic_arena = aligned_alloc(64, {1});\n"
      "  size_t read = minic_weights ? fread(minic_weights, 1, {2}, file) : 0;\n"
      "  fclose(file);\n"
      "  if (!minic_weights || !minic_arena) return 2;\n"
      "  return read == {2} ? 0 : 1;\n}}\n\n"
      "void minic_model_free(void) {{\n  free(minic_weights);\n  free(minic_arena);\n}}\n\n"
      "void minic_model_run(void* const* inputs, void* const* outputs) {{\n"
      "  void* args[{3}];\n",
      std::max<int64_t>(aligned(static_cast<int64_t>(entry.weights.size())), kBufferAlignment),
      std::max<int64_t>(aligned(plan.memory.arena_bytes), kBufferAlignment),
      entry.weights.size(), max_args);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const runtime::PlanStep& step = plan.steps[s];
    c += fmt::format("  /* step {}: {} ({}) */\n", s, step.kernel, step.op);
    for (size_t a = 0; a < step.args.size(); ++a) {
      c += fmt::format("  args[{}] = {};\n", a, address.at(step.args[a]));
    }
    c += fmt::format("  {}(args);\n", step.kernel);
  }
  for (size_t k = 0; k < plan.outputs.size(); ++k) {
    const runtime::PlanBuffer& buffer = plan.buffers[plan.outputs[k]];
    if (buffer.kind == BufferKind::output) continue;
    c += fmt::format("  memcpy(outputs[{}], {}, {});  /* an output that is an input or a constant */\n",
                     k, address.at(plan.outputs[k]), buffer.type.num_bytes());
  }
  c += "}\n";
  return entry;
}

}  // namespace minic
