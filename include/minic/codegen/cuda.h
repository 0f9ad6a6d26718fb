// The CUDA back end: loop IR functions scheduled for the GPU → CUDA C → NVRTC → cubin.
//
// Course module 6 (hardware back ends, the GPU part). A loop IR function scheduled for the
// GPU (src/schedule/rules/gpu_default.cpp) is host code around launches: its outermost
// statements allocate global scratch buffers and run nests whose outer loops are bound
// to blockIdx/threadIdx. emit_cuda splits each function there (the host/device split):
//
//   func @softmax(X, Y) {                 CudaFunction softmax: scratch m, s
//     alloc m: f32[64] {                    launch softmax_k0  grid (1,1,1)  block (64,1,1)
//       for b in 0..1 : blockIdx.x {          (X, m)
//         for t in 0..64 : threadIdx.x {    launch softmax_k1  grid (16,1,1) block (256,1,1)
//           ... m[t] = max(...)               (X, m, Y)
//       for b in 0..16 : blockIdx.x { ... }
//
// Every nest becomes one `extern "C" __global__` kernel. A thread-bound loop is its
// thread's index (`const int64_t t = threadIdx.x;`), guarded by `if (t < extent)` only
// where its extent is not the launch's; local buffers are registers, shared ones
// `__shared__` (dynamic shared memory above 48 KB), a barrier `__syncthreads()`. A
// statement at the top that binds no loop (a scalar kernel) is a launch of one thread.
// The source needs no header: the prelude defines the integer types and min, max,
// floordiv, floormod and sigmoid, as the equivalent C does (c_syntax.h).
//
// Launch arguments follow one convention: a function's parameters in order, then its
// scratch buffers; each launch lists which of them its kernel takes.
//
// NVRTC (libnvrtc.so.13) is opened with dlopen when it is first needed, never linked:
// minic runs where it is absent, and compile_cuda says where it looked.
//
// Chapter: docs/module6-cuda.md#module-6-part-2--the-cuda-back-end
#pragma once

#include "minic/ir/loop/stmt.h"
#include "minic/target/target.h"

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace minic::codegen {

// One kernel launch: the kernel, its grid and thread block, its dynamic shared memory,
// which of the function's arguments it takes (indices: parameters, then scratch), and the
// integers it takes after them, each an int64_t (a custom op's hand-written kernel: its
// element count; minic's own kernels take none).
struct CudaLaunch {
  std::string kernel;
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::array<int64_t, 3> block = {1, 1, 1};
  int64_t dynamic_shared_bytes = 0;
  std::vector<int> args;
  std::vector<int64_t> scalars;
};

// A global buffer a function allocates between its launches: the host allocates it.
struct CudaScratch {
  std::string name;
  int64_t bytes = 0;
};

// A loop IR function on the GPU: its launches in order.
struct CudaFunction {
  std::string name;
  int num_params = 0;
  std::vector<CudaScratch> scratch;
  std::vector<CudaLaunch> launches;
};

// What emit_cuda writes for a module: one program of CUDA C and its functions.
struct CudaModule {
  std::string source;
  std::vector<CudaFunction> functions;
};

// The CUDA C of every function of `module` for `target` (a CUDA target). Error naming the
// function and the reason for what this back end cannot emit: a thread-bound loop under
// a statement of the host code that is not itself a launch, a non-constant launch extent,
// a thread block above 1024 threads, shared memory above the target's per-block limit,
// or an element type without a CUDA type (f16, bf16, the storage-only types).
CudaModule emit_cuda(const loop::LoopModule& module, const Target& target);

// The same one function at a time: its kernels appended to `source`, which must start with
// cuda_prelude(). The driver emits a model's kernels this way, so that a kernel this back
// end refuses runs its op's reference kernel instead.
CudaFunction emit_cuda_function(const loop::PrimFunc& func, const Target& target,
                                std::string& source);
std::string_view cuda_prelude();

// A program compiled by NVRTC for one architecture: the cubin (SASS) and the PTX it was
// made from (the fallback a newer driver can compile), and NVRTC's log (with
// `ptxas_verbose`, ptxas's registers, spills and shared memory per kernel).
struct CudaBinary {
  std::string arch;  // "sm_90a"
  std::string ptx;
  std::string cubin;
  std::string log;
};

// Compiles CUDA C with NVRTC for `arch` ("sm_90", "sm_90a"). Error naming where NVRTC was
// looked for when it cannot be opened, and with the program log when the source does not
// compile. The result of a source and options compiled before is reused: in the process,
// and from the on-disk cache ($MINIC_CACHE_DIR/cuda, else ~/.cache/minic/cuda).
CudaBinary compile_cuda(const std::string& source, const std::string& arch,
                        bool ptxas_verbose = false);

// The cubin's SASS, by `cuobjdump -sass` ($MINIC_CUOBJDUMP, else cuobjdump on PATH or in
// /usr/local/cuda/bin; PyPI's nvidia-cuda-cuobjdump has one). Error saying where it was
// looked for when there is none.
std::string disassemble_cubin(const CudaBinary& binary);

// "13.0" when NVRTC can be opened here, else nullopt (tests skip, saying so).
std::optional<std::string> nvrtc_version();

}  // namespace minic::codegen
