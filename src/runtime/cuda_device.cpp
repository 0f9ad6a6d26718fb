// CudaDevice: the CUDA driver API behind the Device interface (see
// include/minic/runtime/cuda_device.h). Course module 6.
//
// The entry points are resolved by their exported names with dlsym, the versioned ones
// (cuMemAlloc_v2, ...) by the names cuda.h maps the plain ones to, so the calls have the
// ABI of the current driver. Every call's result is checked: a failure is an Error with
// the call and the driver's message.
//
// Chapter: docs/module6-cuda.md#running-a-model-on-the-gpu
#include "minic/runtime/cuda_device.h"

#include "minic/support/error.h"

#include <fmt/format.h>

#include <dlfcn.h>

#include <algorithm>

namespace minic::runtime {

using CUresult = int;
using CUdeviceptr = unsigned long long;

struct CudaDevice::Driver {
  void* library = nullptr;
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*error_string)(CUresult, const char**) = nullptr;
  CUresult (*device_count)(int*) = nullptr;
  CUresult (*device_get)(int*, int) = nullptr;
  CUresult (*device_name)(char*, int, int) = nullptr;
  CUresult (*device_attribute)(int*, int, int) = nullptr;
  CUresult (*primary_retain)(void**, int) = nullptr;
  CUresult (*primary_release)(int) = nullptr;
  CUresult (*set_current)(void*) = nullptr;
  CUresult (*stream_create)(void**, unsigned) = nullptr;
  CUresult (*stream_destroy)(void*) = nullptr;
  CUresult (*stream_synchronize)(void*) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*mem_free)(CUdeviceptr) = nullptr;
  CUresult (*memset_d8)(CUdeviceptr, unsigned char, size_t) = nullptr;
  CUresult (*memcpy_htod)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*memcpy_dtoh)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*module_load)(void**, const void*) = nullptr;
  CUresult (*module_unload)(void*) = nullptr;
  CUresult (*module_function)(void**, void*, const char*) = nullptr;
  CUresult (*func_set_attribute)(void*, int, int) = nullptr;
  CUresult (*launch)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                     void*, void**, void**) = nullptr;
  CUresult (*event_create)(void**, unsigned) = nullptr;
  CUresult (*event_record)(void*, void*) = nullptr;
  CUresult (*event_synchronize)(void*) = nullptr;
  CUresult (*event_elapsed)(float*, void*, void*) = nullptr;
  CUresult (*event_destroy)(void*) = nullptr;

  // Error naming the call and the driver's message unless `result` is CUDA_SUCCESS (0).
  void check(CUresult result, const char* call) const {
    if (result == 0) return;
    const char* message = nullptr;
    if (error_string) error_string(result, &message);
    fail("CUDA driver: {} failed: {} (error {})", call, message ? message : "unknown", result);
  }
};

namespace {

constexpr int kComputeCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kComputeCapabilityMinor = 76;
constexpr int kMaxDynamicSharedBytes = 8;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
constexpr int64_t kStaticSharedLimit = 48 * 1024;

template <typename Fn>
void resolve(void* library, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(library, name));
  if (!fn) fail("CUDA driver: libcuda.so.1 has no {}", name);
}

std::unique_ptr<CudaDevice::Driver> open_driver() {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) fail("no CUDA driver (libcuda.so.1 could not be opened): {}", dlerror());
  auto d = std::make_unique<CudaDevice::Driver>();
  d->library = library;
  resolve(library, "cuInit", d->init);
  resolve(library, "cuGetErrorString", d->error_string);
  resolve(library, "cuDeviceGetCount", d->device_count);
  resolve(library, "cuDeviceGet", d->device_get);
  resolve(library, "cuDeviceGetName", d->device_name);
  resolve(library, "cuDeviceGetAttribute", d->device_attribute);
  resolve(library, "cuDevicePrimaryCtxRetain", d->primary_retain);
  resolve(library, "cuDevicePrimaryCtxRelease_v2", d->primary_release);
  resolve(library, "cuCtxSetCurrent", d->set_current);
  resolve(library, "cuStreamCreate", d->stream_create);
  resolve(library, "cuStreamDestroy_v2", d->stream_destroy);
  resolve(library, "cuStreamSynchronize", d->stream_synchronize);
  resolve(library, "cuMemAlloc_v2", d->mem_alloc);
  resolve(library, "cuMemFree_v2", d->mem_free);
  resolve(library, "cuMemsetD8_v2", d->memset_d8);
  resolve(library, "cuMemcpyHtoD_v2", d->memcpy_htod);
  resolve(library, "cuMemcpyDtoH_v2", d->memcpy_dtoh);
  resolve(library, "cuModuleLoadData", d->module_load);
  resolve(library, "cuModuleUnload", d->module_unload);
  resolve(library, "cuModuleGetFunction", d->module_function);
  resolve(library, "cuFuncSetAttribute", d->func_set_attribute);
  resolve(library, "cuLaunchKernel", d->launch);
  resolve(library, "cuEventCreate", d->event_create);
  resolve(library, "cuEventRecord", d->event_record);
  resolve(library, "cuEventSynchronize", d->event_synchronize);
  resolve(library, "cuEventElapsedTime", d->event_elapsed);
  resolve(library, "cuEventDestroy_v2", d->event_destroy);
  return d;
}

CUdeviceptr device_pointer(const void* address) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(address));
}

}  // namespace

std::unique_ptr<CudaDevice> CudaDevice::open() {
  std::unique_ptr<CudaDevice> device(new CudaDevice());
  device->driver_ = open_driver();
  const Driver& d = *device->driver_;
  d.check(d.init(0), "cuInit");
  int count = 0;
  d.check(d.device_count(&count), "cuDeviceGetCount");
  if (count == 0) fail("the CUDA driver sees no GPU");
  d.check(d.device_get(&device->device_, 0), "cuDeviceGet");
  char name[256] = {};
  d.check(d.device_name(name, sizeof name, device->device_), "cuDeviceGetName");
  device->name_ = name;
  d.check(d.device_attribute(&device->major_, kComputeCapabilityMajor, device->device_),
          "cuDeviceGetAttribute");
  d.check(d.device_attribute(&device->minor_, kComputeCapabilityMinor, device->device_),
          "cuDeviceGetAttribute");
  d.check(d.primary_retain(&device->context_, device->device_), "cuDevicePrimaryCtxRetain");
  d.check(d.set_current(device->context_), "cuCtxSetCurrent");
  d.check(d.stream_create(&device->stream_, 0), "cuStreamCreate");
  return device;
}

CudaDevice::~CudaDevice() {
  if (!driver_) return;
  // Errors are not thrown from a destructor: a failing driver at exit changes nothing.
  for (void* module : modules_) driver_->module_unload(module);
  if (stream_) driver_->stream_destroy(stream_);
  if (context_) driver_->primary_release(device_);
}

std::string CudaDevice::describe() const {
  return fmt::format("GPU 0: {} ({})", name_, arch());
}

std::string CudaDevice::arch() const { return fmt::format("sm_{}{}", major_, minor_); }

void* CudaDevice::allocate(int64_t bytes, int64_t alignment) {
  if (alignment > 256) fail("CUDA memory is 256-byte aligned; {} bytes asked for", alignment);
  CUdeviceptr memory = 0;
  size_t size = static_cast<size_t>(std::max<int64_t>(bytes, 1));
  driver_->check(driver_->mem_alloc(&memory, size), "cuMemAlloc");
  driver_->check(driver_->memset_d8(memory, 0, size), "cuMemsetD8");
  return reinterpret_cast<void*>(static_cast<uintptr_t>(memory));
}

void CudaDevice::free(void* memory) {
  if (memory) driver_->check(driver_->mem_free(device_pointer(memory)), "cuMemFree");
}

void CudaDevice::copy_to_device(void* device_destination, const void* host_source,
                                int64_t bytes) {
  if (bytes == 0) return;
  synchronize();
  driver_->check(driver_->memcpy_htod(device_pointer(device_destination), host_source,
                                      static_cast<size_t>(bytes)),
                 "cuMemcpyHtoD");
}

void CudaDevice::copy_to_host(void* host_destination, const void* device_source,
                              int64_t bytes) {
  if (bytes == 0) return;
  synchronize();
  driver_->check(driver_->memcpy_dtoh(host_destination, device_pointer(device_source),
                                      static_cast<size_t>(bytes)),
                 "cuMemcpyDtoH");
}

void CudaDevice::launch(const KernelCall& kernel, void** args) { kernel(args); }

double CudaDevice::launch_timed(const KernelCall& kernel, void** args) {
  void* start = nullptr;
  void* stop = nullptr;
  driver_->check(driver_->event_create(&start, 0), "cuEventCreate");
  driver_->check(driver_->event_create(&stop, 0), "cuEventCreate");
  driver_->check(driver_->event_record(start, stream_), "cuEventRecord");
  kernel(args);
  driver_->check(driver_->event_record(stop, stream_), "cuEventRecord");
  driver_->check(driver_->event_synchronize(stop), "cuEventSynchronize");
  float milliseconds = 0;
  driver_->check(driver_->event_elapsed(&milliseconds, start, stop), "cuEventElapsedTime");
  driver_->event_destroy(start);
  driver_->event_destroy(stop);
  return milliseconds;
}

void CudaDevice::synchronize() {
  driver_->check(driver_->stream_synchronize(stream_), "cuStreamSynchronize");
}

void CudaDevice::load_module(const std::string& image) {
  void* module = nullptr;
  driver_->check(driver_->module_load(&module, image.data()), "cuModuleLoadData");
  modules_.push_back(module);
}

void* CudaDevice::function(const std::string& name) const {
  for (void* module : modules_) {
    void* function = nullptr;
    if (driver_->module_function(&function, module, name.c_str()) == 0) return function;
  }
  fail("CUDA: no loaded module has the kernel {}", name);
}

void CudaDevice::launch_kernel(void* function, const std::array<int64_t, 3>& grid,
                               const std::array<int64_t, 3>& block, int64_t dynamic_shared_bytes,
                               void** params) {
  if (dynamic_shared_bytes > kStaticSharedLimit) {
    driver_->check(driver_->func_set_attribute(function, kMaxDynamicSharedBytes,
                                               static_cast<int>(dynamic_shared_bytes)),
                   "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  }
  auto u = [](int64_t v) { return static_cast<unsigned>(v); };
  driver_->check(driver_->launch(function, u(grid[0]), u(grid[1]), u(grid[2]), u(block[0]),
                                 u(block[1]), u(block[2]), u(dynamic_shared_bytes), stream_,
                                 params, nullptr),
                 "cuLaunchKernel");
}

}  // namespace minic::runtime
