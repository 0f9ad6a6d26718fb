// The attention rule: a kernel of minic.FusedAttention computed a block of query rows at
// a time, every stage of the block under one loop.
//
// Course module 4. The op's six stages (src/ops/fused_attention.cpp) -- scores, their row
// maximum, p = exp(scores - max), its row sum, context = p x V, Y = context / sum -- would
// each get a rule of their own, each a pass over all S x T scores of every head. Here the
// last two are tiled as a GEMM (the GEMM rule's register tiles of mr x nr, cpu_default.cpp),
// its rows taken in blocks of a few tiles, and the four stages before move under the block
// loop (compute_at):
//
//   parallel for head
//     for block of rows (block_tiles register tiles of mr rows)
//       scores: register tiles of mr x (1 or 2 vectors) over D
//       max:    a row reduction, vectors of partial maxima
//       p:      exp, vectorised
//       sum:    a row reduction, vectors of partial sums
//       for tile of mr rows in the block, for column tile of nr
//         context: register tile mr x nr over T; then Y = context / sum, stored
//
// so each score is written, read and exponentiated while its block is in L1, and none of
// it goes to memory. The heads are shared by the threads (or the blocks, with few heads).
//
// The rule takes a kernel whose blocks are exactly those six, told by their shape (which
// block reads which, which are multiply-accumulates and which reductions), and refuses
// (false, the schedule untouched) anything else or a step a primitive refuses: the
// default rules then schedule each block.
//
// Chapter: docs/module4-schedules.md#9-fused-attention
#include "cpu_attention.h"

#include "minic/ir/loop/access.h"
#include "minic/schedule/block_roles.h"
#include "minic/schedule/primitives.h"
#include "minic/support/error.h"
#include "minic/support/explain.h"

#include <algorithm>
#include <optional>

namespace minic::schedule {
namespace {

using loop::Block;

// The six blocks of an attention kernel, in the order its compute rule makes them.
struct AttentionBlocks {
  std::string scores, max, p, sum, context, out;
};

bool has_reduction(const Block& block) {
  return std::any_of(block.iter_vars.begin(), block.iter_vars.end(),
                     [](const loop::IterVar& iter) { return iter.kind == loop::IterKind::reduce; });
}

std::optional<AttentionBlocks> attention_blocks(const loop::PrimFunc& func) {
  const std::vector<std::string> names = get_block_names(func);
  if (names.size() != 6) return std::nullopt;
  std::vector<const Block*> blocks;
  for (const std::string& name : names) {
    blocks.push_back(&get_block(func, name));
    if (blocks.back()->writes.size() != 1) return std::nullopt;
  }
  auto reads = [&](size_t reader, size_t producer) {
    return loop::block_buffer_use(*blocks[reader])
        .reads_buffer(blocks[producer]->writes[0].buffer.get());
  };
  const bool shape = is_multiply_accumulate(*blocks[0]) && has_reduction(*blocks[1]) &&
                     !has_reduction(*blocks[2]) && has_reduction(*blocks[3]) &&
                     is_multiply_accumulate(*blocks[4]) && !has_reduction(*blocks[5]);
  const bool flow = reads(1, 0) && reads(2, 0) && reads(2, 1) && reads(3, 2) && reads(4, 2) &&
                    reads(5, 4) && reads(5, 3);
  if (!shape || !flow) return std::nullopt;
  return AttentionBlocks{names[0], names[1], names[2], names[3], names[4], names[5]};
}

// The rows of a block: as many register tiles of mr rows (up to four) as keep the block's
// scores and exponentials, 2 x rows x T floats, within half of kPanelBytes, so that they
// stay in L1 beside the keys and values the block streams. Each block reads all of K_t
// and V once: with BERT's 128 keys, blocks of two tiles (12 rows) stream them half as
// often as single tiles do.
int64_t block_tiles(int64_t mr, int64_t keys) {
  const int64_t tile_bytes = 2 * mr * keys * static_cast<int64_t>(sizeof(float));
  return std::clamp<int64_t>(kPanelBytes / 2 / tile_bytes, 1, 4);
}

// The loops of `block` below `above`, with their roles.
LoopRoles roles_below(Schedule& sch, const BlockRef& block, const LoopRef& above) {
  return loop_roles(sch, block, loops_below(sch, block, above));
}

// scores[.., i, j] += Q[.., i, d] * K_t[.., d, j] under `row_blocks`: register tiles of
// mr rows by column vectors of j, accumulated in the block's scores (which LLVM keeps in
// registers over the reduction: their addresses do not change in it). Returns the column
// tile.
int64_t tile_scores(Schedule& sch, const std::string& name, const LoopRef& row_blocks,
                    int64_t mr, int64_t lanes) {
  BlockRef scores = sch.get_block(name);
  LoopRoles loops = roles_below(sch, scores, row_blocks);
  if (loops.mixed || loops.spatial.size() < 2 || loops.reduce.size() != 1) {
    fail("the scores block is not a product over one reduction loop");
  }
  const LoopRef rows = loops.spatial[loops.spatial.size() - 2];
  const LoopRef j = loops.spatial.back();
  const int64_t columns = column_tile(extent_of(sch, j), lanes);
  if (columns == 0) fail("no column tile for {} keys", extent_of(sch, j));
  std::vector<LoopRef> j_parts = sch.split(j, {-1, columns});
  std::vector<LoopRef> row_parts = sch.split(rows, {-1, mr});
  sch.reorder({row_parts[0], j_parts[0], loops.reduce[0], row_parts[1], j_parts[1]});
  BlockRef init = sch.decompose_reduction(scores, loops.reduce[0]);
  sch.unroll(row_parts[1]);
  sch.vectorize(j_parts[1]);
  sch.vectorize(innermost_loops(sch, init, 1)[0]);
  return columns;
}

// The row maximum and sum under `row_blocks`: vectors of partial results (the row
// reduction rule), or one element at a time where the row is not whole vectors; p:
// vectorised along the row.
void schedule_row_stages(Schedule& sch, const AttentionBlocks& names, const LoopRef& row_blocks,
                         int64_t lanes) {
  for (const std::string* name : {&names.max, &names.sum}) {
    Schedule attempt = sch;
    try {
      BlockRef block = attempt.get_block(*name);
      schedule_row_reduction(attempt, block, loop_roles(attempt, block, attempt.get_loops(block)),
                             lanes, /*parallel=*/false);
      sch = std::move(attempt);
    } catch (const InternalError&) {
      throw;  // a bug, not a refusal
    } catch (const Error&) {
      // The reduction keeps its plain loop.
    }
  }
  BlockRef p = sch.get_block(names.p);
  schedule_elementwise(sch, roles_below(sch, p, row_blocks), lanes, /*parallel=*/false);
}

// Schedules the six blocks; returns what it chose, for `minic explain`.
std::string schedule_attention_blocks(Schedule& sch, const AttentionBlocks& names,
                                      const Target& target) {
  const int64_t lanes = vector_lanes(target);
  // 1. context and Y: C[.., i, e] += p[.., i, j] * V[.., j, e], tiled as a GEMM whose row
  //    tiles are the loop the other stages move under.
  BlockRef context = sch.get_block(names.context);
  LoopRoles roles = loop_roles(sch, context, sch.get_loops(context));
  if (roles.mixed || roles.spatial.size() < 2 || roles.reduce.size() != 1) {
    fail("the context block is not a product over one reduction loop");
  }
  const LoopRef i = roles.spatial[roles.spatial.size() - 2];
  const LoopRef e = roles.spatial.back();
  const int64_t t = extent_of(sch, roles.reduce[0]);
  const GemmTile tile = gemm_tile_or_fail(extent_of(sch, i), extent_of(sch, e), t, target);
  const int64_t total_work = product(sch, roles.spatial) * t;
  BlockRef copy = sch.cache_write(context, 0, "local");
  std::vector<LoopRef> e_parts = sch.split(e, {-1, tile.columns});
  // Rows in blocks of register tiles: [blocks, tiles, mr].
  const int64_t tiles = block_tiles(tile.rows, t);
  std::vector<LoopRef> i_parts = sch.split(i, {-1, tiles, tile.rows});
  std::vector<LoopRef> outer(roles.spatial.begin(), roles.spatial.end() - 2);
  outer.push_back(i_parts[0]);
  // The GEMM rule's register tile: [outer.., tiles, eo, j, mr (unrolled), nr
  // (vectorised)], the sums in a local buffer copied out under eo.
  std::vector<LoopRef> order = outer;
  order.insert(order.end(), {i_parts[1], e_parts[0], roles.reduce[0], i_parts[2], e_parts[1]});
  sch.reorder(order);
  sch.reverse_compute_at(copy, e_parts[0]);
  finish_register_tile(sch, context, copy, roles.reduce[0], i_parts[2], e_parts[1]);
  // Y = context / sum reads two stages, so it cannot fold into the copy-out
  // (reverse_compute_inline takes one producer); it follows it, tile by tile.
  BlockRef out = sch.get_block(names.out);
  sch.reverse_compute_at(out, e_parts[0]);
  std::vector<LoopRef> out_tile = innermost_loops(sch, out, 2);
  sch.unroll(out_tile[0]);
  sch.vectorize(out_tile[1]);
  const LoopRef& row_blocks = i_parts[0];

  // 2. The stages before, consumers first, under the row blocks: each computes the block's
  //    rows.
  for (const std::string* name : {&names.sum, &names.p, &names.max, &names.scores}) {
    sch.compute_at(sch.get_block(*name), row_blocks);
  }

  // 3. The scores, then the row statistics and exponentials.
  const int64_t columns = tile_scores(sch, names.scores, row_blocks, tile.rows, lanes);
  schedule_row_stages(sch, names, row_blocks, lanes);

  parallelize(sch, outer, total_work);
  return fmt::format("blocks of {} x {} rows, register tiles of {} x {} for the scores and "
                     "{} x {} for the product with V", tiles, tile.rows, tile.rows, columns,
                     tile.rows, tile.columns);
}

}  // namespace

bool schedule_attention(Schedule& sch, const Target& target) {
  std::optional<AttentionBlocks> names = attention_blocks(sch.func());
  if (!names) return false;
  Schedule attempt = sch;
  std::string choice;
  try {
    choice = schedule_attention_blocks(attempt, *names, target);
  } catch (const InternalError&) {
    throw;  // a bug, not a refusal
  } catch (const Error& refusal) {
    explain::note("kernel {}: the attention rule refused: {}", sch.func().name, refusal.what());
    return false;
  }
  sch = std::move(attempt);
  explain::note("kernel {}: the attention rule, every stage computed in row blocks: {}",
                sch.func().name, choice);
  return true;
}

}  // namespace minic::schedule
