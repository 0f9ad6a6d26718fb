// Step 5 of compile_model for a CUDA target: the kernels as CUDA C, compiled by NVRTC, or
// run on the loop interpreter (--emulate). Course module 6.
//
// Chapter: docs/module6-cuda.md#running-a-model-on-the-gpu
#pragma once

#include "minic/driver/compile.h"
#include "minic/runtime/cuda_device.h"
#include "minic/runtime/device.h"

namespace minic {

// A node whose op brings its own CUDA kernel (OpSchema::cuda), and the name of its function
// in the program.
struct HandWrittenKernel {
  const Node* node;
  std::string function;
};

// The CUDA C of every kernel the back end takes, one program; with `compile`, its cubin
// and PTX from NVRTC for the target's architecture. A kernel that emit_cuda refuses (an
// element type without a CUDA type, a schedule it cannot launch) is named in
// CudaProgram::refused with the reason, and its node runs its reference kernel.
// The hand-written kernels join the program as given: each op's source once, and a
// function per node with the one launch its op's launch rule gives (at `opset`). Error
// naming the op when its source does not compile or lacks the kernel its launch names.
CudaProgram generate_cuda_code(const loop::LoopModule& kernels,
                               const std::vector<HandWrittenKernel>& hand_written, int opset,
                               const Target& target, bool compile);

// A KernelCall that enqueues `function`'s launches on `device`, whose loaded module holds
// their kernels: `args` are the device addresses of the function's parameters; its scratch
// buffers are allocated on the device once, here.
runtime::KernelCall gpu_kernel_call(runtime::CudaDevice& device,
                                    const codegen::CudaFunction& function);

// A KernelCall that runs `func` on the loop interpreter (include/minic/ir/loop/
// interpreter.h): the GPU schedule, thread block by thread block, with its race checks.
// `args` are host addresses, one per parameter, each a row-major array of its buffer.
runtime::KernelCall emulated_kernel_call(const loop::PrimFunc& func);

}  // namespace minic
