// The register tile of a CPU target's matrix products (include/minic/target/gemm_tile.h).
// Course module 4.
//
// Chapter: docs/module4-schedules.md#4-the-default-cpu-schedule
#include "minic/target/gemm_tile.h"

#include <tuple>

namespace minic {

int64_t accumulator_registers(const Target& target) {
  return target.cpu().vector_registers * 3 / 4;
}

// An extent that is not whole vectors and that gemm_tile's tiles of two or four vectors do
// not end well (a MatMul of 56 columns) takes one vector and a last, shorter tile (56: three
// of 16 and one of 8, cut off by partition-loops): a tile of an odd number of lanes (28 =
// 56 / 2) compiles to split vectors whose accumulators stay in memory (a 1024 x 56 MatMul:
// 4 GFLOP/s with tiles of 28, 110 with 16 and a tail). Below one vector, the largest
// divisor from 7 (a 7- or 14-wide row): one short vector.
int64_t column_tile(int64_t extent, int64_t lanes) {
  if (extent % (2 * lanes) == 0) return 2 * lanes;
  if (extent % lanes == 0 || extent > lanes) return lanes;
  for (int64_t tile = extent; tile >= 7; --tile) {
    if (extent % tile == 0) return tile;
  }
  return 0;
}

int64_t row_tile(int64_t extent, int64_t columns, const Target& target) {
  int64_t lanes = target.vector_lanes(DType::f32);
  int64_t vectors = (columns + lanes - 1) / lanes;
  for (int64_t rows : {8, 4, 2}) {
    if (extent % rows == 0 && rows * vectors <= accumulator_registers(target)) return rows;
  }
  return 1;
}

GemmTile gemm_tile(int64_t rows, int64_t columns, int64_t reduction, const Target& target) {
  const int64_t lanes = target.vector_lanes(DType::f32);
  // Candidates compare by (enough column tiles to share, a panel that fits L1, multiply-
  // adds per load), the first that differs deciding.
  GemmTile best;
  std::tuple<bool, bool, double> best_key{false, false, 0.0};
  // Powers of two only, for the tiles and for the last, shorter one: LLVM splits a vector
  // of 3 x 16 floats badly (a 1024 x 96 MatMul ran at 4 GFLOP/s with 48-lane tiles, at 156
  // with 32).
  for (int64_t vectors = 1; vectors <= 4 && vectors * lanes <= columns; vectors *= 2) {
    // A last, shorter tile of one or two vectors (never three), or of less than one where
    // the columns are not whole vectors (196: three tiles of 64 and one of 4).
    const int64_t tail = columns % (vectors * lanes);
    if (tail > lanes && tail != 2 * lanes) continue;
    // One vector (8 multiply-adds for 9 loads) only where the columns are one vector.
    if (vectors == 1 && columns > lanes) continue;
    const int64_t tiles = (columns + vectors * lanes - 1) / (vectors * lanes);
    const bool shared = tiles >= kMinParallelExtent;
    const bool fits = reduction * vectors * lanes * 4 <= kPanelBytes;
    for (int64_t r = 2; r <= 8 && r <= rows; ++r) {
      if (r * vectors > accumulator_registers(target)) continue;
      const double ratio = static_cast<double>(r * vectors) / static_cast<double>(r + vectors);
      std::tuple<bool, bool, double> key{shared, fits, ratio};
      if (best.columns == 0 || key > best_key) {
        best = {r, vectors * lanes};
        best_key = key;
      }
    }
  }
  if (best.columns != 0) return best;
  // Fewer than 2 rows, or columns that no tile of two or four vectors ends well (56: 16
  // and a last 8).
  const int64_t nr = column_tile(columns, lanes);
  return {nr == 0 ? 1 : row_tile(rows, nr, target), nr};
}

}  // namespace minic
