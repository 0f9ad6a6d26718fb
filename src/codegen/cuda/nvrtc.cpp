// compile_cuda: CUDA C → PTX and cubin with NVRTC, opened at run time (see
// include/minic/codegen/cuda.h). Course module 6.
//
// minic declares the few NVRTC entry points it calls itself (their C signatures are
// stable across CUDA releases) and resolves them with dlsym, so neither nvrtc.h nor the
// library is needed to build minic, and a binary without NVRTC beside it still runs.
// Where NVRTC is looked for, in order:
//   1. $MINIC_NVRTC, the path of libnvrtc.so.13 (the tests set it: tests/CMakeLists.txt);
//   2. libnvrtc.so.13 on the loader's path (LD_LIBRARY_PATH, the ld.so cache);
//   3. $CUDA_HOME/lib and lib64, then /usr/local/cuda/lib and lib64.
// The PyPI wheel nvidia-cuda-nvrtc puts it in site-packages/nvidia/cu13/lib/: point
// MINIC_NVRTC there.
//
// One compile: nvrtcCreateProgram, nvrtcCompileProgram with --gpu-architecture=sm_XX
// (which makes a cubin and its PTX), then the log, the PTX and the cubin are copied out.
// Compiled programs are kept for the process, keyed by NVRTC's version, their options and
// their source (the conformance runner compiles the same small kernels many times), and
// on disk (kernel_cache.h), so that running a model again does not compile it again.
//
// Chapter: docs/module6-cuda.md#nvrtc-cuda-c-to-a-cubin
#include "minic/codegen/cuda.h"

#include "kernel_cache.h"

#include "minic/support/error.h"

#include <fmt/format.h>

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

namespace minic::codegen {
namespace {

// NVRTC's C interface, as far as minic uses it (nvrtc.h of CUDA 12 and 13).
using nvrtcResult = int;
using nvrtcProgram = struct NvrtcProgramHandle*;
constexpr nvrtcResult kNvrtcSuccess = 0;

struct Nvrtc {
  std::string path;
  std::string version_text;  // "13.0", read when the library is opened
  nvrtcResult (*version)(int* major, int* minor) = nullptr;
  const char* (*error_string)(nvrtcResult) = nullptr;
  nvrtcResult (*create)(nvrtcProgram*, const char* source, const char* name, int num_headers,
                        const char* const* headers, const char* const* include_names) = nullptr;
  nvrtcResult (*destroy)(nvrtcProgram*) = nullptr;
  nvrtcResult (*compile)(nvrtcProgram, int num_options, const char* const* options) = nullptr;
  nvrtcResult (*log_size)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*log)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*ptx_size)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*ptx)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*cubin_size)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*cubin)(nvrtcProgram, char*) = nullptr;
};

std::vector<std::string> candidate_paths() {
  std::vector<std::string> paths;
  if (const char* path = std::getenv("MINIC_NVRTC"); path && *path) paths.push_back(path);
  paths.push_back("libnvrtc.so.13");
  std::vector<std::string> roots;
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) roots.push_back(home);
  roots.push_back("/usr/local/cuda");
  for (const std::string& root : roots) {
    paths.push_back(root + "/lib/libnvrtc.so.13");
    paths.push_back(root + "/lib64/libnvrtc.so.13");
  }
  return paths;
}

template <typename Fn>
bool resolve(void* library, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(library, name));
  return fn != nullptr;
}

// NVRTC, opened once; nullptr (and `tried`, the paths looked at) where it cannot be.
const Nvrtc* open_nvrtc(std::string* tried = nullptr) {
  static const std::pair<std::optional<Nvrtc>, std::string> opened = [] {
    std::vector<std::string> paths = candidate_paths();
    for (const std::string& path : paths) {
      void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!library) continue;
      Nvrtc nvrtc;
      nvrtc.path = path;
      bool complete = resolve(library, "nvrtcVersion", nvrtc.version) &&
                      resolve(library, "nvrtcGetErrorString", nvrtc.error_string) &&
                      resolve(library, "nvrtcCreateProgram", nvrtc.create) &&
                      resolve(library, "nvrtcDestroyProgram", nvrtc.destroy) &&
                      resolve(library, "nvrtcCompileProgram", nvrtc.compile) &&
                      resolve(library, "nvrtcGetProgramLogSize", nvrtc.log_size) &&
                      resolve(library, "nvrtcGetProgramLog", nvrtc.log) &&
                      resolve(library, "nvrtcGetPTXSize", nvrtc.ptx_size) &&
                      resolve(library, "nvrtcGetPTX", nvrtc.ptx) &&
                      resolve(library, "nvrtcGetCUBINSize", nvrtc.cubin_size) &&
                      resolve(library, "nvrtcGetCUBIN", nvrtc.cubin);
      int major = 0, minor = 0;
      if (complete && nvrtc.version(&major, &minor) == kNvrtcSuccess) {
        nvrtc.version_text = fmt::format("{}.{}", major, minor);
        return std::pair{std::optional<Nvrtc>(nvrtc), std::string()};
      }
      dlclose(library);
    }
    return std::pair{std::optional<Nvrtc>(), fmt::format("{}", fmt::join(paths, ", "))};
  }();
  if (tried) *tried = opened.second;
  return opened.first ? &*opened.first : nullptr;
}

const Nvrtc& require_nvrtc() {
  std::string tried;
  const Nvrtc* nvrtc = open_nvrtc(&tried);
  if (!nvrtc) {
    fail("NVRTC (libnvrtc.so.13) was not found; looked for {}. Install the CUDA toolkit or "
         "`pip install nvidia-cuda-nvrtc` and set MINIC_NVRTC to its lib/libnvrtc.so.13",
         tried);
  }
  return *nvrtc;
}

// Reads one of a program's outputs (log, PTX, cubin) through its size and copy calls.
template <typename SizeFn, typename CopyFn>
std::string output(nvrtcProgram program, SizeFn size_fn, CopyFn copy_fn, bool text) {
  size_t size = 0;
  if (size_fn(program, &size) != kNvrtcSuccess || size == 0) return {};
  std::string bytes(size, '\0');
  if (copy_fn(program, bytes.data()) != kNvrtcSuccess) return {};
  // The log and the PTX end in a NUL, which a std::string does not need.
  if (text && bytes.back() == '\0') bytes.pop_back();
  return bytes;
}

}  // namespace

std::optional<std::string> nvrtc_version() {
  const Nvrtc* nvrtc = open_nvrtc();
  if (!nvrtc) return std::nullopt;
  return nvrtc->version_text;
}

CudaBinary compile_cuda(const std::string& source, const std::string& arch, bool ptxas_verbose) {
  static std::mutex mutex;
  static std::map<std::string, CudaBinary> compiled;
  const Nvrtc& nvrtc = require_nvrtc();
  std::vector<std::string> options = {"--gpu-architecture=" + arch, "--std=c++17"};
  if (ptxas_verbose) options.push_back("--ptxas-options=-v");
  std::string key =
      fmt::format("NVRTC {}\n{}\n{}", nvrtc.version_text, fmt::join(options, " "), source);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = compiled.find(key); it != compiled.end()) return it->second;
  }
  if (std::optional<CudaBinary> cached = read_cached_binary(key, arch)) {
    std::lock_guard<std::mutex> lock(mutex);
    compiled.emplace(key, *cached);
    return *cached;
  }

  nvrtcProgram program = nullptr;
  nvrtcResult created =
      nvrtc.create(&program, source.c_str(), "minic_kernels.cu", 0, nullptr, nullptr);
  if (created != kNvrtcSuccess) {
    fail("NVRTC ({}) could not create a program: {}", nvrtc.path, nvrtc.error_string(created));
  }
  std::vector<const char*> argv;
  for (const std::string& option : options) argv.push_back(option.c_str());
  nvrtcResult result = nvrtc.compile(program, static_cast<int>(argv.size()), argv.data());
  CudaBinary binary;
  binary.arch = arch;
  binary.log = output(program, nvrtc.log_size, nvrtc.log, true);
  if (result != kNvrtcSuccess) {
    nvrtc.destroy(&program);
    fail("NVRTC could not compile the kernels for {}: {}\n{}", arch, nvrtc.error_string(result),
         binary.log);
  }
  binary.ptx = output(program, nvrtc.ptx_size, nvrtc.ptx, true);
  binary.cubin = output(program, nvrtc.cubin_size, nvrtc.cubin, false);
  nvrtc.destroy(&program);
  if (binary.cubin.empty()) {
    fail("NVRTC made no cubin for {} (an architecture such as sm_90 makes one; compute_XX "
         "makes PTX only)",
         arch);
  }
  write_cached_binary(key, binary);
  std::lock_guard<std::mutex> lock(mutex);
  compiled.emplace(std::move(key), binary);
  return binary;
}

}  // namespace minic::codegen
