// The LLVM CPU back end: loop IR functions → LLVM IR → O3 → native code, run in-process.
//
// Course module 6 (hardware back ends, the CPU part). This header is the whole of what the
// rest of minic sees of LLVM: it names no LLVM type, so only src/codegen/llvm/ includes
// LLVM's headers (DESIGN.md, rule 8).
//
// Every PrimFunc of the module becomes one C function
//
//   void NAME(void** args);   // args[i]: the data of parameter i, in the order of params
//
// an ABI as simple for the runtime's executor as for a C program that links the code
// ahead of time. Each buffer is a plain array of its element type, laid out by its
// strides; bools are one byte each (0 or 1). The buffers of one call must not overlap:
// the code is compiled on that promise (LLVM's `noalias`). The code's one call out of
// itself is for a parallel loop:
//
//   void minic_parallel_for(void (*fn)(void* closure, int64_t begin, int64_t end),
//                           void* closure, int64_t n);
//
// which must run fn over chunks of [0, n). The JIT binds it to LlvmOptions::parallel_for
// (the runtime's thread pool, include/minic/runtime/thread_pool.h, when the driver
// compiles); an object file leaves it for the linker.
//
// What the generated code does is what the loop IR interpreter does (interpreter.h), with
// these differences, all of them about programs the interpreter rejects: no index is
// checked (a load outside its buffer is undefined), an integer division by zero gives 0,
// and allocations start with whatever the memory held. Parallel loops run on the thread
// pool given as LlvmOptions::parallel_for; a parallel loop inside another runs
// serially. GPU loops (bound to blockIdx/threadIdx) and barriers are an Error here.
//
//   loop::LoopModule module = loop::parse_loop_module(text, "add.mloop");
//   std::unique_ptr<CompiledModule> compiled = compile_llvm(module, LlvmOptions{});
//   void* args[] = {x.data(), y.data(), z.data()};
//   compiled->find("add")(args);
//
// Chapter: docs/module6-llvm-cpu.md#module-6-part-1--the-cpu-back-end-loop-ir-to-machine-code-with-llvm
#pragma once

#include "minic/ir/loop/stmt.h"
#include "minic/target/target.h"

#include <memory>
#include <string>
#include <vector>

namespace minic::codegen {

// The host's CPU as a Target: LLVM's name for it, the features the host reports, the
// vector registers they give, the host's caches and cores, and -mattr where the host
// differs from LLVM's idea of its CPU (a virtual machine may hide features). Read once.
Target host_target();

// The CPU LLVM knows by the name `cpu` ("x86-64-v3", "skylake-avx512", "znver4": a CPU of
// the host's architecture), with the features of `mattr` ("+avx512f", "-avx512f") added or
// removed: its features and vector registers from LLVM's tables, the host's caches and
// cores. Error naming the CPU or the feature where LLVM knows neither.
Target cpu_target(const std::string& cpu, const std::vector<std::string>& mattr = {});

// Error unless code compiled for `target` can run on this machine: a CUDA target (its back
// end is not built yet), or a CPU with features this machine lacks (its code would stop
// on an illegal instruction here), named in the message.
void check_runs_here(const Target& target);

// What the JIT binds minic_parallel_for to (see the top of this file).
using ParallelForFn = void (*)(void (*fn)(void* closure, int64_t begin, int64_t end),
                               void* closure, int64_t n);

// How the code is generated and optimised. One struct, passed explicitly.
struct LlvmOptions {
  // The CPU the code is for: the target machine's CPU and features, and the vector width
  // LLVM's vectorisers prefer (the target's widest registers).
  Target target = host_target();
  // LLVM's optimisation pipeline: 0 (none) to 3 (O3, the default).
  int opt_level = 3;
  // All of LLVM's fast-math flags on float arithmetic (reassociation, no NaN/inf): faster
  // reductions. Without it, only contraction is allowed: a * b + c may be one fused
  // multiply-add, rounded once, so results may differ from the interpreter's in the last
  // bit (never when every product and sum is exact, as with small integers).
  bool fast_math = false;
  // The alignment (in bytes) the code may assume for every parameter's data; 0 means the
  // alignment of one element, which any array has.
  int param_alignment = 0;
  // Allocations of at most this many bytes live on the stack; larger ones on the heap.
  int64_t max_stack_bytes = 64 * 1024;
  // How many functions the JIT compiles at once (each alone, on threads of its own):
  // 0 means one per core this process may run on.
  int compile_threads = 0;
  // The JIT's minic_parallel_for. Null: parallel loops run serially in the calling thread
  // (codegen knows nothing of the runtime; the driver passes the runtime's thread pool).
  ParallelForFn parallel_for = nullptr;
};

// The symbol of a loop function's entry point in compiled code (the JIT, kernels.o, the
// shared library of `minic compile`): its name after the prefix "minic_kernel_". Kernels
// are named after their ops (a fused group of two Pow nodes is @pow), and a bare name
// would take the place of the C library's function of that name, which the kernel's own
// code calls.
inline std::string kernel_symbol(const std::string& func_name) {
  return "minic_kernel_" + func_name;
}

// The functions of one module, compiled and ready to call. One JIT (ORC LLJIT) each;
// destroying the CompiledModule frees the code.
class CompiledModule {
 public:
  using KernelFn = void (*)(void** args);

  virtual ~CompiledModule() = default;

  // The entry point of the function named `name` (without the '@'); throws Error naming
  // it if the module has no such function.
  virtual KernelFn find(const std::string& name) const = 0;
  // The names of the compiled functions, in module order.
  virtual std::vector<std::string> function_names() const = 0;
  // The optimised LLVM IR of the module, as text.
  virtual std::string llvm_ir() const = 0;
  // The assembly of the module.
  virtual std::string assembly() const = 0;
};

// Compiles every function of `module` for options.target, a CPU target (code for another
// CPU than the host's may be compiled, not run). Throws Error naming the function
// and the reason for what this back end cannot compile (GPU loops, a barrier, a
// storage-only element type) and, as an internal error, if LLVM rejects the IR it made.
std::unique_ptr<CompiledModule> compile_llvm(const loop::LoopModule& module,
                                             const LlvmOptions& options);

// The LLVM IR of `module` (after optimisation when options.opt_level > 0), as text: what
// `minic ... --emit llvm` prints.
std::string emit_llvm_text(const loop::LoopModule& module, const LlvmOptions& options);

// The assembly of `module` for options.target: what `--emit asm` prints.
std::string emit_asm_text(const loop::LoopModule& module, const LlvmOptions& options);

// A relocatable object file (ELF .o bytes) of `module` for options.target, ahead of time: link
// it with minic's runtime (for minic_parallel_for) into a program or shared library.
std::vector<char> emit_object(const loop::LoopModule& module, const LlvmOptions& options);

}  // namespace minic::codegen
