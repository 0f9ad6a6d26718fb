// Exercise m6-npu-conv1x1: teach the toy NPU 1x1 convolutions. Course module 6.
//
// exercises/m6-npu-conv1x1/README.md gives the task; this file is where it is done. The
// pattern is registered already (the last line), so the toy NPU offers it every node the
// partitioner hands it: as given, it matches nothing, every convolution stays minic's,
// and the exercise's tests fail.
//
// Chapter: docs/module6-llvm-cpu.md#bring-your-own-codegen
#include "minic/backends/toy_npu.h"

namespace minic {
namespace {

// The GEMM a 1x1 convolution (with its bias, and a Relu fused after it) computes, where
// `node` is one; else nullopt.
std::optional<NpuGemm> conv1x1_pattern(const Node& node) {
  // The pattern goes here: look at body_ops(node), check the Conv's shapes and attributes,
  // and say which kernel arguments are A, B, the bias and Y (argument_index).
  return std::nullopt;
}

}  // namespace

MINIC_REGISTER_NPU_PATTERN("conv1x1", conv1x1_pattern);

}  // namespace minic
