// The register tile of a CPU target's matrix products: which mr x nr block of C a GEMM of
// given extents accumulates in vector registers, counted in the target's f32 lanes.
//
// Course module 4. The GEMM schedule rule (src/schedule/rules/cpu_default.cpp) tiles a
// multiply-accumulate by it, and the `pack-matmul-weights` graph pass
// (src/passes/graph/pack_matmul_weights.cpp) stores a constant B in panels of the tile's
// columns, so both must ask the same question of the same function: it lives with the
// target, which both may read, rather than in the schedule library that a graph pass must
// not depend on.
//
// For a 128 x 3072 product over 768 on an AVX-512 target: gemm_tile(128, 3072, 768) is 6 rows
// by 64 columns (four vectors: 24 accumulators of the 24 the target gives them).
//
// Chapter: docs/module4-schedules.md#4-the-default-cpu-schedule
#pragma once

#include "minic/target/target.h"

#include <cstdint>

namespace minic {

// A parallel loop's length, where there is one.
inline constexpr int64_t kMinParallelExtent = 8;
// The panel of a GEMM's columns operand that a column tile reads should fit in this much
// of L1 (32 KB or more on every x86 core of the last decade), where a tile allows it.
inline constexpr int64_t kPanelBytes = 32 * 1024;

// How many vector registers a register tile's accumulators may take: three quarters of
// the target's (24 of AVX-512's 32, 12 of AVX2's 16), the rest holding the operands.
int64_t accumulator_registers(const Target& target);

// The column tile: one or two vectors of `lanes` where they divide the extent; one vector
// (and a shorter last tile) where the extent is longer but not whole vectors; else the
// largest divisor of the extent from 7; 0 if there is none.
int64_t column_tile(int64_t extent, int64_t lanes);

// The register tile's rows for a row extent and a column tile of `columns`: 8, 4 or 2,
// the largest that divides the extent and whose accumulators (rows times the column
// tile's vectors) fit in accumulator_registers(target); 1 if none does.
int64_t row_tile(int64_t extent, int64_t columns, const Target& target);

// A GEMM's register tile: `rows` of the row extent by `columns` of the innermost one.
struct GemmTile {
  int64_t rows = 1;
  int64_t columns = 0;
};

// The GEMM rule's tile for rows x columns outputs summed over `reduction` products: 2 or 4
// vectors (1 where the extent is one), the last column tile one or two vectors where they
// do not divide it (never three: a 48-lane vector compiles badly), or less than one where
// the extent is not whole vectors (196: three of 64 and one of 4), by 2 to 8 rows (a
// last, shorter row tile likewise), rows x vectors accumulators within
// accumulator_registers. Each step of the reduction loads `rows` broadcasts and the
// vectors for rows x vectors multiply-adds. Tiles compare by, in turn: leaving
// kMinParallelExtent column tiles or more (the loop the threads share, each packing its
// own panels where B is not packed already); a panel of columns (reduction x columns
// floats) within kPanelBytes, so that it stays in L1 while every row tile reads it (BERT's
// 256-long reductions: 2 vectors, 32 KB); the most multiply-adds per load (6 x 4 vectors: 24 for
// 10 loads; 8 x 2: 16 for 10). Column extents that no such tile ends well (56: 32 would
// end in 24): column_tile and row_tile. Rows 1 where no tile fits.
GemmTile gemm_tile(int64_t rows, int64_t columns, int64_t reduction, const Target& target);

}  // namespace minic
