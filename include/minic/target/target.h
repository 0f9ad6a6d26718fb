// The machine code is made for: a CPU (through LLVM) or an NVIDIA GPU (CUDA).
//
// Course module 6 (hardware back ends: hardware abstraction), docs/module6-llvm-cpu.md#the-target.
// What a stage of the pipeline needs to know about the machine, it reads from one Target
// value, made once (from the host, or from `--target`) and passed explicitly to lowering
// (the conv rule's position multiple), the default schedule rules and the autotuner's
// search space (vector lanes, vector registers), code generation (the CPU and its
// features, the preferred vector width) and the tuning database (records are keyed by the
// target's text). No stage keeps a constant of its own for these.
//
// A CPU target is named as LLVM names CPUs (`-mcpu`), with features added or removed
// (`-mattr`); LLVM knows what each name means, so src/codegen/llvm makes CPU targets
// (codegen::host_target, codegen::cpu_target). A CUDA target is named by its architecture;
// what the driver is not asked (shared memory, registers) comes from a table here.
//
// The text form, which `--target` takes and the tuning database stores:
//
//   llvm                                   the host's CPU
//   llvm -mcpu=x86-64-v3                   a CPU by its LLVM name (AVX2: 32-byte vectors)
//   llvm -mcpu=znver4 -mattr=-avx512f      the same with features removed (+F adds one)
//   cuda -arch=sm_90a                      an NVIDIA GPU by its architecture
//   cuda                                   the same as cuda -arch=sm_90 (Hopper)
//
// str() prints a target deterministically (`llvm -mcpu=NAME`, ` -mattr=...` where the
// features differ from the CPU's own, sorted), and parsing that text gives the target back.
//
// Chapter: docs/module6-llvm-cpu.md#the-target
#pragma once

#include "minic/tensor/dtype.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace minic {

// Data cache sizes in bytes; 0 where the machine does not say.
struct CacheSizes {
  int64_t l1d = 0;
  int64_t l2 = 0;
  int64_t l3 = 0;

  bool operator==(const CacheSizes&) const = default;
};

// A CPU, compiled for with LLVM.
struct CpuTarget {
  std::string cpu;                    // LLVM's name for it (-mcpu): "znver4", "x86-64-v3"
  std::vector<std::string> mattr;     // features added (+F) or removed (-F) from the CPU's
                                      // own (-mattr), sorted; part of the text form
  std::vector<std::string> features;  // every feature LLVM is given, "+avx2", "-avx512f",
                                      // sorted
  int64_t vector_bytes = 16;          // the widest vector register: 64 (AVX-512), 32 (AVX2)
  int64_t vector_registers = 16;      // how many: 32 with AVX-512, 16 with AVX2 or SSE
  CacheSizes caches;                  // the host's (code for a CPU runs on this machine)
  int cores = 1;                      // the logical CPUs this process may run on

  bool operator==(const CpuTarget&) const = default;
};

// An NVIDIA GPU, by its architecture.
struct CudaTarget {
  std::string arch;                     // "sm_90a"
  int sm_count = 0;                     // streaming multiprocessors
  int64_t shared_memory_per_sm = 0;     // bytes
  int64_t shared_memory_per_block = 0;  // bytes: the most one thread block may ask for
  int64_t registers_per_sm = 0;         // 32-bit registers

  bool operator==(const CudaTarget&) const = default;
};

enum class TargetKind { llvm, cuda };

class Target {
 public:
  explicit Target(CpuTarget cpu) : value_(std::move(cpu)) {}
  explicit Target(CudaTarget cuda) : value_(std::move(cuda)) {}

  TargetKind kind() const { return value_.index() == 0 ? TargetKind::llvm : TargetKind::cuda; }
  bool is_cpu() const { return kind() == TargetKind::llvm; }
  bool is_cuda() const { return kind() == TargetKind::cuda; }
  // The CPU or GPU the target is; an internal error for the other kind.
  const CpuTarget& cpu() const;
  const CudaTarget& cuda() const;

  // How many elements of `dtype` one vector register of a CPU target holds (at least 1):
  // 16 f32 lanes with AVX-512, 8 with AVX2. Error for a CUDA target.
  int64_t vector_lanes(DType dtype) const;
  // True if a CPU target's features include `feature` ("avx512f"), enabled.
  bool has_feature(std::string_view feature) const;

  // The text form (see the top of this file).
  std::string str() const;
  // A few lines for people: the text, then vector registers, caches and cores, or the
  // GPU's SMs, shared memory and registers.
  std::string describe() const;

  bool operator==(const Target&) const = default;

 private:
  std::variant<CpuTarget, CudaTarget> value_;
};

// The words of a target's text, read and checked but not resolved: what a CPU name means
// is LLVM's to say (codegen::cpu_target), a CUDA architecture's the table of cuda_target.
struct TargetSpec {
  TargetKind kind = TargetKind::llvm;
  std::optional<std::string> cpu;  // -mcpu=NAME; none: the host's CPU
  std::vector<std::string> mattr;  // -mattr=+F,-G, sorted
  std::string arch;                // -arch=sm_XX (cuda)
};

// Reads `text`. Error naming the text and the word that is wrong: an unknown kind, an
// option the kind does not take, one without its value or given twice. A CUDA target
// without -arch is sm_90.
TargetSpec parse_target_spec(std::string_view text);

// The CUDA target of an architecture of the table (cuda_architectures()): the numbers of
// the architecture's flagship part (A100, RTX 3090, RTX 4090, H100). Error naming the
// architecture and the known ones otherwise.
Target cuda_target(std::string_view arch);
std::vector<std::string> cuda_architectures();

// What the host offers any CPU target: its data caches (sysfs) and the logical CPUs this
// process may run on (sched_getaffinity). Read once.
struct HostResources {
  CacheSizes caches;
  int cores = 1;
};
const HostResources& host_resources();

}  // namespace minic
