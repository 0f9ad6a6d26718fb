// The CUDA code of a model and the emulated kernels (see cuda_code.h). Course module 6.
//
// Chapter: docs/module6-cuda.md#running-a-model-on-the-gpu
#include "cuda_code.h"

#include "minic/codegen/cuda.h"
#include "minic/ir/loop/c_syntax.h"
#include "minic/ir/loop/interpreter.h"
#include "minic/ops/op.h"
#include "minic/backends/backend.h"
#include "minic/support/error.h"

#include <cstring>
#include <set>

namespace minic {

namespace {

// The function of a node that runs its op's hand-written kernel: one launch, taking every
// argument of the node's kernel and the launch rule's integers.
codegen::CudaFunction hand_written_function(const HandWrittenKernel& kernel, int opset) {
  const OpSchema& schema = *op_registry().find(kernel.node->op);
  CudaKernelLaunch rule = schema.cuda->launch(NodeContext(*kernel.node, opset));
  codegen::CudaFunction function;
  function.name = kernel.function;
  function.num_params = static_cast<int>(kernel_arguments(*kernel.node).size());
  codegen::CudaLaunch launch;
  launch.kernel = rule.kernel;
  launch.grid = rule.grid;
  launch.block = rule.block;
  for (int a = 0; a < function.num_params; ++a) launch.args.push_back(a);
  launch.scalars = rule.scalars;
  function.launches.push_back(std::move(launch));
  return function;
}

// The kernels each custom op's launches name, by op.
using KernelsOfOp = std::map<std::string, std::set<std::string>>;

// The hand-written kernels: each node's function, and each op's source once. Returns the
// kernels each op's launches name.
KernelsOfOp add_hand_written(CudaProgram& program,
                             const std::vector<HandWrittenKernel>& hand_written, int opset) {
  KernelsOfOp kernels_of_op;
  for (const HandWrittenKernel& kernel : hand_written) {
    codegen::CudaFunction function;
    try {
      function = hand_written_function(kernel, opset);
    } catch (const InternalError&) {
      throw;
    } catch (const Error& error) {
      program.refused[kernel.function] = error.what();
      continue;
    }
    kernels_of_op[kernel.node->op].insert(function.launches[0].kernel);
    program.module.functions.push_back(std::move(function));
  }
  for (const auto& [op, kernels] : kernels_of_op) {
    program.module.source += fmt::format("\n// The hand-written kernels of custom op {}.\n{}\n",
                                         op, op_registry().find(op)->cuda->source);
  }
  return kernels_of_op;
}

// NVRTC's binary of the whole program. The errors a custom op's source causes name the op:
// where the program does not compile, each op's source is compiled alone to find the one
// at fault; where its PTX has no entry for a kernel an op's launch names, that op.
codegen::CudaBinary compile_program(const std::string& source, const KernelsOfOp& kernels_of_op,
                                    const Target& target) {
  const std::string& arch = target.cuda().arch;
  codegen::CudaBinary binary;
  try {
    binary = codegen::compile_cuda(source, arch);
  } catch (const InternalError&) {
    throw;
  } catch (const Error&) {
    for (const auto& [op, kernels] : kernels_of_op) {
      try {
        codegen::compile_cuda(std::string(codegen::cuda_prelude()) +
                                  op_registry().find(op)->cuda->source,
                              arch);
      } catch (const InternalError&) {
        throw;
      } catch (const Error& error) {
        fail("custom op {}: its CUDA source does not compile: {}", op, error.what());
      }
    }
    throw;
  }
  for (const auto& [op, kernels] : kernels_of_op) {
    for (const std::string& kernel : kernels) {
      if (binary.ptx.find(".entry " + kernel + "(") == std::string::npos) {
        fail("custom op {}: its launch rule names kernel {}, which its CUDA source does not "
             "define as an extern \"C\" __global__ function",
             op, kernel);
      }
    }
  }
  return binary;
}

}  // namespace

CudaProgram generate_cuda_code(const loop::LoopModule& kernels,
                               const std::vector<HandWrittenKernel>& hand_written, int opset,
                               const Target& target, bool compile) {
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
  const KernelsOfOp kernels_of_op = add_hand_written(program, hand_written, opset);
  if (compile) program.binary = compile_program(program.module.source, kernels_of_op, target);
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
      // cuLaunchKernel takes a pointer to each argument: here, to each buffer's address,
      // then to each integer.
      std::vector<void*> values;
      for (int index : launch.args) {
        values.push_back(index < function.num_params ? args[index]
                                                     : scratch[index - function.num_params]);
      }
      std::vector<int64_t> scalars = launch.scalars;
      std::vector<void*> params;
      for (void*& value : values) params.push_back(&value);
      for (int64_t& scalar : scalars) params.push_back(&scalar);
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
