// Devices: where a compiled model's buffers live and its compiled kernels run.
//
// Course module 4 (runtime) and module 6 (hardware back ends). The executor (executor.h)
// runs an execution plan through a Device, which offers what running a plan needs:
//
//   1. memory     allocate / free: device memory for the arena of intermediates (and, on
//                 a device with memory of its own, for inputs, outputs and constants);
//   2. copies     copy_to_device / copy_to_host between host memory and device memory;
//   3. launch     run one compiled step on its arguments, the device addresses of its
//                 buffers in parameter order;
//   4. sync       synchronize: wait until every launch so far has finished;
//   5. timing     launch_timed: a launch that also says how long the kernel ran, which
//                 is what `minic run --profile` shows.
//
// HostDevice, below, is the CPU. Its memory is host memory (shares_host_memory), so the
// executor binds the caller's tensors and the constants where they are and copies
// nothing; a launch runs the kernel on the calling thread, its parallel loops on the
// device's own ThreadPool, installed for the call (thread_pool.h).
//
// How a CUDA device plugs in (over the driver of cuda_driver.h): allocate and free are
// cuMemAlloc / cuMemFree, the copies cuMemcpyHtoD / cuMemcpyDtoH, synchronize is
// cuStreamSynchronize on the device's stream, and launch_timed records two events around
// the launch and waits for the second. A compiled step's KernelCall comes from the CUDA
// back end and enqueues its kernel (cuLaunchKernel with the grid, the block and the
// arguments) on that stream, so launch just calls it. shares_host_memory() is false, and
// the executor then copies (executor.cpp): the constants once, when it is made; the
// inputs before the steps and the outputs after them, on every run; and around a step
// that runs a reference kernel -- reference kernels run on the host, on host memory --
// it synchronises, copies the step's arguments to host memory, runs the kernel there and
// copies the buffers the step writes back.
//
// Chapter: docs/module4-schedules.md#6-the-executor-and-threads
#pragma once

#include "minic/runtime/thread_pool.h"

#include <cstdint>
#include <functional>
#include <string>

namespace minic::runtime {

// One step's kernel behind the one calling convention of compiled code: the addresses of
// its buffers in parameter order.
using KernelCall = std::function<void(void** args)>;

class Device {
 public:
  virtual ~Device() = default;

  // "host CPU, 4 threads": what runs the model, for the CLI and errors.
  virtual std::string describe() const = 0;
  // True where device memory is host memory: a host pointer is a device address, and the
  // executor then binds host tensors in place instead of copying them.
  virtual bool shares_host_memory() const = 0;

  // `bytes` of device memory whose address is a multiple of `alignment` (a power of two),
  // zeroed; never null (an Error when there is not enough). free takes what allocate
  // gave, once.
  virtual void* allocate(int64_t bytes, int64_t alignment) = 0;
  virtual void free(void* memory) = 0;

  virtual void copy_to_device(void* device_destination, const void* host_source,
                              int64_t bytes) = 0;
  virtual void copy_to_host(void* host_destination, const void* device_source,
                            int64_t bytes) = 0;

  // Runs (or enqueues) a compiled step's kernel on `args`, device addresses.
  virtual void launch(const KernelCall& kernel, void** args) = 0;
  // The same, waiting for the kernel to finish; returns how long it ran, in milliseconds.
  virtual double launch_timed(const KernelCall& kernel, void** args) = 0;
  // Returns when every launch so far has finished.
  virtual void synchronize() = 0;

  // Runs task(0) .. task(n - 1), at the same time where the device has host threads to
  // run them on (the executor's steps side by side); by default one after another.
  virtual void run_side_by_side(int64_t n, const std::function<void(int64_t)>& task) {
    for (int64_t k = 0; k < n; ++k) task(k);
  }
};

// The host CPU: memory from the C++ allocator, copies by memcpy, kernels on the calling
// thread with the parallel loops on a pool of `threads` threads (0: every core).
class HostDevice : public Device {
 public:
  explicit HostDevice(int threads = 0);

  std::string describe() const override;
  bool shares_host_memory() const override { return true; }
  void* allocate(int64_t bytes, int64_t alignment) override;
  void free(void* memory) override;
  void copy_to_device(void* device_destination, const void* host_source,
                      int64_t bytes) override;
  void copy_to_host(void* host_destination, const void* device_source,
                    int64_t bytes) override;
  // Calls the kernel on this thread, with the device's pool installed for the call.
  void launch(const KernelCall& kernel, void** args) override;
  // The same, timed by a monotonic clock.
  double launch_timed(const KernelCall& kernel, void** args) override;
  // Launches run to the end before they return: nothing to wait for.
  void synchronize() override {}
  // The tasks share the pool's threads, one at a time each; a parallel loop inside a task
  // then runs on its task's thread alone (thread_pool.h).
  void run_side_by_side(int64_t n, const std::function<void(int64_t)>& task) override;

  int num_threads() const { return pool_.num_threads(); }

 private:
  ThreadPool pool_;
};

}  // namespace minic::runtime
