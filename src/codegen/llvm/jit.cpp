// Running compiled kernels in-process: ORC LLJIT, one JIT per CompiledModule.
// Course module 6.
//
// compile_llvm in four steps:
//   1. compile each function to an object file, several at once, or read it from the
//      cache on disk (function_objects, target.cpp);
//   2. make an LLJIT for the target's CPU and features;
//   3. define minic_parallel_for in the JIT's main library as the function the caller
//      gave (LlvmOptions::parallel_for, else a serial loop): JIT code finds nothing of the
//      minic executable by itself (libc and libm it finds in the process: aligned_alloc,
//      free, erf, ...);
//   4. add the objects and look up every entry point, which links them in memory.
// The text forms (llvm_ir, assembly) are made again from the loop IR when asked for: the
// same input gives the same text, and the JIT need not keep a copy of its module.
//
// Chapter: docs/module6-llvm-cpu.md#4-optimisation-and-the-jit
#include "target.h"

#include "minic/support/error.h"

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/TargetParser/Host.h>

#include <map>

namespace minic::codegen {

namespace {

// minic_parallel_for when the caller gives none: the whole range in one call.
void run_serially(void (*fn)(void* closure, int64_t begin, int64_t end), void* closure,
                  int64_t n) {
  if (n > 0) fn(closure, 0, n);
}

// The value of an llvm::Expected, or an Error saying what `step` was.
template <typename T>
T take(llvm::Expected<T> value, const char* step) {
  if (!value) fail("LLVM backend: {}: {}", step, llvm::toString(value.takeError()));
  return std::move(*value);
}

void check(llvm::Error error, const char* step) {
  if (error) fail("LLVM backend: {}: {}", step, llvm::toString(std::move(error)));
}

class JitModule : public CompiledModule {
 public:
  JitModule(const loop::LoopModule& module, const LlvmOptions& options)
      : module_(module), options_(options) {
    llvm_backend::initialize_llvm();
    // 1. The object code.
    std::vector<std::vector<char>> objects = llvm_backend::function_objects(module, options);
    // 2. The JIT.
    const CpuTarget& cpu = llvm_backend::cpu_of(options);
    llvm::orc::JITTargetMachineBuilder machine_builder{llvm::Triple(llvm::sys::getProcessTriple())};
    machine_builder.setCPU(cpu.cpu);
    machine_builder.addFeatures(cpu.features);
    machine_builder.setCodeGenOptLevel(llvm_backend::codegen_opt_level(options.opt_level));
    jit_ = take(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(machine_builder))
                    .create(),
                "creating the JIT");
    // 3. The entry point for parallel loops.
    ParallelForFn parallel_for = options.parallel_for ? options.parallel_for : &run_serially;
    llvm::orc::SymbolMap runtime;
    runtime[jit_->mangleAndIntern("minic_parallel_for")] = llvm::orc::ExecutorSymbolDef(
        llvm::orc::ExecutorAddr::fromPtr(parallel_for),
        llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
    check(jit_->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(runtime))),
          "defining minic_parallel_for");
    // 4. The code, and every entry point.
    for (size_t f = 0; f < objects.size(); ++f) {
      llvm::StringRef bytes(objects[f].data(), objects[f].size());
      check(jit_->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(
                bytes, module.functions[f].name + ".o")),
            "adding the object code");
    }
    for (const loop::PrimFunc& func : module.functions) {
      llvm::orc::ExecutorAddr address = take(jit_->lookup(kernel_symbol(func.name)), "compiling");
      functions_[func.name] = address.toPtr<KernelFn>();
      names_.push_back(func.name);
    }
  }

  KernelFn find(const std::string& name) const override {
    auto it = functions_.find(name);
    if (it == functions_.end()) fail("the compiled module has no function @{}", name);
    return it->second;
  }

  std::vector<std::string> function_names() const override { return names_; }

  std::string llvm_ir() const override { return emit_llvm_text(module_, options_); }

  std::string assembly() const override { return emit_asm_text(module_, options_); }

 private:
  loop::LoopModule module_;
  LlvmOptions options_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::map<std::string, KernelFn> functions_;
  std::vector<std::string> names_;
};

}  // namespace

std::unique_ptr<CompiledModule> compile_llvm(const loop::LoopModule& module,
                                             const LlvmOptions& options) {
  return std::make_unique<JitModule>(module, options);
}

}  // namespace minic::codegen
