// Ahead-of-time compilation: a compiled model written to a directory and loaded back.
// Course module 6 (ahead-of-time compilation).
//
// What is written, and why so: the kernels are the expensive part to make (LLVM at O3),
// so they are saved as an object file and a shared library. The execution plan is cheap to
// make and depends on the graph, so it is made again from the model when the directory is
// loaded: import, graph passes, lowering and schedules are deterministic and give the same
// kernels, whose names the library must hold (checked when it is loaded). Tuning records
// change the schedules, so a model compiled with records keeps a copy of them
// (records.jsonl) and is loaded with it: the loaded loop IR is then the library's. A C
// program can link the library and call the kernels through kernels.h.
//
// Chapter: docs/module6-llvm-cpu.md#5-ahead-of-time-minic-compile
#include "minic/driver/compile.h"

#include "aot_entry.h"
#include "minic/codegen/llvm.h"
#include "minic/driver/target.h"
#include "minic/frontend/onnx.h"
#include "minic/support/error.h"
#include "minic/support/file.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdlib>
#include <filesystem>

namespace minic {
namespace {

namespace fs = std::filesystem;

constexpr const char* kManifest = "minic_model.json";
constexpr const char* kLibrary = "libminic_kernels.so";
constexpr const char* kRecords = "records.jsonl";
constexpr const char* kFormat = "minic-compiled-model";
constexpr int kFormatVersion = 1;

std::string c_type(DType dtype) {
  switch (dtype) {
    case DType::f32: return "float";
    case DType::f64: return "double";
    case DType::i64: return "int64_t";
    case DType::i32: return "int32_t";
    case DType::boolean: return "uint8_t (bool)";
    default: return std::string(dtype_name(dtype));
  }
}

std::string kernels_header(const loop::LoopModule& kernels) {
  std::string text =
      "// The kernels of a model compiled by `minic compile`. Each takes the addresses of its\n"
      "// buffers, in the order listed, as an array: args[i] points at buffer i, laid out\n"
      "// row-major. Parallel loops call minic_parallel_for (minic_runtime.c has a serial\n"
      "// one for programs without minic's thread pool).\n"
      "#pragma once\n\n#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
      "void minic_parallel_for(void (*fn)(void* closure, int64_t begin, int64_t end),\n"
      "                        void* closure, int64_t n);\n";
  for (const loop::PrimFunc& func : kernels.functions) {
    text += fmt::format("\n// {}:\n", func.name);
    for (size_t i = 0; i < func.params.size(); ++i) {
      const loop::BufferNode& buffer = *func.params[i];
      text += fmt::format("//   args[{}]  {}  {} elements of {}\n", i, buffer.name,
                          num_elements(buffer.shape), c_type(buffer.dtype));
    }
    text += fmt::format("void {}(void** args);\n", codegen::kernel_symbol(func.name));
  }
  return text + "\n#ifdef __cplusplus\n}\n#endif\n";
}

const char* kSerialRuntime =
    "// A serial minic_parallel_for, for C programs that call minic's kernels without its\n"
    "// thread pool: the whole range runs on the calling thread.\n"
    "#include <stdint.h>\n\n"
    "void minic_parallel_for(void (*fn)(void* closure, int64_t begin, int64_t end),\n"
    "                        void* closure, int64_t n) {\n"
    "  if (n > 0) fn(closure, 0, n);\n"
    "}\n";

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

void save_compiled_model(const CompiledModel& model, const std::string& onnx_path,
                         const std::string& dir, const CompileOptions& options) {
  fs::create_directories(dir);
  fs::copy_file(onnx_path, fs::path(dir) / "model.onnx", fs::copy_options::overwrite_existing);
  const fs::path records_path = fs::path(dir) / kRecords;
  if (!options.records.empty() &&
      !(fs::exists(records_path) && fs::equivalent(options.records, records_path))) {
    fs::copy_file(options.records, records_path, fs::copy_options::overwrite_existing);
  }

  codegen::LlvmOptions llvm_options;
  llvm_options.target = options.target;
  llvm_options.opt_level = options.opt_level;
  llvm_options.fast_math = options.fast_math;
  std::vector<char> object = codegen::emit_object(model.kernels(), llvm_options);
  const fs::path object_path = fs::path(dir) / "kernels.o";
  write_file(object_path.string(), std::string(object.begin(), object.end()));
  write_file((fs::path(dir) / "kernels.h").string(), kernels_header(model.kernels()));
  write_file((fs::path(dir) / "minic_runtime.c").string(), kSerialRuntime);
  // The whole model as one C call, where every step is compiled code.
  ModelEntry entry = model_entry(model);
  std::string sources = shell_quote(object_path.string());
  if (entry.complete) {
    write_file((fs::path(dir) / "model.h").string(), entry.header);
    write_file((fs::path(dir) / "model.c").string(), entry.source);
    write_file((fs::path(dir) / "weights.bin").string(), entry.weights);
    sources += " " + shell_quote((fs::path(dir) / "model.c").string()) + " -I " +
               shell_quote(dir);
  }
  const fs::path library_path = fs::path(dir) / kLibrary;
  std::string link = fmt::format("cc -shared -fPIC -O2 -o {} {}",
                                 shell_quote(library_path.string()), sources);
  if (std::system(link.c_str()) != 0) {
    fail("linking {} failed (`{}`): minic compile needs a C compiler, cc", library_path.string(),
         link);
  }

  nlohmann::ordered_json manifest;
  manifest["format"] = kFormat;
  manifest["version"] = kFormatVersion;
  manifest["model"] = "model.onnx";
  manifest["library"] = kLibrary;
  manifest["graph_passes"] = options.graph_passes;
  manifest["target"] = options.target.str();
  if (!options.records.empty()) manifest["records"] = kRecords;
  manifest["kernels"] = model.code().function_names();
  manifest["model_entry"] = entry.complete ? "model.h" : "none: " + entry.reason;
  write_file((fs::path(dir) / kManifest).string(), manifest.dump(2) + "\n");
}

bool is_compiled_model_dir(const std::string& dir) {
  return fs::is_directory(dir) && fs::exists(fs::path(dir) / kManifest);
}

std::unique_ptr<CompiledModel> load_compiled_model(const std::string& dir, int threads) {
  const fs::path manifest_path = fs::path(dir) / kManifest;
  if (!fs::exists(manifest_path)) {
    fail("{} is not a compiled model: it has no {} (write one with `minic compile`)", dir,
         kManifest);
  }
  nlohmann::json manifest;
  try {
    manifest = nlohmann::json::parse(read_file(manifest_path.string()));
    if (manifest.at("format") != kFormat || manifest.at("version") != kFormatVersion) {
      fail("{}: format {} version {}, expected {} version {}", manifest_path.string(),
           manifest.at("format").dump(), manifest.at("version").dump(), kFormat, kFormatVersion);
    }
  } catch (const nlohmann::json::exception& error) {
    fail("{}: not a manifest minic wrote: {}", manifest_path.string(), error.what());
  }
  CompileOptions options;
  options.threads = threads;
  options.graph_passes = manifest.at("graph_passes").get<std::vector<std::string>>();
  // A manifest that names no target is for the host.
  if (manifest.contains("target")) {
    options.target = parse_target(manifest.at("target").get<std::string>());
  }
  options.kernel_library = (fs::path(dir) / manifest.at("library").get<std::string>()).string();
  if (manifest.contains("records")) {
    options.records = (fs::path(dir) / manifest.at("records").get<std::string>()).string();
  }
  const fs::path model = fs::path(dir) / manifest.at("model").get<std::string>();
  return compile_model(import_onnx(model.string()), options);
}

}  // namespace minic
