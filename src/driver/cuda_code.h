// Step 5 of compile_model for a CUDA target: the kernels as CUDA C, compiled by NVRTC, or
// run on the loop interpreter (--emulate). Course module 6.
//
// Chapter: docs/module6-cuda.md#running-a-model-on-the-gpu
#pragma once

#include "minic/driver/compile.h"
#include "minic/runtime/cuda_device.h"
#include "minic/runtime/device.h"

namespace minic {

// The CUDA C of every kernel the back end takes, one program; with `compile`, its cubin
// and PTX from NVRTC for the target's architecture. A kernel that emit_cuda refuses (an
// element type without a CUDA type, a schedule it cannot launch) is named in
// CudaProgram::refused with the reason, and its node runs its reference kernel.
CudaProgram generate_cuda_code(const loop::LoopModule& kernels, const Target& target,
                               bool compile);

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
