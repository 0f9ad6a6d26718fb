// Loading ahead-of-time kernels with dlopen. Course module 6.
//
// Chapter: docs/module6-llvm-cpu.md#5-ahead-of-time-minic-compile
#include "shared_library.h"

#include "minic/support/error.h"

#include <dlfcn.h>

namespace minic {
namespace {

class SharedLibraryModule : public codegen::CompiledModule {
 public:
  SharedLibraryModule(std::string path, void* handle, std::vector<std::string> names)
      : path_(std::move(path)), handle_(handle), names_(std::move(names)) {}
  ~SharedLibraryModule() override { dlclose(handle_); }

  KernelFn find(const std::string& name) const override {
    void* symbol = dlsym(handle_, codegen::kernel_symbol(name).c_str());
    if (!symbol) fail("{} has no kernel '{}'", path_, name);
    return reinterpret_cast<KernelFn>(symbol);
  }
  std::vector<std::string> function_names() const override { return names_; }
  std::string llvm_ir() const override {
    return "; the kernels were loaded from " + path_ + ", compiled ahead of time\n";
  }
  std::string assembly() const override {
    return "# the kernels were loaded from " + path_ + ", compiled ahead of time\n";
  }

 private:
  std::string path_;
  void* handle_;
  std::vector<std::string> names_;
};

}  // namespace

std::unique_ptr<codegen::CompiledModule> load_kernel_library(
    const std::string& path, const std::vector<std::string>& kernels) {
  // RTLD_NOW: an unresolved symbol is reported here, not in the middle of a run.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) fail("cannot load the kernel library {}: {}", path, dlerror());
  auto module = std::make_unique<SharedLibraryModule>(path, handle, kernels);
  for (const std::string& name : kernels) module->find(name);
  return module;
}

}  // namespace minic
