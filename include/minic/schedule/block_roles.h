// What schedule rules read off a block: the roles of its loops, the shape of its body, the
// tiles that fit it on the target. Used by the default rules (src/schedule/rules/) and by
// the autotuner's search space (src/autotune/space_rules.h), which generalises them.
//
// Course module 4. A rule decides how to schedule a block from a few facts:
//   - which loops feed spatial iteration variables and which feed reductions (loop_roles);
//   - whether the body is a multiply-accumulate C = C + X * Y (is_multiply_accumulate),
//     and which multiplicand is read along the columns (multiplicands);
//   - which spatial loop indexes the rows operand (row_loop): the i of an i x j tile;
//   - how wide a column tile fits the innermost extent (column_tile), and how many rows of
//     it the target's vector registers hold (row_tile; both, and the GEMM rule's tile
//     gemm_tile, in include/minic/target/gemm_tile.h, which a graph pass reads too);
//   - whether the nest has enough work to pay for threads (parallelize).
// The sizes come from the target (include/minic/target/target.h), never from constants of
// a rule: vector tiles are counted in f32 lanes of its vector registers (vector_lanes: 16
// with AVX-512, 8 with AVX2), register tiles in its vector registers.
// It also holds the reduction and elementwise rules with their choices as arguments: the
// default rules call them with fixed values, the search space with a point's.
// For the matmul of stmt.h on an AVX-512 target: spatial = [i, j], reduce = [k], rows = A,
// columns = B, row_loop = i, column_tile(256, 16) = 32, row_tile(64, 32, target) = 8.
//
// Chapter: docs/module4-schedules.md#4-the-default-cpu-schedule
#pragma once

#include "minic/ir/loop/stmt.h"
#include "minic/schedule/schedule.h"
#include "minic/target/gemm_tile.h"
#include "minic/target/target.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace minic::schedule {

inline constexpr int64_t kParallelMinWork = 16384;  // iterations below which threads do not pay
// B in panels of this many bytes or more is prefetched panel by panel (the GEMM rule's
// prefetch_ahead): half of a core's L2 on the machines minic is measured on, beyond which
// a model's weights do not stay in the caches between inferences.
inline constexpr int64_t kPrefetchPanelBytes = int64_t{1} << 20;
// ... where two of its panels and A fit in this much of L2 together, unless its row tiles
// share the prefetches (prefetch_next_panel).
inline constexpr int64_t kPrefetchBudgetBytes = int64_t{1} << 20;
// A reduction is split among threads (schedule_reduction) into at most kMaxReductionParts
// runs of at least kMinReductionPart iterations, where the nest has kMinSplitWork
// iterations: below, a matrix-vector product's matrix (2 MB) sits in the caches and the
// partial results cost what the threads save.
inline constexpr int64_t kMaxReductionParts = 16;
inline constexpr int64_t kMinReductionPart = 64;
inline constexpr int64_t kMinSplitWork = int64_t{1} << 19;

// The f32 lanes of one vector register of a CPU target: the rules count vector tiles in
// them whatever the element type (16 with AVX-512, 8 with AVX2).
int64_t vector_lanes(const Target& target);

// The loop's extent (constant in lowered kernels; 0 if it is not).
int64_t extent_of(const Schedule& sch, const LoopRef& loop_ref);
// The loop's kind: serial, parallel, vectorized, unrolled, or bound to a thread axis.
loop::ForKind kind_of(const Schedule& sch, const LoopRef& loop_ref);

// The product of the loops' extents (a non-constant extent counts 1).
int64_t product(Schedule& sch, const std::vector<LoopRef>& loops);

// The block's iteration variables that each loop feeds: a loop feeds a variable if the
// variable's binding uses it.
struct LoopRoles {
  std::vector<LoopRef> spatial;  // feeding spatial variables only, outermost first
  std::vector<LoopRef> reduce;   // feeding reduction variables only
  bool mixed = false;            // some loop feeds both kinds (or none is clear)
};

LoopRoles loop_roles(Schedule& sch, const BlockRef& block_ref, const std::vector<LoopRef>& loops);

// True if the block's body is `C[...] = C[...] + X * Y`: the shape of GEMM and convolution
// (or `C + dot4_u8i8(X, Y)`, an int8 GEMM on words of four bytes).
bool is_multiply_accumulate(const loop::Block& block);

// The two multiplicands of a multiply-accumulate block, told apart: `columns` is the one
// whose last index uses the innermost spatial variable (B of C[i, j] += A[i, k] * B[k, j];
// the input of a convolution), `rows` the other (A; a convolution's weights). Each is the
// load a multiplicand reads, or the load under an integer operand's widening and zero point
// (cast<i32>(A[i, k]) - cast<i32>(za[i])). Both null if they cannot be told apart.
struct Operands {
  const loop::Load* rows = nullptr;
  const loop::Load* columns = nullptr;
};

Operands multiplicands(const loop::Block& block);

// P where `columns` reads B stored in panels of P columns, B_panels[floordiv(j, P), k,
// floormod(j, P)] with j a spatial iteration variable (minic.MatMulPanels,
// include/minic/ops/matmul_panels.h); 0 for any other read.
int64_t panel_width(const loop::Block& block, const loop::Load& columns);

// B in panels (minic.MatMulPanels) of kPrefetchPanelBytes or more does not stay in the
// caches from one inference to the next: each column tile's first row tile would wait for
// its panel from memory while the others find it in L2. This annotates the reduction loop
// prefetch_ahead = K x P, one panel on, so that the code generator prefetches the next
// panel into L2 while this one is computed (src/codegen/llvm/codegen_prefetch.cpp).
// With `row_tiles`, the loop over a column tile's row tiles, that loop is annotated
// prefetch_spread = P (the elements a step of the reduction reads): its iterations then
// share the next panel's lines, one line or less a step, instead of each prefetching, with
// each row of the panel it reads, the same row of the next one -- which asks for the whole
// next panel during the first row tile, faster than memory delivers it. Without row tiles
// to share them, only where two panels and A fit in kPrefetchBudgetBytes of L2 beside each
// other: there a longer reduction's panels (BERT's 3072) pushed A out of it, which cost
// more than the prefetch saved. The GEMM rule and its tuning space both call it.
void prefetch_next_panel(Schedule& sch, const loop::Block& block, const Operands& operands,
                         const LoopRef& reduction,
                         const std::optional<LoopRef>& row_tiles = std::nullopt);

// The index of `load`'s buffer in the block's reads.
int read_index(const loop::Block& block, const loop::Load* load);

// The innermost spatial loop other than the last that the rows operand depends on
// (MatMul's i, a convolution's output channel); nullopt if there is none.
std::optional<LoopRef> row_loop(Schedule& sch, const loop::Block& block, const LoopRoles& roles,
                                const Operands& operands);

// k if `load` reads the iteration variables that `loop_ref` feeds (the variable itself as
// the loop's binding) only as floordiv(v, k), one k: the input of a grouped convolution
// reads its output channel m only through its group, floordiv(m, group_out) (in the
// blocked layout, the block of output channels mb, floordiv(mb, Mg / b)); nullopt otherwise.
std::optional<int64_t> group_size(Schedule& sch, const loop::Block& block, const loop::Load& load,
                                  const LoopRef& loop_ref);

// A grouped convolution's output channel loop `i` split by group, where the columns
// operand reads it only at floordiv(i, q) (group_size: its input channel, group(m) *
// group_in + c) with q less than the extent of i and dividing it: `i` becomes the q
// channels of a group, and the loop over the groups is returned; nullopt, and nothing
// split, for other rows. The GEMM rule then takes register tiles that divide the group
// (gemm_tile_or_fail's whole_row_tiles), so that the rows of a tile read one input row,
// loaded once for all of them.
std::optional<LoopRef> split_groups(Schedule& sch, const loop::Block& block, LoopRef& i,
                                    const Operands& operands);

// The loops of a block that a primitive made: the last `count` of get_loops.
std::vector<LoopRef> innermost_loops(Schedule& sch, const BlockRef& block, size_t count);

// The loops of a block inside `above`, one of the loops around it (get_loops names a
// loop anew at each call, so loops are told apart by their variables).
std::vector<LoopRef> loops_below(Schedule& sch, const BlockRef& block, const LoopRef& above);

// gemm_tile's tile, refused (an Error) where it has no columns or fewer than 2 rows: the
// GEMM rule and its tuning space take a block on the same terms.
// With `whole_row_tiles` (the rows of one group, split_groups) the row tile divides the
// rows: row_tile's where gemm_tile's does not (68 rows: 4, not 6 and a last 2).
GemmTile gemm_tile_or_fail(int64_t rows, int64_t columns, int64_t reduction,
                           const Target& target, bool whole_row_tiles = false);

// Which of loops of these extents (outermost first) runs in parallel: the first of
// kMinParallelExtent iterations or more, whose threads' shares stay even (3 channel
// groups on 2 threads would run 2:1); else the longest; nullopt if none has more than one.
std::optional<size_t> parallel_loop(const std::vector<int64_t>& extents);

// Makes the loop of `outer` that parallel_loop picks parallel, when the whole nest has
// enough work (total_work >= kParallelMinWork).
void parallelize(Schedule& sch, const std::vector<LoopRef>& outer, int64_t total_work);

// The reduction rule: the init split out (decompose_reduction); with `inner`, the innermost
// spatial loop moved inside the reduction loops (unit stride in the output) and, where its
// extent fills a vector of `vector` lanes (more than 1), split by them and vectorised, in
// the update and the init (a pool over blocked channels: one vector of 16 per window
// element; a classifier's 1000 columns: 62 vectors and a last one of 8, which
// partition-loops cuts off); with `parallel`, the spatial loops outside parallelised -- or,
// where the innermost is the only one with more than one iteration (a matrix-vector
// product, M = 1), the outermost reduction loop split into reduction_parts runs whose
// partial results (rfactor) are computed in parallel and added after. Returns the number
// of runs (1: the reduction is not split).
int64_t schedule_reduction(Schedule& sch, const BlockRef& block, const LoopRoles& roles,
                           bool inner, int64_t vector, bool parallel);

// How many runs a reduction loop of `extent` iterations is split into to share it among
// threads: the most, a power of two up to kMaxReductionParts, that divide it into runs of
// at least kMinReductionPart iterations; 1 if none does.
int64_t reduction_parts(int64_t extent);

// The blocked convolution rule (src/schedule/rules/cpu_conv.cpp), for a multiply-
// accumulate whose innermost output axis is one or two vectors of channels that the
// weights hold too (a convolution in the blocked layout NCHWc): a register tile of T
// positions by U channel vectors, in the tile form or, for a small output plane, the
// plane form. The default rule takes blocked_conv_tile's choice, the search space any of
// blocked_conv_tiles. Each fails where the block has no such shape
// (and the rule where the tile's U does not divide the channel blocks or their groups).
struct ConvTile {
  int64_t positions = 1;  // T
  int64_t channels = 1;   // U
  int64_t chunk = 0;      // input channel blocks a pass of the plane form reduces (0: the
                          // tile form, every tile reducing them all)
  bool operator==(const ConvTile&) const = default;
};
std::vector<ConvTile> blocked_conv_tiles(Schedule& sch, const BlockRef& block,
                                         const LoopRoles& roles, const Target& target);
ConvTile blocked_conv_tile(Schedule& sch, const BlockRef& block, const LoopRoles& roles,
                           const Target& target);
void schedule_blocked_conv(Schedule& sch, const BlockRef& block, const LoopRoles& roles,
                           const Target& target, ConvTile tile);

// The loop whose iterations read the block's largest input in memory order: the loop
// that feeds the iteration variable of that read's last index (the variable alone, so
// its iterations are neighbours); nullopt if none does.
std::optional<LoopRef> loop_along_input(Schedule& sch, const BlockRef& block,
                                        const std::vector<LoopRef>& loops);

// A copy that reads across its nest (a transpose, a layout change out of blocks): the
// block's largest input is read in memory order (its last index) by a spatial loop other
// than the innermost, alone or as floormod(v, b) (the lane of a blocked layout, b lanes),
// or, read through a reshape (a last index that is no variable), by the loop whose step
// moves the address one element where the innermost loop's moves it more: that loop and
// the tile its reads share a cache line over (b, or one vector).
// nullopt where the block is not such a copy, or its loops are too short to tile.
struct TransposedRead {
  LoopRef loop;      // the loop that reads the input in memory order
  int64_t tile = 0;  // how many of its iterations go inside the vector loop
};
std::optional<TransposedRead> transposed_read(Schedule& sch, const BlockRef& block,
                                              const LoopRoles& roles, int64_t vector);

// How a block of spatial loops is scheduled, the default rule and the search space alike:
// by the transposed copy rule where it reads across its nest (`transposed`, `roles` as
// given); otherwise by the elementwise rule on `roles`, where rows shorter than a vector
// (a 14 x 14 plane) are fused with the loop around them when every access of the block
// runs through the two in memory order (its offset rises by 1 along the last and by its
// extent along the one before) or not at all (that fusion is applied to `sch`).
struct SpatialForm {
  std::optional<TransposedRead> transposed;
  LoopRoles roles;
};
SpatialForm spatial_form(Schedule& sch, const BlockRef& block, const LoopRoles& roles,
                         int64_t vector);

// The transposed copy rule: `read`'s loop split by its tile and the innermost loop by
// `vector` lanes, the two inner parts innermost (the vector loop last, vectorised), so
// that the lines a vector gathers from are read again, from L1, by the next iterations of
// the tile, where in the elementwise rule's order each is read once per vector; with
// `parallel`, the outer loops parallelised.
void schedule_transposed_copy(Schedule& sch, const LoopRoles& roles, const TransposedRead& read,
                              int64_t vector, bool parallel);

// True when a rule applied to an earlier block took block `name`: folded it into its own
// (the blocked convolution rule's epilogue in the tile form) or moved it into its loop
// nest (the epilogue of the plane form: a loop above it is no longer serial). The default
// rules and the search space then leave it as it is.
bool taken_by_earlier_rule(const loop::PrimFunc& func, const std::string& name);

// The blocks of `func` that read `buffer`, in program order (each once).
std::vector<std::string> readers_of(const loop::PrimFunc& func, const loop::BufferNode* buffer);

// The block other than `except` that reads `buffer`, if exactly one does.
std::optional<std::string> only_reader(const loop::PrimFunc& func, const loop::BufferNode* buffer,
                                       const std::string& except);

// The last steps of a register tile whose sums accumulate in a local buffer (cache_write)
// copied out by `copy` under the tile loop: the zeroing split out before `reduction`
// (decompose_reduction), the update's `rows` unrolled and `columns` vectorised, and the
// two innermost loops of the zeroing and of the copy-out likewise. The GEMM rule, its
// tuning space's schedule and the attention rule end their tiles with it.
void finish_register_tile(Schedule& sch, const BlockRef& block, const BlockRef& copy,
                          const LoopRef& reduction, const LoopRef& rows, const LoopRef& columns);

// Folds the one block that reads the result of a tile's copy-out (an epilogue: a bias, an
// activation, a residual addition) into the copy-out, where reverse_compute_inline allows
// it, so that the sums go from registers through it to the output; otherwise leaves the
// schedule as it was. The blocked convolution and GEMM rules end with it.
void fold_epilogue(Schedule& sch, const BlockRef& copy);

// The row reduction rule, for a reduction whose innermost reduction loop reads its input
// in memory order (a softmax's or a layer norm's row): that loop split by `vector` lanes,
// the lanes made partial results (rfactor into a "local" buffer) that accumulate as one
// vector, and combined after the row; with `parallel`, the spatial loops parallelised.
// Fails where the loop's extent is not a multiple of `vector`.
void schedule_row_reduction(Schedule& sch, const BlockRef& block, const LoopRoles& roles,
                            int64_t vector, bool parallel);

// The elementwise rule: the innermost loop split by `vector` lanes and vectorised (1: not
// split); with `parallel`, the outer loops parallelised.
void schedule_elementwise(Schedule& sch, const LoopRoles& roles, int64_t vector, bool parallel);

}  // namespace minic::schedule
