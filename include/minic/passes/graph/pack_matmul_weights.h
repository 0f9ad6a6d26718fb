// The `pack-matmul-weights` pass: a matrix product's constant B is stored once, at compile
// time, in the panels of columns the CPU's GEMM tile reads, instead of being copied into
// them on every run.
//
// Course module 4 (and module 2: layout transformations at graph level). The GEMM rule
// (docs/module4-schedules.md, section 4) computes C in register tiles of nr columns and
// streams, for each, the K x nr panel of B those columns read; with B row-major [K, N] it
// first copies each panel into a contiguous buffer, every run: for a BERT-base layer's
// FFN, 9.4 MB of weights moved to multiply a 128-row A, about a tenth of the product's
// time. B is a constant, so the pass lays it out as the panels once:
//
//   %y = MatMul(%a, %w)                   %a: f32[1,128,768]   %w: f32[768,3072]
//   ->  %y = minic.MatMulPanels(%a, %w_panels) {columns = 3072}
//       %w_panels = const f32[48,768,64]          (gemm_tile(128, 3072, 768): 64 columns)
//
// A Gemm of the same form (transA = 0, transB = 0 once pretranspose-weights has run,
// alpha = beta = 1) becomes minic.MatMulPanels and, with a C, an Add of C after it, which
// fuse-ops then folds into the kernel's epilogue as before.
//
// The panel width is the column tile gemm_tile (include/minic/target/gemm_tile.h) gives
// the product's extents, the tile the GEMM rule will choose for the kernel, so that once
// the rule splits the columns by it the panel index [j / P, k, j % P] is [jo, k, ji]: one
// contiguous panel per column tile. (A schedule that tiles otherwise, a tuned one, reads
// the same values, less contiguously.)
//
// Precondition: types are known. The rewrite fires on a CPU target for a float32 MatMul
// or Gemm whose B is a 2-D constant and whose A has two dimensions or more, where the GEMM
// rule takes the product (gemm_tile gives 2 rows or more and a column tile).
// Invariant: the graph computes exactly the same function (the same products, summed in
// the same order).
//
// Chapter: docs/module4-schedules.md#4-the-default-cpu-schedule
#pragma once

#include "minic/ir/graph/graph.h"
#include "minic/target/target.h"

namespace minic {

void pack_matmul_weights(Graph& graph, const Target& target);

}  // namespace minic
