// The host machine and LLVM's optimisation pipeline (internal to src/codegen/llvm).
//
// Course module 6. target.cpp knows the CPU the code runs on and turns an LLVM module into
// optimised IR, assembly or an object file; jit.cpp hands the optimised module to ORC.
#pragma once

#include "codegen.h"

#include <memory>

namespace llvm {
class TargetMachine;
}

namespace minic::codegen::llvm_backend {

// Registers the host target with LLVM (once per process).
void initialize_llvm();

// The host's CPU name and its features, sorted (so the IR text is deterministic).
HostTarget host_target();

// Builds the module of `module` for the host, verifies it and runs LLVM's pipeline at
// options.opt_level on it.
std::unique_ptr<llvm::Module> build_optimized_module(const loop::LoopModule& module,
                                                     const LlvmOptions& options,
                                                     llvm::LLVMContext& context);

}  // namespace minic::codegen::llvm_backend
