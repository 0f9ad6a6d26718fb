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
//      object file (emit_asm_text, emit_object), or give it to the JIT (jit.cpp).
// This is the only file that includes PassBuilder.h (a slow header: one TU pays for it).
//
// Chapter: docs/module6-llvm-cpu.md#4-optimisation-and-the-jit
#include "target.h"

#include "minic/support/error.h"

#include <llvm/IR/LegacyPassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>

#include <mutex>

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

std::vector<char> machine_code(const loop::LoopModule& module, const LlvmOptions& options,
                               llvm::CodeGenFileType kind) {
  initialize_llvm();
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> built = build_optimized_module(module, options, context);
  std::unique_ptr<llvm::TargetMachine> machine =
      target_machine(cpu_of(options), options.opt_level);
  llvm::SmallVector<char, 0> bytes;
  llvm::raw_svector_ostream stream(bytes);
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, stream, nullptr, kind)) {
    fail("LLVM backend: target {} cannot emit this kind of file", options.target.str());
  }
  passes.run(*built);
  return std::vector<char>(bytes.begin(), bytes.end());
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
