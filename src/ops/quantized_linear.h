// What the integer matrix products and convolutions share between their reference kernels
// (quantized_linear.cpp) and their compute rules (quantized_linear_compute.cpp). Course
// module 7.
//
// Chapter: docs/module7-quantisation.md#1-affine-quantisation-and-the-onnx-ops
#pragma once

#include "minic/ops/compute.h"
#include "minic/ops/op.h"

namespace minic {

// How a quantisation parameter (zero point or scale) of an operand lines up with it.
enum class ParameterAxis {
  any,    // numpy broadcasting (B's per-column [N] is that already)
  row,    // a vector is one value per row: A's [M] reads as [M, 1]
  first,  // a vector is one value per index of axis 0: W's [M] reads as [M, 1, ...]
};

// The compute rules (quantized_linear_compute.cpp).
std::vector<ComputeTensor> matmul_integer_compute(const ComputeContext& ctx);
std::vector<ComputeTensor> matmul_integer_words_compute(const ComputeContext& ctx);
std::vector<ComputeTensor> qlinear_matmul_compute(const ComputeContext& ctx);
std::vector<ComputeTensor> conv_integer_compute(const ComputeContext& ctx);
std::vector<ComputeTensor> conv_integer_words_compute(const ComputeContext& ctx);
std::vector<ComputeTensor> qlinear_conv_compute(const ComputeContext& ctx);

}  // namespace minic
