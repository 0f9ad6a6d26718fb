// The CUDA code of a model and the emulated kernels (see cuda_code.h). Course module 6.
//
// Chapter: docs/module6-cuda.md#running-a-model-on-the-gpu
#include "cuda_code.h"

#include "minic/codegen/cuda.h"
#include "minic/ir/loop/c_syntax.h"
#include "minic/ir/loop/interpreter.h"
#include "minic/support/error.h"

#include <cstring>

namespace minic {

CudaProgram generate_cuda_code(const loop::LoopModule& kernels, const Target& target,
                               bool compile) {
  CudaProgram program;
  program.module.source = std::string(codegen::cuda_prelude());
  for (const loop::PrimFunc& func : kernels.functions) {
    std::string source;
    try {
      codegen::CudaFunction function = codegen::emit_cuda_function(func, target, source);
      program.module.source += source;
      program.module.functions.push_back(std::move(function));
    } catch (const InternalError&) {
      throw;
    } catch (const Error& error) {
      program.refused[func.name] = error.what();
    }
  }
  if (compile) program.binary = codegen::compile_cuda(program.module.source, target.cuda().arch);
  return program;
}

runtime::KernelCall gpu_kernel_call(runtime::CudaDevice& device,
                                    const codegen::CudaFunction& function) {
  std::vector<void*> scratch;
  for (const codegen::CudaScratch& buffer : function.scratch) {
    scratch.push_back(device.allocate(buffer.bytes, 256));
  }
  std::vector<void*> kernels;
  for (const codegen::CudaLaunch& launch : function.launches) {
    kernels.push_back(device.function(launch.kernel));
  }
  runtime::CudaDevice* gpu = &device;
  return [gpu, function, scratch, kernels](void** args) {
    for (size_t k = 0; k < function.launches.size(); ++k) {
      const codegen::CudaLaunch& launch = function.launches[k];
      // cuLaunchKernel takes a pointer to each argument: here, to each buffer's address.
      std::vector<void*> values;
      for (int index : launch.args) {
        values.push_back(index < function.num_params ? args[index]
                                                     : scratch[index - function.num_params]);
      }
      std::vector<void*> params;
      for (void*& value : values) params.push_back(&value);
      gpu->launch_kernel(kernels[k], launch.grid, launch.block, launch.dynamic_shared_bytes,
                         params.data());
    }
  };
}

runtime::KernelCall emulated_kernel_call(const loop::PrimFunc& func) {
  std::vector<int64_t> bytes;
  for (const loop::Buffer& param : func.params) {
    int64_t elements = 1;
    for (int64_t dim : param->shape) elements *= dim;
    if (elements > 0 && loop::c_syntax::span(*param) != std::optional<int64_t>(elements)) {
      internal_fail("{}: parameter {} is not a row-major array", func.name, param->name);
    }
    bytes.push_back(elements * dtype_size(param->dtype));
  }
  return [func, bytes](void** args) {
    std::vector<Tensor> tensors;
    tensors.reserve(func.params.size());
    for (size_t i = 0; i < func.params.size(); ++i) {
      const loop::Buffer& param = func.params[i];
      tensors.emplace_back(param->dtype, param->shape);
      // An empty tensor has no storage (a null pointer, which memcpy must not get).
      if (bytes[i] > 0) std::memcpy(tensors.back().bytes().data(), args[i], bytes[i]);
    }
    std::vector<Tensor*> pointers;
    for (Tensor& tensor : tensors) pointers.push_back(&tensor);
    loop::run_func(func, pointers);
    for (size_t i = 0; i < func.params.size(); ++i) {
      if (bytes[i] > 0) std::memcpy(args[i], tensors[i].bytes().data(), bytes[i]);
    }
  };
}

}  // namespace minic
