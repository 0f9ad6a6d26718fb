// The target's TargetMachine, LLVM's O3 pipeline, and text and object output. Course
// module 6.
//
// The steps from a loop IR module to machine code for the target's CPU:
//   1. build the LLVM module (codegen_func.cpp), with the host's triple and the target
//      machine's data layout, and every function carrying the target's CPU name and
//      features;
//   2. optimise it with the new pass manager's default pipeline (PassBuilder, O1..O3),
//      which sees the TargetMachine, so the vectorisers know the vector width and costs;
//   3. either print it (emit_llvm_text), or run the code generator to assembly or an
//      object file (emit_asm_text, emit_object), or, for the JIT (jit.cpp), compile each
//      function alone to an object file, several at once, each cached on disk
//      (function_objects): a model's kernels take LLVM most of a second at O3, and the
//      same kernels again take nothing.
// This is the only file that includes PassBuilder.h (a slow header: one TU pays for it).
//
// Chapter: docs/module6-llvm-cpu.md#4-optimisation-and-the-jit
#include "target.h"

#include "minic/support/error.h"
#include "minic/support/file_cache.h"

#include <fmt/format.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>

#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

namespace minic::codegen::llvm_backend {

namespace {

std::unique_ptr<llvm::TargetMachine> target_machine(const CpuTarget& cpu, int opt_level) {
  std::string triple = llvm::sys::getProcessTriple();
  std::string message;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, message);
  if (!target) fail("LLVM backend: no target for the host ({}): {}", triple, message);
  llvm::TargetOptions target_options;
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(triple, cpu.cpu, feature_string(cpu), target_options,
                                  llvm::Reloc::PIC_, std::nullopt, codegen_opt_level(opt_level)));
  if (!machine) fail("LLVM backend: cannot make a target machine for {} ({})", triple, cpu.cpu);
  return machine;
}

void optimize(llvm::Module& module, llvm::TargetMachine& machine, int opt_level) {
  if (opt_level <= 0) return;
  llvm::LoopAnalysisManager loop_analyses;
  llvm::FunctionAnalysisManager function_analyses;
  llvm::CGSCCAnalysisManager cgscc_analyses;
  llvm::ModuleAnalysisManager module_analyses;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  tuning.LoopUnrolling = true;
  llvm::PassBuilder builder(&machine, tuning);
  builder.registerModuleAnalyses(module_analyses);
  builder.registerCGSCCAnalyses(cgscc_analyses);
  builder.registerFunctionAnalyses(function_analyses);
  builder.registerLoopAnalyses(loop_analyses);
  builder.crossRegisterProxies(loop_analyses, function_analyses, cgscc_analyses,
                               module_analyses);
  llvm::OptimizationLevel level = opt_level == 1   ? llvm::OptimizationLevel::O1
                                  : opt_level == 2 ? llvm::OptimizationLevel::O2
                                                   : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager passes = builder.buildPerModuleDefaultPipeline(level);
  passes.run(module, module_analyses);
}

// `built` (optimised) as an assembly or object file for `machine`.
std::vector<char> emit_file(llvm::Module& built, llvm::TargetMachine& machine,
                            const LlvmOptions& options, llvm::CodeGenFileType kind) {
  llvm::SmallVector<char, 0> bytes;
  llvm::raw_svector_ostream stream(bytes);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, stream, nullptr, kind)) {
    fail("LLVM backend: target {} cannot emit this kind of file", options.target.str());
  }
  passes.run(built);
  return std::vector<char>(bytes.begin(), bytes.end());
}

std::vector<char> machine_code(const loop::LoopModule& module, const LlvmOptions& options,
                               llvm::CodeGenFileType kind) {
  initialize_llvm();
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> built = build_optimized_module(module, options, context);
  std::unique_ptr<llvm::TargetMachine> machine =
      target_machine(cpu_of(options), options.opt_level);
  return emit_file(*built, *machine, options, kind);
}

// The object code of one function (see function_objects): its unoptimised LLVM IR, which
// holds the target's CPU, features and data layout, with LLVM's version and the level, is
// the cache key.
std::vector<char> function_object(const loop::PrimFunc& func, const LlvmOptions& options,
                                  const FileCache& cache) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::TargetMachine> machine =
      target_machine(cpu_of(options), options.opt_level);
  loop::LoopModule single;
  single.functions.push_back(func);
  std::unique_ptr<llvm::Module> built = build_module(single, options, context);
  built->setTargetTriple(machine->getTargetTriple().str());
  built->setDataLayout(machine->createDataLayout());
  std::string key = fmt::format("LLVM {} at O{}\n", LLVM_VERSION_STRING, options.opt_level);
  llvm::raw_string_ostream ir(key);
  built->print(ir, nullptr);
  if (std::optional<std::vector<std::string>> cached = cache.read(ir.str(), {"o"})) {
    return std::vector<char>(cached->at(0).begin(), cached->at(0).end());
  }
  optimize(*built, *machine, options.opt_level);
  std::vector<char> object = emit_file(*built, *machine, options, llvm::CodeGenFileType::ObjectFile);
  cache.write(ir.str(), {{"o", std::string(object.begin(), object.end())}});
  return object;
}

}  // namespace

void initialize_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

std::string feature_string(const CpuTarget& cpu) {
  std::string features;
  for (const std::string& feature : cpu.features) {
    features += (features.empty() ? "" : ",") + feature;
  }
  return features;
}

llvm::CodeGenOptLevel codegen_opt_level(int opt_level) {
  return opt_level >= 3   ? llvm::CodeGenOptLevel::Aggressive
         : opt_level == 0 ? llvm::CodeGenOptLevel::None
                          : llvm::CodeGenOptLevel::Default;
}

const CpuTarget& cpu_of(const LlvmOptions& options) {
  if (!options.target.is_cpu()) {
    fail("target {}: the LLVM back end compiles for CPUs only", options.target.str());
  }
  return options.target.cpu();
}

std::unique_ptr<llvm::Module> build_optimized_module(const loop::LoopModule& module,
                                                     const LlvmOptions& options,
                                                     llvm::LLVMContext& context) {
  initialize_llvm();
  std::unique_ptr<llvm::TargetMachine> machine =
      target_machine(cpu_of(options), options.opt_level);
  std::unique_ptr<llvm::Module> built = build_module(module, options, context);
  built->setTargetTriple(machine->getTargetTriple().str());
  built->setDataLayout(machine->createDataLayout());
  optimize(*built, *machine, options.opt_level);
  return built;
}

std::vector<std::vector<char>> function_objects(const loop::LoopModule& module,
                                                const LlvmOptions& options) {
  initialize_llvm();
  const FileCache cache("llvm");
  const size_t count = module.functions.size();
  std::vector<std::vector<char>> objects(count);
  std::vector<std::exception_ptr> errors(count);
  // Each worker takes the next function until none is left; an exception (an Error naming
  // a function) is kept and rethrown here, the first in module order.
  std::atomic<size_t> next = 0;
  auto work = [&] {
    for (size_t f = next++; f < count; f = next++) {
      try {
        objects[f] = function_object(module.functions[f], options, cache);
      } catch (...) {
        errors[f] = std::current_exception();
      }
    }
  };
  const int threads = options.compile_threads > 0 ? options.compile_threads
                                                  : host_resources().cores;
  std::vector<std::thread> workers;
  for (size_t t = 1; t < std::min<size_t>(count, std::max(threads, 1)); ++t) {
    workers.emplace_back(work);
  }
  work();
  for (std::thread& worker : workers) worker.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  return objects;
}

}  // namespace minic::codegen::llvm_backend

namespace minic::codegen {

std::string emit_llvm_text(const loop::LoopModule& module, const LlvmOptions& options) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> built =
      llvm_backend::build_optimized_module(module, options, context);
  std::string text;
  llvm::raw_string_ostream stream(text);
  built->print(stream, nullptr);
  return stream.str();
}

std::string emit_asm_text(const loop::LoopModule& module, const LlvmOptions& options) {
  std::vector<char> text =
      llvm_backend::machine_code(module, options, llvm::CodeGenFileType::AssemblyFile);
  return std::string(text.begin(), text.end());
}

std::vector<char> emit_object(const loop::LoopModule& module, const LlvmOptions& options) {
  return llvm_backend::machine_code(module, options, llvm::CodeGenFileType::ObjectFile);
}

}  // namespace minic::codegen
