// Finding the CUDA driver at run time.
//
// Course module 6. minic never links libcuda: the same binary must run on a machine
// without a GPU. The driver library is opened with dlopen when it is first needed, and
// its absence is an answer ("compile-only"), not an error.
//
// Chapter: docs/module6-llvm-cpu.md#the-target
#pragma once

#include <optional>

namespace minic {

// The CUDA driver's version as cuDriverGetVersion reports it (12040 for 12.4), or
// nullopt when libcuda.so.1 cannot be opened or does not answer.
std::optional<int> cuda_driver_version();

}  // namespace minic
