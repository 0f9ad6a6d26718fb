// The toy NPU's jobs and the patterns that find them (src/backends/toy_npu/toy_npu.cpp).
// Course module 6 (bring your own codegen).
//
// The device runs one kind of job, a GEMM with an epilogue: Y = A B (+ bias) (then Relu),
// A [M, K], B [K, N] or [N, K] transposed, f32, the bias one value per column of Y or per
// row. A pattern looks at a node the partitioner offers (a plain node, or a fusion group)
// and, where the node computes such a GEMM, says which: the sizes, and which of the
// node's kernel arguments (kernel_arguments: its distinct inputs, then its outputs) are A,
// B, the bias and Y, read as row-major matrices of those sizes. The back end claims a
// node when a pattern matches it (the first, by name), and emits the same device program
// for every job. A new pattern teaches the NPU a new op without touching the back end:
//
//   std::optional<NpuGemm> my_pattern(const Node& node) { ... }
//   MINIC_REGISTER_NPU_PATTERN("my-pattern", my_pattern);
//
// (exercise m6-npu-conv1x1 writes one for 1x1 convolutions). backend.h has what patterns
// use to read a node: body_ops, argument_index, is_f32 and plain_gemm.
//
// Chapter: docs/module6-llvm-cpu.md#bring-your-own-codegen
#pragma once

#include "minic/backends/backend.h"

#include <functional>
#include <optional>
#include <vector>

namespace minic {

struct NpuGemm {
  int64_t m = 0, n = 0, k = 0;
  bool transpose_b = false;   // B is [N, K]
  bool relu = false;
  bool bias_per_row = false;  // the bias has M values (one per row of Y), not N
  int a = -1, b = -1, bias = -1, y = -1;  // kernel argument indices (bias: -1 for none)
};

using NpuPattern = std::function<std::optional<NpuGemm>(const Node& node)>;

struct RegisterNpuPattern {
  RegisterNpuPattern(const char* name, NpuPattern pattern);
};

}  // namespace minic

#define MINIC_NPU_PATTERN_CONCAT_INNER(a, b) a##b
#define MINIC_NPU_PATTERN_CONCAT(a, b) MINIC_NPU_PATTERN_CONCAT_INNER(a, b)

// Registers `pattern` (std::optional<NpuGemm> pattern(const Node&)) under `name`.
#define MINIC_REGISTER_NPU_PATTERN(name, pattern)                                         \
  static const ::minic::RegisterNpuPattern MINIC_NPU_PATTERN_CONCAT(minic_npu_pattern_,   \
                                                                    __LINE__)(name, pattern)
