// The `pack-int8-weights` pass: the constant weights of an int8 matrix product or
// convolution are packed into VNNI's words of four bytes once, at compile time, instead of
// on every run.
//
// Course module 7 (and module 2: layout transformations at graph level). The CPU's int8
// matrix product (docs/module7-quantisation.md, section 3) reads B as int32 words of four
// consecutive bytes along k, and subtracts A's zero point times B's column sums. Computed
// from B in the kernel, both are a pass over the weights on every run: for a BERT-base
// layer's FFN, 2.4 MB packed and summed to multiply a 128-row A. The weights are
// constants, so the pass computes both once:
//
//   %y = MatMulInteger(%a, %w, %za)                          %w: i8[768,3072]
//   ->  %y = minic.MatMulIntegerWords(%a, %w_words, %w_sums, %za)
//       %w_words = const i32[192,3072]   %w_sums = const i32[3072]
//
// A ConvInteger's weights W [M, C, KH, KW] are packed the same way along C, into
// minic.ConvIntegerWords, and summed per output channel (the correction for X's zero point).
//
// Precondition: types are known. The rewrite fires on a CPU target (the GPU's kernels
// read bytes) for a MatMulInteger whose B is a 2-D int8 constant and whose A is int8 or
// uint8 with at least two dimensions, and for a ConvInteger of one group whose W is a 4-D
// int8 constant and whose X is 4-D int8 or uint8; in both, with no zero point for the
// weights or a zero one.
// Invariant: the graph computes exactly the same function (the same int32 sums).
//
// Chapter: docs/module7-quantisation.md#3-int8-kernels-on-vnni
#pragma once

#include "minic/target/target.h"
#include "minic/ir/graph/graph.h"

namespace minic {

void pack_int8_weights(Graph& graph, const Target& target);

}  // namespace minic
