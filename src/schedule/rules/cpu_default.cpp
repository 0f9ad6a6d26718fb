// The default CPU schedule: a sound schedule for every kernel, without tuning.
//
// Course module 4. Each block of a lowered kernel gets the rule of its kind, applied
// through a Schedule (so the result is a trace like a tuned one). The sizes are the
// target's (block_roles.h): `lanes` f32 lanes of one vector register (16 with AVX-512, 8
// with AVX2), and register tiles that fit its vector registers.
//
//   gemm-like    a reduction whose body is C = C + A * B (MatMul, Gemm, Conv) whose
//                innermost output axis has a column tile: register tiling, the
//                schedule of tutorial 4 plus staging. The last two spatial loops i, j
//                are split into io, ii (mr rows) and jo, ji (nr columns: two or four
//                vectors), mr x nr as gemm_tile (block_roles.h) weighs it; the loops become
//                  jo   io   reduction loops   ii (unrolled)   ji (vectorised)
//                with jo parallel, or io where jo has fewer than 8 iterations;
//                C's mr x nr tile accumulates in a local buffer (cache_write; the copy
//                back to C under io, the epilogue folded into it: fold_epilogue), zeroed
//                before the reduction (decompose_reduction);
//                and the panel of B one column tile reads is copied, once per jo, into a
//                contiguous buffer (cache_read + compute_at: packing). The loop pass
//                compact-buffers then shrinks both staging buffers to their tiles, so
//                the accumulator lives in registers and the packed panel in cache. A
//                grouped convolution's i is split by group first (split_groups), its
//                row tiles divide the group, and the group loop is fused with io;
//   blocked conv a multiply-accumulate whose innermost output axis is one vector of
//                channels that the weights hold too (a convolution in the blocked layout
//                NCHWc), tried before the GEMM rule: a register tile of positions by
//                channel vectors, the epilogue folded into its copy-out; for a small
//                output plane, the plane's sums accumulated over passes of input channel
//                blocks whose weights stay in L1 (the plane form; cpu_conv.cpp);
//   row          a reduction whose innermost loop reads its largest input in memory order
//                (softmax's max and sum, a layer norm's statistics): that loop split by
//                one vector and rfactor'ed, so each lane keeps a partial result and the
//                partials accumulate as one vector, combined after the row;
//   reduction    other reductions (pooling, ReduceMean over an outer axis, a matrix-
//                vector product): the init split out, the spatial loops outside the
//                reduction run in parallel, and the innermost spatial loop moved inside
//                the reduction loops when the reduction is not the innermost axis and
//                that loop fills a vector, so LLVM can vectorise it. Where no loop is left
//                outside to run in parallel (M = 1), the reduction is split into runs,
//                each summed into partial results of its own in parallel (rfactor).
//   transposed   spatial loops only, the largest input read in memory order by a loop
//   copy         other than the innermost (a transpose; a layout change out of blocks of
//                channels, whose lanes are the channels): that loop tiled inside the
//                vector loop's tile, so the lines one vector gathers from are read again
//                from L1 by the next ones (transposed_read, block_roles.h);
//   elementwise  spatial loops only: the outer loops fused and run in parallel, the
//                innermost vectorised when its extent fills a vector (the last vector
//                shorter where the extent is not a multiple of the lanes); rows shorter
//                than a vector fused first with the loop around them, where every access
//                runs through both in memory order (spatial_form, block_roles.h).
//
// Before the rules, a copy block (its value one load: a reshape, a transpose, a layout
// change) that only elementwise blocks read is inlined into them (inline_copies), so that
// its data moves once. A kernel of minic.FusedAttention gets the attention rule
// (cpu_attention.cpp) for its six blocks together instead.
//
// A rule that a primitive refuses (a shape it cannot tile) is dropped for that block, and
// the block keeps the schedule it had: rules never make a kernel fail to compile.
// Parallel loops are used only where there is enough work to pay for waking the threads,
// and each rule's is the first loop long enough to share evenly (parallelize).
// What the rules read off a block (its loops' roles, its operands, the tiles that fit) is
// in block_roles.h, shared with the autotuner's search space (src/autotune/space_rules.h).
//
// Chapter: docs/module4-schedules.md#4-the-default-cpu-schedule
#include "minic/schedule/rules.h"

#include "cpu_attention.h"
#include "minic/schedule/block_roles.h"
#include "minic/schedule/primitives.h"
#include "minic/schedule/schedule.h"
#include "minic/support/error.h"
#include "minic/support/explain.h"

#include <algorithm>
#include <optional>

namespace minic::schedule {
namespace {

using loop::Block;

// A rule that tiles a multiply-accumulate block, or fails (an Error) where it does not fit.
using TiledRule = void (*)(Schedule&, const BlockRef&, const LoopRoles&, const Target&);

void schedule_gemm(Schedule& sch, const BlockRef& block_ref, const LoopRoles& roles,
                   const Target& target) {
  const Block& block = get_block(sch.func(), sch.block_name(block_ref.var));
  Operands operands = multiplicands(block);
  if (!operands.rows || roles.spatial.size() < 2 || roles.reduce.empty()) {
    fail("not a tileable multiply-accumulate");
  }
  // j: the innermost spatial loop; i: the innermost other spatial loop that the rows
  // operand depends on (MatMul's i, a convolution's output channel).
  LoopRef j = roles.spatial.back();
  std::optional<LoopRef> i = row_loop(sch, block, roles, operands);
  if (!i) fail("the rows operand depends on no outer spatial loop");
  const int64_t total_work = product(sch, roles.spatial) * product(sch, roles.reduce);
  const LoopRef row = *i;
  std::optional<LoopRef> group = split_groups(sch, block, *i, operands);
  const GemmTile tile = gemm_tile_or_fail(extent_of(sch, *i), extent_of(sch, j),
                                          product(sch, roles.reduce), target, group.has_value());
  const int64_t mr = tile.rows;
  const int64_t nr = tile.columns;
  int columns_read = read_index(block, operands.columns);

  // The tile of C accumulates in a local buffer (registers, once compact-buffers has
  // shrunk it to the tile), copied out after the reduction.
  BlockRef copy = sch.cache_write(block_ref, 0, "local");
  std::vector<LoopRef> j_parts = sch.split(j, {-1, nr});
  std::vector<LoopRef> i_parts = sch.split(*i, {-1, mr});
  std::vector<LoopRef> outer;
  for (const LoopRef& loop : roles.spatial) {
    if (loop.var != row.var && loop.var != j.var) outer.push_back(loop);
  }
  outer.push_back(j_parts[0]);
  if (group) outer.push_back(*group);
  outer.push_back(i_parts[0]);
  std::vector<LoopRef> order = outer;
  order.insert(order.end(), roles.reduce.begin(), roles.reduce.end());
  order.push_back(i_parts[1]);
  order.push_back(j_parts[1]);
  sch.reorder(order);
  if (group) {
    // The groups and their row tiles: one loop, for the threads to share.
    i_parts[0] = sch.fuse({*group, i_parts[0]});
    outer.resize(outer.size() - 2);
    outer.push_back(i_parts[0]);
  }
  sch.reverse_compute_at(copy, i_parts[0]);
  // A GEMM's B panel that one column tile reads is copied into a contiguous buffer
  // (compact-buffers shrinks the copy to the panel) once per column tile: every row tile
  // then streams it from cache at unit stride. (Only a matrix is packed: a convolution's
  // input, even a pointwise one read as a matrix, is left in place.)
  if (roles.reduce.size() == 1 && operands.columns->buffer->rank() == 2) {
    BlockRef pack = sch.cache_read(block_ref, columns_read, "global");
    sch.compute_at(pack, j_parts[0]);
    sch.vectorize(innermost_loops(sch, pack, 1)[0]);
  }
  prefetch_next_panel(sch, block, operands, roles.reduce.front(), i_parts[0]);  // block_roles.h
  // The update, the zeroing and the copy-out each work on the mr x nr tile: rows
  // unrolled, columns vectorised.
  finish_register_tile(sch, block_ref, copy, roles.reduce.front(), i_parts[1], j_parts[1]);
  fold_epilogue(sch, copy);
  parallelize(sch, outer, total_work);
}

// The blocked convolution rule (block_roles.h) with its default tile.
void schedule_default_blocked_conv(Schedule& sch, const BlockRef& block, const LoopRoles& roles,
                                   const Target& target) {
  ConvTile tile = blocked_conv_tile(sch, block, roles, target);
  schedule_blocked_conv(sch, block, roles, target, tile);
  explain::note("block {}: the blocked convolution rule's tile: {} positions by {} channel "
                "vectors, {}", sch.block_name(block.var), tile.positions, tile.channels,
                tile.chunk == 0 ? std::string("the tile form")
                                : fmt::format("the plane form (passes of {} input channel "
                                              "block{})", tile.chunk, tile.chunk > 1 ? "s" : ""));
}

// What the reduction rule did, for `minic explain`.
std::string reduction_note(bool inner, int64_t parts) {
  std::string note;
  if (inner) {
    note += ", the innermost spatial loop moved inside the reduction (it fills a vector) and "
            "vectorised (the last vector shorter where the lanes do not divide it)";
  }
  if (parts > 1) {
    note += fmt::format("; no outer spatial loop to run in parallel, so the reduction is split "
                        "into {} runs summed in parallel into rows of partial results", parts);
  }
  return note;
}

// A block of spatial loops only: the transposed copy rule where it reads across its nest,
// else the elementwise rule, split by one vector when the innermost extent fills one;
// where it is not a multiple of the lanes the split's guarded last vector is cut off by
// the partition-loops pass into a shorter vector (56: three of 16 and one of 8).
void schedule_spatial(Schedule& sch, const BlockRef& block, const LoopRoles& roles,
                      int64_t lanes) {
  const std::string name = sch.block_name(block.var);
  const SpatialForm form = spatial_form(sch, block, roles, lanes);
  if (form.transposed) {
    schedule_transposed_copy(sch, form.roles, *form.transposed, lanes, /*parallel=*/true);
    explain::note("block {}: the transposed copy rule, tiles of {} by {} lanes", name,
                  form.transposed->tile, lanes);
    return;
  }
  const LoopRoles& loops = form.roles;
  int64_t extent = loops.spatial.empty() ? 0 : extent_of(sch, loops.spatial.back());
  bool vectors = extent >= lanes;
  schedule_elementwise(sch, loops, vectors ? lanes : 1, /*parallel=*/true);
  explain::note("block {}: the elementwise rule, {}", name,
                !vectors ? fmt::format("no vectors (the innermost extent {} is less than "
                                       "{} lanes)", extent, lanes)
                : extent % lanes == 0 ? fmt::format("vectors of {} lanes", lanes)
                                      : fmt::format("vectors of {} lanes, the last one "
                                                    "shorter", lanes));
}

// Applies the rule for one block; on a refusal the schedule is left as it was. Each
// choice and refusal is noted for `minic explain` (minic/support/explain.h).
void schedule_block(Schedule& sch, const std::string& name, const Target& target) {
  Schedule attempt = sch;
  try {
    BlockRef block = attempt.get_block(name);
    std::vector<LoopRef> loops = attempt.get_loops(block);
    LoopRoles roles = loop_roles(attempt, block, loops);
    if (roles.mixed || loops.empty()) {
      explain::note("block {}: no rule: {}", name,
                    loops.empty() ? "it has no loops" : "a loop is both spatial and a reduction");
      return;
    }
    const Block& node = get_block(attempt.func(), name);
    if (is_multiply_accumulate(node)) {
      // The tiled rules, the most specific first; a refusal passes to the next, and after
      // the last to the reduction rule.
      const std::pair<const char*, TiledRule> tiled[] = {
          {"blocked convolution", schedule_default_blocked_conv}, {"GEMM", schedule_gemm}};
      for (const auto& [rule_name, rule] : tiled) {
        try {
          Schedule tiled_schedule = attempt;
          rule(tiled_schedule, block, roles, target);
          sch = std::move(tiled_schedule);
          explain::note("block {}: the {} rule", name, rule_name);
          return;
        } catch (const InternalError&) {
          throw;  // a bug, not a refusal
        } catch (const Error& refusal) {
          explain::note("block {}: the {} rule refused: {}", name, rule_name, refusal.what());
        }
      }
    }
    const int64_t lanes = vector_lanes(target);
    if (!roles.reduce.empty()) {
      // A reduction whose innermost loop reads the largest input in order (a softmax's
      // row): its lanes accumulate partial results as one vector.
      std::optional<LoopRef> along = loop_along_input(attempt, block, loops);
      if (along && attempt.loop_var(along->var).same_as(attempt.loop_var(roles.reduce.back().var))) {
        try {
          Schedule rows = attempt;
          schedule_row_reduction(rows, block, roles, lanes, /*parallel=*/true);
          sch = std::move(rows);
          explain::note("block {}: the row reduction rule, vectors of {} partial results",
                        name, lanes);
          return;
        } catch (const InternalError&) {
          throw;  // a bug, not a refusal
        } catch (const Error& refusal) {
          explain::note("block {}: the row reduction rule refused: {}", name, refusal.what());
        }
      }
      // The innermost spatial loop goes inside the reduction when it fills a vector.
      bool inner = !roles.spatial.empty() && extent_of(attempt, roles.spatial.back()) >= lanes;
      int64_t parts = schedule_reduction(attempt, block, roles, inner, lanes, /*parallel=*/true);
      explain::note("block {}: the reduction rule{}", name, reduction_note(inner, parts));
    } else {
      schedule_spatial(attempt, block, roles, lanes);
    }
    sch = std::move(attempt);
  } catch (const InternalError&) {
    throw;  // a bug, not a refusal
  } catch (const Error& refusal) {
    // The rule does not fit this block; it keeps its loops as they are.
    explain::note("block {}: the rule refused ({}); its loops stay as they are", name,
                  refusal.what());
  }
}

// A copy block -- its value one load: a reshape, a transpose, a layout change -- whose
// buffer only elementwise blocks read is inlined into them (compute_inline), so that the
// data moves once, not twice: ShuffleNet's channel shuffle (Reshape, Transpose, Reshape)
// and the layout change after it become one pass over the tensor.
void inline_copies(Schedule& sch) {
  for (const std::string& name : get_block_names(sch.func())) {
    const Block& block = get_block(sch.func(), name);
    const auto* store = block.body.as<loop::Store>();
    if (!store || !store->value.as<loop::Load>() || block.writes.size() != 1) continue;
    std::vector<std::string> readers = readers_of(sch.func(), block.writes[0].buffer.get());
    std::erase(readers, name);
    auto elementwise = [&](const std::string& reader) {
      const std::vector<loop::IterVar>& iters = get_block(sch.func(), reader).iter_vars;
      return std::all_of(iters.begin(), iters.end(), [](const loop::IterVar& iter) {
        return iter.kind == loop::IterKind::spatial;
      });
    };
    if (readers.empty() || !std::all_of(readers.begin(), readers.end(), elementwise)) continue;
    Schedule attempt = sch;
    try {
      attempt.compute_inline(attempt.get_block(name));
      sch = std::move(attempt);
      explain::note("block {}: a copy, inlined into the elementwise blocks that read it", name);
    } catch (const InternalError&) {
      throw;  // a bug, not a refusal
    } catch (const Error& refusal) {
      explain::note("block {}: a copy, not inlined: {}", name, refusal.what());
    }
  }
}

void check_cpu(const Target& target) {
  if (!target.is_cpu()) fail("target {}: the default CPU rules need a CPU target", target.str());
}

// The rule of each block in turn, skipping a block that an earlier rule took (the blocked
// convolution rule takes the epilogue after it).
Schedule schedule_blocks(const loop::PrimFunc& func, const Target& target) {
  check_cpu(target);
  Schedule sch(func);
  if (schedule_attention(sch, target)) return sch;  // cpu_attention.cpp
  inline_copies(sch);
  for (const std::string& name : get_block_names(func)) {
    if (!taken_by_earlier_rule(sch.func(), name)) schedule_block(sch, name, target);
  }
  return sch;
}

}  // namespace

Trace default_cpu_trace(const loop::PrimFunc& func, const Target& target) {
  return schedule_blocks(func, target).trace();
}

loop::PrimFunc default_cpu_schedule(loop::PrimFunc func, const Target& target) {
  return schedule_blocks(func, target).func();
}

}  // namespace minic::schedule
