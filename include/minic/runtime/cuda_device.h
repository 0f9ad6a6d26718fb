// CudaDevice: a Device (device.h) on an NVIDIA GPU, through the CUDA driver API.
//
// Course module 6. The driver (libcuda.so.1) is opened with dlopen and its entry points
// resolved by name, never linked (cuda_driver.h): a minic binary runs where there is no
// GPU and says so. The device is GPU 0 with its primary context and one stream:
//
//   allocate / free        cuMemAlloc / cuMemFree (zeroed with cuMemsetD8)
//   copy_to_device / host  cuMemcpyHtoD / cuMemcpyDtoH (the stream first synchronised)
//   launch                 the step's KernelCall, which enqueues its kernels on stream()
//   launch_timed           the same between two CUDA events, then the events' time
//   synchronize            cuStreamSynchronize
//
// and what the CUDA back end's kernel calls need: load_module (a cubin, or PTX the driver
// compiles), function (a kernel of it) and launch_kernel (cuLaunchKernel on the stream,
// with the dynamic shared memory raised past 48 KB where a kernel asks for more).
//
// Chapter: docs/module6-cuda.md#running-a-model-on-the-gpu
#pragma once

#include "minic/runtime/device.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace minic::runtime {

class CudaDevice : public Device {
 public:
  // GPU 0. Error saying why there is none: no driver, no device, or a driver error.
  // Memory allocated on it lives in its primary context, released with the device.
  static std::unique_ptr<CudaDevice> open();
  ~CudaDevice() override;

  std::string describe() const override;
  bool shares_host_memory() const override { return false; }
  void* allocate(int64_t bytes, int64_t alignment) override;
  void free(void* memory) override;
  void copy_to_device(void* device_destination, const void* host_source,
                      int64_t bytes) override;
  void copy_to_host(void* host_destination, const void* device_source,
                    int64_t bytes) override;
  void launch(const KernelCall& kernel, void** args) override;
  double launch_timed(const KernelCall& kernel, void** args) override;
  void synchronize() override;

  // "sm_90": the architecture of the GPU's compute capability.
  std::string arch() const;
  // Loads a cubin or PTX image; kept until the device is destroyed.
  void load_module(const std::string& image);
  // The kernel `name` of a loaded module; Error naming it if none has it.
  void* function(const std::string& name) const;
  // Enqueues `function` on the stream; `params` point to the kernel's arguments.
  void launch_kernel(void* function, const std::array<int64_t, 3>& grid,
                     const std::array<int64_t, 3>& block, int64_t dynamic_shared_bytes,
                     void** params);

  struct Driver;  // the entry points (cuda_device.cpp)

 private:
  CudaDevice() = default;
  std::unique_ptr<Driver> driver_;
  int device_ = 0;
  void* context_ = nullptr;
  void* stream_ = nullptr;
  std::string name_;
  int major_ = 0, minor_ = 0;
  std::vector<void*> modules_;
};

}  // namespace minic::runtime
