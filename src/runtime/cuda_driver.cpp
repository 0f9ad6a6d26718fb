// Finding the CUDA driver at run time. Course module 6.
//
// libcuda.so.1 is opened with dlopen(RTLD_NOW | RTLD_LOCAL) and cuDriverGetVersion is looked
// up with dlsym, so nothing in minic's binary refers to the driver. cuDriverGetVersion may
// be called before cuInit, which keeps this probe free of side effects on the GPU.
//
// Chapter: docs/module6-llvm-cpu.md#the-target
#include "minic/runtime/cuda_driver.h"

#include <dlfcn.h>

namespace minic {

std::optional<int> cuda_driver_version() {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return std::nullopt;
  // CUresult cuDriverGetVersion(int* driverVersion); CUDA_SUCCESS is 0.
  using GetVersionFn = int (*)(int*);
  auto get_version = reinterpret_cast<GetVersionFn>(dlsym(library, "cuDriverGetVersion"));
  std::optional<int> version;
  int value = 0;
  if (get_version != nullptr && get_version(&value) == 0) version = value;
  dlclose(library);
  return version;
}

}  // namespace minic
