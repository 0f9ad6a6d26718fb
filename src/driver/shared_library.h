// Kernels compiled ahead of time, loaded from a shared library. Private to src/driver.
//
// Course module 6 (ahead-of-time compilation). `minic compile` writes a model's kernels
// into a shared library (save_compiled_model); `minic run OUT_DIR` loads it with dlopen
// instead of generating the code again. The loaded library offers the same interface as
// the JIT's CompiledModule, so the executor does not know the difference.
//
// Chapter: docs/module6-llvm-cpu.md#5-ahead-of-time-minic-compile
#pragma once

#include "minic/codegen/llvm.h"

#include <memory>
#include <string>
#include <vector>

namespace minic {

// Opens `path` and finds every name of `kernels` in it; Error naming the library and the
// first kernel missing (a library written for another model or another minic).
std::unique_ptr<codegen::CompiledModule> load_kernel_library(
    const std::string& path, const std::vector<std::string>& kernels);

}  // namespace minic
