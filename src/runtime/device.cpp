// The host CPU as a Device (include/minic/runtime/device.h). Course module 4.
//
// Chapter: docs/module4-schedules.md#6-the-executor-and-threads
#include "minic/runtime/device.h"

#include "minic/support/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace minic::runtime {

HostDevice::HostDevice(int threads) : pool_(threads) {}

std::string HostDevice::describe() const {
  return fmt::format("host CPU, {} thread{}", num_threads(), num_threads() == 1 ? "" : "s");
}

void* HostDevice::allocate(int64_t bytes, int64_t alignment) {
  if (alignment <= 0 || (alignment & (alignment - 1)) != 0) {
    fail("device memory alignment {} is not a power of two", alignment);
  }
  // aligned_alloc wants a size that is a multiple of the alignment, and never 0.
  int64_t rounded = std::max<int64_t>((bytes + alignment - 1) / alignment * alignment, alignment);
  void* memory = std::aligned_alloc(static_cast<size_t>(alignment), static_cast<size_t>(rounded));
  if (!memory) fail("out of host memory: {} bytes could not be allocated", bytes);
  std::memset(memory, 0, static_cast<size_t>(rounded));
  return memory;
}

void HostDevice::free(void* memory) { std::free(memory); }

void HostDevice::copy_to_device(void* device_destination, const void* host_source,
                                int64_t bytes) {
  if (bytes > 0) std::memcpy(device_destination, host_source, static_cast<size_t>(bytes));
}

void HostDevice::copy_to_host(void* host_destination, const void* device_source,
                              int64_t bytes) {
  if (bytes > 0) std::memcpy(host_destination, device_source, static_cast<size_t>(bytes));
}

void HostDevice::launch(const KernelCall& kernel, void** args) {
  ThreadPoolScope use(pool_);
  kernel(args);
}

void HostDevice::run_side_by_side(int64_t n, const std::function<void(int64_t)>& task) {
  pool_.parallel_for(n, [&task](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) task(k);
  });
}

double HostDevice::launch_timed(const KernelCall& kernel, void** args) {
  auto start = std::chrono::steady_clock::now();
  launch(kernel, args);
  std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  return took.count();
}

}  // namespace minic::runtime
