// The target machine and LLVM's optimisation pipeline (internal to src/codegen/llvm).
//
// Course module 6. target.cpp makes LLVM's TargetMachine for a CPU target and turns an
// LLVM module into optimised IR, assembly or an object file; jit.cpp hands the optimised
// module to ORC.
//
// Chapter: docs/module6-llvm-cpu.md#4-optimisation-and-the-jit
#pragma once

#include "codegen.h"

#include <llvm/Support/CodeGen.h>

#include <memory>
#include <vector>

namespace llvm {
class TargetMachine;
}

namespace minic::codegen::llvm_backend {

// Registers the host target with LLVM (once per process).
void initialize_llvm();

// The CPU's features as LLVM takes them: "+avx2,+fma,...".
std::string feature_string(const CpuTarget& cpu);

// The code generator's optimisation level for an opt_level of 0..3.
llvm::CodeGenOptLevel codegen_opt_level(int opt_level);

// options.target, checked to be a CPU target (Error naming it otherwise).
const CpuTarget& cpu_of(const LlvmOptions& options);

// Builds the module of `module` for options.target, verifies it and runs LLVM's pipeline
// at options.opt_level on it.
std::unique_ptr<llvm::Module> build_optimized_module(const loop::LoopModule& module,
                                                     const LlvmOptions& options,
                                                     llvm::LLVMContext& context);

// The object code of each function of `module`, in module order (ELF .o bytes): each
// function built, optimised and compiled alone, up to options.compile_threads of them at
// once, and read from the FileCache "llvm" (include/minic/support/file_cache.h) where
// its LLVM IR before optimisation was compiled before, at the same level with the same
// LLVM.
std::vector<std::vector<char>> function_objects(const loop::LoopModule& module,
                                                const LlvmOptions& options);

}  // namespace minic::codegen::llvm_backend
