// The blocked convolution rule (CPU): a register tile of T output positions by U vectors
// of output channels.
//
// Course module 4. In the blocked layout (include/minic/ops/nchwc.h) a convolution's
// innermost output axis j is one vector of b channels, and so is its weights' last axis:
//
//   Y[n, mb, oh, ow, j] += X[n, cb, oh + kh, ow + kw, i] * W[mb, cb, kh, kw, i, j]
//
// Each step of the reduction multiplies one input value, broadcast to a vector, by one
// vector of weights. A tile of T neighbouring positions (along ow) by U channel blocks
// (along mb) keeps T * U vector accumulators in registers and, per step, loads T input
// values and U weight vectors for T * U multiply-adds; the rule picks the tile with the
// most multiply-adds per load whose accumulators fit the target's registers, less
// kSpareRegisters (U dividing the channel blocks; T need not divide the positions: the
// split's guard is cut off by the partition-loops pass into a last, shorter tile):
//
//   parallel n, mb.0, oh   ow.0          (the first of them with more than one iteration)
//     acc = 0                            (decompose_reduction)
//     for cb, kh, kw, i                  (the reduction, as lowered)
//       for ow.1 (T, unrolled)  for mb.1 (U, unrolled)  vectorised j:
//         acc[mb.1, ow.1, :] += X[.., ow.0 * T + ow.1 .., i] * W[mb.0 * U + mb.1, .., :]
//     Y[tile] = epilogue(acc)            (cache_write "local", reverse_compute_at ow.0)
//
// The positions go outside the channels in the unrolled body, so that one broadcast is
// used U times and dropped: T * U accumulators, U weight vectors and one broadcast live,
// within the 32 registers of AVX-512 (the other order keeps T broadcasts live, and LLVM
// spills once T * U + T + 1 passes 32).
//
// The epilogue -- the bias, and the activation or residual addition fused after the
// convolution -- is folded into the copy-out of the tile (reverse_compute_inline), so the
// sums go from registers through it to the output, with no buffer of raw sums between.
//
// That is the tile form, in which every tile streams all the weights of its U channel
// blocks. Where the output plane of a group of U channel blocks is small (kMaxPlaneBytes)
// and there are kMinPlaneGroups groups or more, the plane form instead puts passes over
// chunks of input channel blocks (cb.0) outside the positions, so that a pass's weights
// (kMaxPassWeightBytes) stay in L1 while all the plane's tiles use them:
//
//   parallel n, mb.0
//     Y'[plane] = 0                      (decompose_reduction; Y' shrunk to the plane)
//     for cb.0, the other outer loops, ow.0
//       for cb.1, kh, kw, i
//         for ow.1 (T, unrolled)  for mb.1 (U, unrolled)  vectorised j:
//           Y'[tile] += X[..] * W[..]    (LLVM keeps the tile in registers over cb.1..i)
//     Y[plane] = epilogue(Y'[plane])     (reverse_compute_at mb.0)
//
// A depthwise convolution reads lane j of its own input block (X[n, mb, .., j]): its
// positions are tiled the same way, with U = 1, each step loading a vector of the input.
// The rule reads the roles off the block's shape, not its op: the position loop is the
// innermost spatial loop (after j) with more than one iteration that the input depends on
// and the weights do not; the channel loop, one the weights depend on and the input does
// not (a product of narrow matrices has none, and goes to the GEMM rule), or that the
// input reads only as floordiv(mb, k), its group: a grouped convolution's channel tile then
// stays within a group (U divides k). Where the positions are one (a 1-d convolution
// stored as [.., H, 1, ..]), the rows take their place.
//
// Chapter: docs/module4-schedules.md#7-blocked-layouts-nchwc
#include "minic/schedule/block_roles.h"

#include "minic/ir/loop/analysis.h"
#include "minic/schedule/primitives.h"
#include "minic/support/error.h"
#include "minic/tensor/tensor.h"

#include <algorithm>
#include <cstddef>
#include <optional>

namespace minic::schedule {
namespace {

constexpr int64_t kMaxPositions = 14;      // T at most: the unrolled body stays small
constexpr int64_t kMaxChannelBlocks = 4;   // U at most
constexpr int64_t kMaxInlinedPaddingReduction = 64;  // multiply-adds an output, at most
// Registers besides the accumulators: a broadcast and the weight vectors. Where U weight
// vectors and the broadcast do not all fit beside T * U accumulators, LLVM reads a weight
// vector from L1 as an operand of the multiply-adds, or spills an accumulator: ResNet-50's
// 7 x 4 tile on 7 x 7 planes (28 + 4 + 1 > 32) spills one in its inner loop, and still
// ran faster than the 4 x 4 and 7 x 2 tiles, which fit.
constexpr int64_t kSpareRegisters = 4;
constexpr int64_t kWeightLoadCost = 4;     // a weight vector's load against a broadcast's
constexpr int64_t kMaxPlaneBytes = 32 * 1024;      // the plane form's sums, at most
constexpr int64_t kMaxPassWeightBytes = 16 * 1024;  // the weights of one of its passes
constexpr int64_t kMinPlaneGroups = 4;             // its channel groups, at least

// True if `load` reads an iteration variable of `block` that `loop_ref` feeds.
bool reads_loop(Schedule& sch, const loop::Block& block, const loop::Load& load,
                const LoopRef& loop_ref) {
  const loop::Var* var = sch.loop_var(loop_ref.var).as<loop::Var>();
  for (const loop::IterVar& iter : block.iter_vars) {
    if (!loop::uses_var(iter.binding, var)) continue;
    for (const loop::Expr& index : load.indices) {
      if (loop::uses_var(index, iter.var.as<loop::Var>())) return true;
    }
  }
  return false;
}

// The block that writes `buffer` when its value is a select (zero borders around an
// input: a padding stage), nullopt otherwise.
std::optional<std::string> padding_writer(const loop::PrimFunc& func,
                                          const loop::BufferNode* buffer) {
  for (const std::string& name : get_block_names(func)) {
    const loop::Block& block = get_block(func, name);
    if (block.writes.size() != 1 || block.writes[0].buffer.get() != buffer) continue;
    const auto* store = block.body.as<loop::Store>();
    if (store && store->value.as<loop::Select>()) return name;
  }
  return std::nullopt;
}

// The padding stage before a convolution with few multiply-adds an output (a depthwise
// one: 9 for 3 x 3) goes into its reads (compute_inline): the input is read where it lies,
// through `select(in bounds, X[..], 0)`, with no padded copy of it made each inference --
// a copy that costs as much as such a convolution itself. The partition-loops pass then
// cuts the rows and tiles at the borders off the loops, so that the interior reads without
// the select. A convolution over many input channels keeps its padding stage: the copy is
// a few percent of its work, and the border rows and tiles, copied and guarded, would cost
// more (measured on ResNet-18).
void inline_padding(Schedule& sch, const BlockRef& conv, int64_t reduction) {
  if (reduction > kMaxInlinedPaddingReduction) return;
  // The names first: inlining replaces the function, and the block read here with it.
  std::vector<std::string> paddings;
  const loop::Block& block = get_block(sch.func(), sch.block_name(conv.var));
  for (const loop::BufferRegion& read : block.reads) {
    if (std::optional<std::string> padding = padding_writer(sch.func(), read.buffer.get())) {
      paddings.push_back(*padding);
    }
  }
  for (const std::string& padding : paddings) {
    Schedule attempt = sch;
    try {
      attempt.compute_inline(attempt.get_block(padding));
      sch = std::move(attempt);
    } catch (const InternalError&) {
      throw;  // a bug, not a refusal
    } catch (const Error&) {
      // The padding stays a loop nest of its own.
    }
  }
}

// The loops the rule tiles: the position loop (the input depends on it, the weights do
// not), the channel loop if there is one (the other way round), the channel vector j.
struct ConvLoops {
  LoopRef position;
  std::optional<LoopRef> channel;
  LoopRef j;
  int64_t vectors = 1;      // j's extent in vectors
  int64_t group_size = 0;   // channel blocks per group, which U must divide (0: no groups)
  loop::Buffer weights;     // the operand the position loop does not read
};

ConvLoops conv_loops(Schedule& sch, const BlockRef& block_ref, const LoopRoles& roles,
                     const Target& target) {
  const loop::Block& block = get_block(sch.func(), sch.block_name(block_ref.var));
  if (!is_multiply_accumulate(block) || roles.spatial.size() < 2 || roles.reduce.empty()) {
    fail("not a multiply-accumulate over spatial and reduction loops");
  }
  // j: one or two vectors of channels, the output's and the weights' last axis.
  const LoopRef j = roles.spatial.back();
  const int64_t lanes = vector_lanes(target);
  const int64_t extent_j = extent_of(sch, j);
  if (extent_j % lanes != 0 || extent_j > 2 * lanes) {
    fail("the innermost output axis ({} elements) is not one or two vectors", extent_j);
  }
  // A float product of two loads (not an int8 word form's dot4_u8i8, which the GEMM rule
  // takes).
  const auto* mul = block.body.as<loop::Store>()->value.as<loop::Add>()->b.as<loop::Mul>();
  if (!mul) fail("the product is not a multiplication");
  const auto* a = mul->a.as<loop::Load>();
  const auto* b = mul->b.as<loop::Load>();
  if (!a || !b) fail("the multiplicands are not loads");
  // Innermost first. A grouped convolution's input reads the channel loop through its
  // groups only: the loop is still the channel loop, tiled within a group.
  std::optional<LoopRef> position;
  std::optional<LoopRef> channel;
  int64_t group = 0;
  const loop::Load* weights = nullptr;
  for (size_t l = roles.spatial.size() - 1; l-- > 0;) {
    const LoopRef& loop = roles.spatial[l];
    const bool reads_a = reads_loop(sch, block, *a, loop);
    const bool reads_b = reads_loop(sch, block, *b, loop);
    if (reads_a == reads_b) {
      if (!position || channel || !reads_a) continue;
      const loop::Load* input = weights == a ? b : a;
      if (std::optional<int64_t> size = group_size(sch, block, *input, loop)) {
        channel = loop;
        group = *size;
      }
      continue;
    }
    if (!position && extent_of(sch, loop) > 1) {
      position = loop;
      weights = reads_a ? b : a;
    } else if (position && !channel && (reads_a ? a : b) == weights) {
      channel = loop;
    }
  }
  if (!position) fail("no loop of positions that the input reads and the weights do not");
  if (!reads_loop(sch, block, *weights, j)) fail("the weights do not hold the channel vector");
  // A convolution's channel vectors come in blocks (a loop over them), or each reads its
  // own input channels (depthwise); a product of narrow matrices has neither, and takes
  // the GEMM rule.
  const loop::Load* input = weights == a ? b : a;
  if (!channel && !reads_loop(sch, block, *input, j)) {
    fail("no loop over channel blocks, and the input does not read the channel vector");
  }
  return {*position, channel, j, extent_j / lanes, group, weights->buffer};
}

// Every tile whose T is balanced for the positions (T at most kMaxPositions; the last tile
// may be shorter) and U divides the channel blocks (U at most kMaxChannelBlocks), with
// T * U * vectors accumulators that fit.
std::vector<ConvTile> fitting_tiles(Schedule& sch, const ConvLoops& loops, const Target& target) {
  const int64_t positions = extent_of(sch, loops.position);
  const int64_t blocks = loops.channel ? extent_of(sch, *loops.channel) : 1;
  std::vector<ConvTile> tiles;
  for (int64_t u = 1; u <= std::min(blocks, kMaxChannelBlocks); ++u) {
    if (blocks % u != 0 || (loops.group_size > 0 && loops.group_size % u != 0)) continue;
    for (int64_t t = 1; t <= std::min(positions, kMaxPositions); ++t) {
      // T is balanced: ceil(P / T) tiles of T positions cover the P positions with the
      // smallest tail there is for that many tiles (P = 55: T = 8, seven tiles, the last 7).
      const int64_t tiles_needed = (positions + t - 1) / t;
      if ((positions + tiles_needed - 1) / tiles_needed != t) continue;
      if (t * u * loops.vectors > target.cpu().vector_registers - kSpareRegisters) continue;
      tiles.push_back({t, u});
    }
  }
  return tiles;
}

// The input channel blocks a pass of the plane form reduces, for a tile whose output
// plane (the positions of its U channel blocks) fits kMaxPlaneBytes: the most that divide
// the blocks with their weights within kMaxPassWeightBytes (at least one); 0 where the
// plane is larger, or there is no channel loop, no second pass, or fewer than
// kMinPlaneGroups groups of U channel blocks (the planes are what threads share).
int64_t plane_chunk(Schedule& sch, const LoopRoles& roles, const ConvLoops& loops,
                    const ConvTile& tile, const Target& target) {
  const int64_t blocks = extent_of(sch, roles.reduce.front());
  if (!loops.channel || blocks < 2) return 0;
  if (extent_of(sch, *loops.channel) / tile.channels < kMinPlaneGroups) return 0;
  const int64_t bytes = tile.channels * loops.vectors * vector_lanes(target) * 4;
  int64_t plane = bytes;
  bool below_channel = false;
  for (size_t l = 0; l + 1 < roles.spatial.size(); ++l) {
    if (below_channel) plane *= extent_of(sch, roles.spatial[l]);
    below_channel = below_channel || roles.spatial[l].var == loops.channel->var;
  }
  if (plane > kMaxPlaneBytes) return 0;
  const std::vector<LoopRef> taps(roles.reduce.begin() + 1, roles.reduce.end());
  const int64_t block_weights = bytes * product(sch, taps);  // one input channel block's
  int64_t chunk = 1;
  for (int64_t c = 2; c <= blocks; ++c) {
    if (blocks % c == 0 && c * block_weights <= kMaxPassWeightBytes) chunk = c;
  }
  return chunk;
}

}  // namespace

std::vector<ConvTile> blocked_conv_tiles(Schedule& sch, const BlockRef& block,
                                         const LoopRoles& roles, const Target& target) {
  const ConvLoops loops = conv_loops(sch, block, roles, target);
  std::vector<ConvTile> tiles;
  for (ConvTile tile : fitting_tiles(sch, loops, target)) {
    tiles.push_back(tile);
    tile.chunk = plane_chunk(sch, roles, loops, tile, target);
    if (tile.chunk > 0) tiles.push_back(tile);
  }
  return tiles;
}

ConvTile blocked_conv_tile(Schedule& sch, const BlockRef& block, const LoopRoles& roles,
                           const Target& target) {
  // The most multiply-adds per load over a row of P positions: P * U of them, for T
  // broadcasts and U weight vectors a tile (the last tile P mod T broadcasts). The input's
  // broadcasts come from L1 and the weight vectors, streamed once per tile, mostly from
  // L2: a weight vector counts kWeightLoadCost broadcasts. The larger tile on a tie. The
  // plane form, where plane_chunk allows it.
  const ConvLoops loops = conv_loops(sch, block, roles, target);
  const int64_t positions = extent_of(sch, loops.position);
  ConvTile best;
  double best_score = 0;
  for (const ConvTile& tile : fitting_tiles(sch, loops, target)) {
    const int64_t t = tile.positions;
    const int64_t u = tile.channels;
    const int64_t tail = positions % t;
    const int64_t loads = (positions / t) * (t + kWeightLoadCost * u) +
                          (tail > 0 ? tail + kWeightLoadCost * u : 0);
    double score = static_cast<double>(positions * u) / static_cast<double>(loads);
    bool larger = t * u > best.positions * best.channels;
    if (score > best_score || (score == best_score && larger)) {
      best = tile;
      best_score = score;
    }
  }
  best.chunk = plane_chunk(sch, roles, loops, best, target);
  return best;
}

namespace {

// Weights of kPrefetchPanelBytes or more (block_roles.h) come from memory, not the caches,
// on every inference of a model with many such layers (ResNet-50's last stage: 9.4 MB a
// 3 x 3 convolution). In the plane form a pass reads the weights of `chunk` input channel
// blocks, and the next pass those just after them (W[mb, cb, kh, kw, i, j] holds the
// blocks of one mb in order): so the pass's outermost loop (cb.1, or where a pass is one
// block, the first tap loop: a loop of one iteration is removed, and its annotation with
// it) is annotated prefetch_ahead = the elements of `chunk` blocks, and the first loop
// over the plane's tiles with more than one iteration (`tiles`: the rows, then the tiles
// of a row) prefetch_spread = j's extent: the code generator then has each step of each
// tile prefetch a share of the next pass's weights into L2, the tiles fetching them once
// between them (src/codegen/llvm/codegen_prefetch.cpp), rather than the first
// tile asking for all of them at once. The last pass's prefetches land on the next mb's
// first weights.
void prefetch_next_pass(Schedule& sch, const LoopRoles& roles, const ConvLoops& conv,
                        const std::vector<LoopRef>& tiles, const LoopRef& pass, int64_t chunk) {
  if (num_elements(conv.weights->shape) * dtype_size(conv.weights->dtype) < kPrefetchPanelBytes) {
    return;
  }
  auto first_of_several = [&](const std::vector<LoopRef>& loops) {
    return std::find_if(loops.begin(), loops.end(),
                        [&](const LoopRef& loop) { return extent_of(sch, loop) > 1; });
  };
  std::vector<LoopRef> loops = {pass};  // a pass's loops, outermost first
  loops.insert(loops.end(), roles.reduce.begin() + 1, roles.reduce.end());
  const auto outermost = first_of_several(loops);
  if (outermost == loops.end()) return;
  const int64_t ahead = chunk * product(sch, {loops.begin() + 1, loops.end()}) *
                        extent_of(sch, conv.j);
  sch.annotate(*outermost, "prefetch_ahead", ahead);
  // The plane's tiles share the prefetches: each step of each weight vector's reduction
  // reads one vector of j, and the tiles' steps together prefetch the next pass once.
  if (auto rows = first_of_several(tiles); rows != tiles.end()) {
    sch.annotate(*rows, "prefetch_spread", extent_of(sch, conv.j));
  }
}

// The plane form: [loops before the channel loop] [mb.0] [cb.0] [the other outer loops]
// [ow.0] [cb.1, kh, kw, i] [ow.1, mb.1, j]. The sums of the plane accumulate in the
// block's own buffer (compact-buffers shrinks it to the plane) over the passes cb.0;
// each pass reads a chunk of input channel blocks whose weights stay in L1 while every
// tile of the plane uses them. The epilogue then runs over the finished plane.
void schedule_plane_conv(Schedule& sch, const BlockRef& block_ref, const LoopRoles& roles,
                         const ConvLoops& conv, ConvTile tile, int64_t total_work) {
  const std::string name = sch.block_name(block_ref.var);
  const loop::BufferNode* sums = get_block(sch.func(), name).writes.at(0).buffer.get();
  std::optional<std::string> epilogue = only_reader(sch.func(), sums, name);
  std::vector<LoopRef> p_parts = sch.split(conv.position, {-1, tile.positions});
  std::vector<LoopRef> c_parts = sch.split(*conv.channel, {-1, tile.channels});
  std::vector<LoopRef> passes = sch.split(roles.reduce.front(), {-1, tile.chunk});
  std::vector<LoopRef> outer;  // down to mb.0
  std::vector<LoopRef> order;
  for (size_t l = 0; l + 1 < roles.spatial.size(); ++l) {
    const std::string& var = roles.spatial[l].var;
    if (var == conv.position.var) continue;
    if (var == conv.channel->var) {
      outer.push_back(c_parts[0]);
      order = outer;
      order.push_back(passes[0]);
    } else {
      (order.empty() ? outer : order).push_back(roles.spatial[l]);
    }
  }
  order.push_back(p_parts[0]);
  // The loops over the plane's tiles, inside a pass: those after `outer` and cb.0.
  const auto first_tile = order.begin() + static_cast<std::ptrdiff_t>(outer.size()) + 1;
  const std::vector<LoopRef> tiles(first_tile, order.end());
  order.push_back(passes[1]);
  order.insert(order.end(), roles.reduce.begin() + 1, roles.reduce.end());
  order.push_back(p_parts[1]);
  order.push_back(c_parts[1]);
  order.push_back(conv.j);
  sch.reorder(order);
  prefetch_next_pass(sch, roles, conv, tiles, passes[1], tile.chunk);
  BlockRef init = sch.decompose_reduction(block_ref, passes[0]);
  sch.unroll(c_parts[1]);
  sch.unroll(p_parts[1]);
  sch.vectorize(conv.j);
  sch.vectorize(innermost_loops(sch, init, 1)[0]);
  if (epilogue) {
    Schedule attempt = sch;
    try {
      BlockRef after = attempt.get_block(*epilogue);
      attempt.reverse_compute_at(after, c_parts[0]);
      attempt.vectorize(innermost_loops(attempt, after, 1)[0]);
      sch = std::move(attempt);
    } catch (const InternalError&) {
      throw;  // a bug, not a refusal
    } catch (const Error&) {
      // The epilogue stays a loop nest of its own, scheduled by its own rule.
    }
  }
  parallelize(sch, outer, total_work);
}

}  // namespace

void schedule_blocked_conv(Schedule& sch, const BlockRef& block_ref, const LoopRoles& roles,
                           const Target& target, ConvTile tile) {
  const ConvLoops conv = conv_loops(sch, block_ref, roles, target);
  const LoopRef& j = conv.j;
  const LoopRef& position = conv.position;
  const std::optional<LoopRef>& channel = conv.channel;
  if (tile.positions < 1 || (channel ? extent_of(sch, *channel) : 1) % tile.channels != 0 ||
      (conv.group_size > 0 && conv.group_size % tile.channels != 0)) {
    fail("the tile {} x {}: U does not divide the channel blocks (or their groups)",
         tile.positions, tile.channels);
  }
  const int64_t total_work = product(sch, roles.spatial) * product(sch, roles.reduce);
  if (tile.chunk > 0) {
    if (!channel || extent_of(sch, roles.reduce.front()) % tile.chunk != 0) {
      fail("the plane form's chunk of {} input channel blocks does not divide them", tile.chunk);
    }
    schedule_plane_conv(sch, block_ref, roles, conv, tile, total_work);
    return;
  }

  BlockRef copy = sch.cache_write(block_ref, 0, "local");
  std::vector<LoopRef> p_parts = sch.split(position, {-1, tile.positions});
  std::vector<LoopRef> c_parts;
  if (channel) c_parts = sch.split(*channel, {-1, tile.channels});
  std::vector<LoopRef> outer;
  for (size_t l = 0; l + 1 < roles.spatial.size(); ++l) {
    const std::string& var = roles.spatial[l].var;
    if (var == position.var) {
      outer.push_back(p_parts[0]);
    } else if (channel && var == channel->var) {
      outer.push_back(c_parts[0]);
    } else {
      outer.push_back(roles.spatial[l]);
    }
  }
  std::vector<LoopRef> order = outer;
  order.insert(order.end(), roles.reduce.begin(), roles.reduce.end());
  order.push_back(p_parts[1]);
  if (channel) order.push_back(c_parts[1]);
  order.push_back(j);
  sch.reorder(order);
  sch.reverse_compute_at(copy, p_parts[0]);
  BlockRef init = sch.decompose_reduction(block_ref, roles.reduce.front());
  if (channel) sch.unroll(c_parts[1]);
  sch.unroll(p_parts[1]);
  sch.vectorize(j);
  // The zeroing and the copy-out work on the same tile: its loops unrolled, the
  // channel vector vectorised.
  for (const BlockRef& tile_block : {init, copy}) {
    std::vector<LoopRef> loops = loops_below(sch, tile_block, p_parts[0]);
    for (size_t l = 0; l + 1 < loops.size(); ++l) sch.unroll(loops[l]);
    sch.vectorize(loops.back());
  }
  fold_epilogue(sch, copy);
  inline_padding(sch, block_ref, product(sch, roles.reduce));
  parallelize(sch, outer, total_work);
}

}  // namespace minic::schedule
