// `minic --version`: what minic was built with and what it finds at run time.
// Course module 1.
//
// The versions of minic, LLVM and the CUDA toolkit are fixed at build time (compile
// definitions from CMakeLists.txt); the CUDA driver is looked for now, with dlopen, so
// the same binary says "compile-only" on a machine without a GPU. Last, the host target:
// what code is compiled for without --target (include/minic/target/target.h).
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#include "commands.h"

#include "minic/codegen/llvm.h"
#include "minic/runtime/cuda_driver.h"

#include <fmt/format.h>

namespace minic::cli {

std::string version_text() {
  std::string text = fmt::format("minic {}\nLLVM: {}\nCUDA toolkit: {}\n", MINIC_VERSION,
                                 MINIC_LLVM_VERSION, MINIC_CUDA_TOOLKIT_VERSION);
  std::optional<int> driver = cuda_driver_version();
  if (driver) {
    // cuDriverGetVersion encodes 12.4 as 12040.
    text += fmt::format("CUDA driver: {}.{}", *driver / 1000, (*driver % 1000) / 10);
  } else {
    text += "CUDA driver: not found (compile-only)";
  }
  text += "\nhost target: " + codegen::host_target().describe();
  return text;
}

}  // namespace minic::cli
