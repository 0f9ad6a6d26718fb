// The `fuse-matmul-bias` pass: merge MatMul followed by Add of a bias into one Gemm.
//
// Course module 2. Add(MatMul(A, B), bias) → Gemm(A, B, bias) when A is 2-D, B a constant
// 2-D weight, bias a constant that Gemm's C broadcasts, and the MatMul's result has no other
// user. A with leading axes ([1,128,256] in BERT) is left to operator fusion, which puts the
// MatMul and its bias Add in one kernel without Reshapes; src/passes/graph/
// fuse_matmul_bias.cpp explains the choice.
//
// Chapter: docs/module2-graph-passes.md#4-recognising-decomposed-ops-fuse-gelu-fuse-layernorm-fuse-matmul-bias
#pragma once

#include "minic/ir/graph/graph.h"

namespace minic {

void fuse_matmul_bias(Graph& graph);

}  // namespace minic
