// `minic compile MODEL.onnx -o OUT_DIR`: ahead-of-time compilation. Course module 6.
//
// Compiles the model as `minic run` does (graph passes, lowering, default schedules, loop
// passes, LLVM at O3), for this machine's CPU or the one --target names, and writes the
// kernels into OUT_DIR as an object file, a shared library and a C header, beside a copy
// of the model and a manifest (include/minic/driver/compile.h, save_compiled_model).
// `minic run OUT_DIR` and `minic bench OUT_DIR` then load the kernels instead of
// generating them again. With --records, kernels with a tuning record get its schedule,
// and the directory keeps a copy of the records.
//
// With a CUDA target (`--target cuda`) it writes the CUDA C, NVRTC's PTX and cubin and the
// launch table instead (save_cuda_model); no CUDA driver is needed.
//
// Chapter: docs/module6-llvm-cpu.md#5-ahead-of-time-minic-compile
#include "backend.h"
#include "commands.h"
#include "common_options.h"
#include "graph_input.h"

#include "minic/driver/compile.h"
#include "minic/frontend/onnx.h"

#include <fmt/format.h>

#include <chrono>
#include <memory>

namespace minic::cli {
namespace {

struct CompileCommandOptions {
  std::string model;
  std::string output;
  CommonOptions common;  // --passes, --records, --target
};

int run_compile(const CompileCommandOptions& options) {
  auto start = std::chrono::steady_clock::now();
  CompileOptions compile_options;
  compile_options.target = options.common.parsed_target();
  compile_options.graph_passes = parse_pass_list(options.common.passes);
  compile_options.records = options.common.records;
  std::unique_ptr<CompiledModel> model = compile_model(import_onnx(options.model), compile_options);
  const bool cuda = compile_options.target.is_cuda();
  if (cuda) {
    save_cuda_model(*model, options.model, options.output);
  } else {
    save_compiled_model(*model, options.model, options.output, compile_options);
  }
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const CompileStats& stats = model->stats();
  std::string functions = stats.functions < stats.compiled_kernels
                              ? fmt::format(" as {} function{}", stats.functions,
                                            stats.functions == 1 ? "" : "s")
                              : "";
  for (const auto& [backend, count] : stats.backend_kernels) {
    functions += fmt::format(", {} by {}", count, backend);
  }
  fmt::print("compiled {} for {} in {:.0f} ms: {} kernels ({} compiled{}{}{})\n", options.model,
             compile_options.target.str(), ms, stats.kernels, stats.compiled_kernels, functions,
             stats.reference_ops.empty() ? "" : ", reference kernels for ",
             fmt::join(stats.reference_ops, ", "));
  if (!options.common.records.empty()) fmt::print("{}\n", records_summary(stats));
  if (cuda) {
    const std::string arch = compile_options.target.cuda().arch;
    fmt::print("wrote {}: model.onnx, kernels.cu, kernels.{}.ptx, kernels.{}.cubin, "
               "cuda_launches.json\n",
               options.output, arch, arch);
    return 0;
  }
  fmt::print("wrote {}: model.onnx, kernels.o, libminic_kernels.so, kernels.h, minic_runtime.c, "
             "minic_model.json{}{}\n",
             options.output,
             stats.reference_ops.empty() ? ", model.h, model.c, weights.bin"
                                         : " (no model.h: reference kernels are not C code)",
             options.common.records.empty() ? "" : ", records.jsonl");
  return 0;
}

}  // namespace

Command add_compile_command(CLI::App& app) {
  auto options = std::make_shared<CompileCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "compile", "Compile a model ahead of time into a directory of kernels (a shared library)");
  sub->add_option("model", options->model, "The ONNX model file")->required();
  sub->add_option("-o,--output", options->output, "The directory to write")->required();
  add_common_options(sub, options->common,
                     {CommonOption::passes, CommonOption::records, CommonOption::target,
                      CommonOption::custom_ops});
  sub->footer("Run or time the result with `minic run OUT_DIR` and `minic bench OUT_DIR`.");
  return {sub, [options] { return run_compile(*options); }};
}

}  // namespace minic::cli
