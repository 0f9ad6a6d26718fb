// The gemm-like rule of the search space (space_rules.h). Course module 5.
//
// The default rule's register tiling (src/schedule/rules/cpu_default.cpp, schedule_gemm)
// with its sizes as knobs: tile_j, tile_i and tile_k split the column, row and first
// reduction loops; order puts the row tiles outside the column tiles; pack and parallel
// say whether B's panel is packed and which outer loop runs in parallel. With the default
// values (middle factors 1, k whole, order 0) the primitives are the default rule's, one
// for one: a middle factor of 1 is not split off, and k is not split.
//
// Chapter: docs/module5-autotuning.md#2-the-search-space
#include "space_rules.h"

#include "minic/schedule/primitives.h"
#include "minic/support/error.h"

#include <algorithm>
#include <optional>

namespace minic::autotune {

using schedule::BlockRef;
using schedule::LoopRef;
using schedule::LoopRoles;
using schedule::Schedule;

namespace {

constexpr int64_t kMaxRegisterRows = 8;       // rows of the register tile
constexpr int64_t kMaxColumnVectors = 4;      // columns: up to four of the target's vectors
constexpr int64_t kMaxUnrolledReduction = 8;  // k1 is unrolled up to this extent

// Every [outer, middle, last] with outer * middle * last == extent, for each of `lasts`.
Choices tile_choices(int64_t extent, const std::vector<int64_t>& lasts) {
  Choices choices;
  for (int64_t last : lasts) {
    for (const std::vector<int64_t>& split : factorizations(extent / last, 2)) {
      choices.push_back({split[0], split[1], last});
    }
  }
  return choices;
}

// A tile knob over `extent` with the lasts' tile_choices, whose default is [tiles, 1,
// last]: the default rule's `last` need not divide the extent (gemm_tile's last, shorter
// tile), and is then a choice of its own.
void add_tile_knob(BlockSpace& space, const std::string& block, const char* knob,
                   int64_t extent, const std::vector<int64_t>& lasts, int64_t last) {
  Choices choices = tile_choices(extent, lasts);
  const std::vector<int64_t> default_value = {(extent + last - 1) / last, 1, last};
  if (extent % last != 0) choices.push_back(default_value);
  add_knob(space, block, knob, std::move(choices), default_value);
}

// The loops of a gemm-like block that its rule tiles, and what the rule needs to know.
struct GemmLoops {
  LoopRef i;                    // the row loop (row_loop), or a group's rows (split_groups)
  std::optional<LoopRef> group;  // the loop over a grouped convolution's groups
  LoopRef j;                    // the innermost spatial loop
  std::vector<LoopRef> others;  // the other spatial loops, outermost first
  std::vector<LoopRef> reduce;
  int columns_read = 0;  // the read index of the columns operand
  bool packable = false;
  int64_t panel_width = 0;  // P where B is read in panels of P columns (minic.MatMulPanels)
  int64_t total_work = 0;
};

GemmLoops gemm_loops(Schedule& sch, const BlockRef& block_ref, const LoopRoles& roles) {
  const loop::Block& block = schedule::get_block(sch.func(), sch.block_name(block_ref.var));
  if (!schedule::is_multiply_accumulate(block)) fail("not a multiply-accumulate");
  schedule::Operands operands = schedule::multiplicands(block);
  if (!operands.rows || roles.spatial.size() < 2 || roles.reduce.empty()) {
    fail("not a tileable multiply-accumulate");
  }
  std::optional<LoopRef> i = schedule::row_loop(sch, block, roles, operands);
  if (!i) fail("the rows operand depends on no outer spatial loop");
  GemmLoops loops{*i, std::nullopt, roles.spatial.back(), {}, roles.reduce};
  for (const LoopRef& loop : roles.spatial) {
    if (loop.var != loops.i.var && loop.var != loops.j.var) loops.others.push_back(loop);
  }
  loops.columns_read = schedule::read_index(block, operands.columns);
  // As the default rule: only a matrix is packed, not a convolution's input.
  loops.packable = roles.reduce.size() == 1 && operands.columns->buffer->rank() == 2;
  loops.panel_width = schedule::panel_width(block, *operands.columns);
  loops.total_work = schedule::product(sch, roles.spatial) * schedule::product(sch, roles.reduce);
  loops.group = schedule::split_groups(sch, block, loops.i, operands);
  return loops;
}

struct GemmValues {
  std::vector<int64_t> tile_j;  // [outer, middle, nr]
  std::vector<int64_t> tile_i;  // [outer, middle, mr]
  std::vector<int64_t> tile_k;  // [outer, inner]
  bool rows_outer = false;      // order 1
  bool pack = false;
  int64_t parallel = -1;  // position among [others, first tile loop, second tile loop]
};

GemmValues gemm_values(const Decisions& point, const std::string& block) {
  GemmValues values;
  values.tile_j = value_of(point, block, "tile_j");
  values.tile_i = value_of(point, block, "tile_i");
  values.tile_k = value_of(point, block, "tile_k");
  values.rows_outer = value_of(point, block, "order").at(0) == 1;
  values.pack = value_of(point, block, "pack").at(0) == 1;
  values.parallel = value_of(point, block, "parallel").at(0);
  if (values.tile_j.size() != 3 || values.tile_i.size() != 3 || values.tile_k.size() != 2) {
    fail("block {}: a tile value has the wrong number of factors", block);
  }
  return values;
}

// A loop split into [outer, middle, inner] by a tile value; a middle factor of 1 is not
// split off (so the default's tiles give the default's two loops).
struct TileLoops {
  LoopRef outer;
  std::optional<LoopRef> middle;
  LoopRef inner;
};

TileLoops split_tile(Schedule& sch, const LoopRef& loop, const std::vector<int64_t>& tile) {
  if (tile[1] == 1) {
    std::vector<LoopRef> parts = sch.split(loop, {-1, tile[2]});
    return {parts[0], std::nullopt, parts[1]};
  }
  std::vector<LoopRef> parts = sch.split(loop, {-1, tile[1], tile[2]});
  return {parts[0], parts[1], parts[2]};
}

void schedule_gemm(Schedule& sch, const BlockRef& block, const LoopRoles& roles,
                   const GemmValues& values) {
  GemmLoops loops = gemm_loops(sch, block, roles);
  BlockRef copy = sch.cache_write(block, 0, "local");
  TileLoops j = split_tile(sch, loops.j, values.tile_j);
  TileLoops i = split_tile(sch, loops.i, values.tile_i);
  const TileLoops& first = values.rows_outer ? i : j;
  const TileLoops& second = values.rows_outer ? j : i;
  std::vector<LoopRef> outer = loops.others;
  outer.push_back(first.outer);
  outer.push_back(second.outer);
  std::vector<LoopRef> tile_outer = outer;
  if (first.middle) tile_outer.push_back(*first.middle);
  if (second.middle) tile_outer.push_back(*second.middle);
  // k0, the other reduction loops, k1: the inner part of k innermost, next to the tile.
  std::vector<LoopRef> reduce = loops.reduce;
  std::optional<LoopRef> k_inner;
  if (values.tile_k[1] > 1) {
    std::vector<LoopRef> k = sch.split(reduce.front(), {-1, values.tile_k[1]});
    reduce.front() = k[0];
    reduce.push_back(k[1]);
    k_inner = k[1];
  }
  // The group loop, if any, just outside the row tiles, to be fused with them.
  std::vector<LoopRef> order;
  for (const LoopRef& loop : tile_outer) {
    if (loops.group && loop.var == i.outer.var) order.push_back(*loops.group);
    order.push_back(loop);
  }
  order.insert(order.end(), reduce.begin(), reduce.end());
  order.push_back(i.inner);
  order.push_back(j.inner);
  sch.reorder(order);
  if (loops.group) {
    // As the default rule: the groups and their row tiles, one loop.
    LoopRef rows = sch.fuse({*loops.group, i.outer});
    for (std::vector<LoopRef>* list : {&outer, &tile_outer}) {
      std::replace_if(list->begin(), list->end(),
                      [&](const LoopRef& loop) { return loop.var == i.outer.var; }, rows);
    }
  }
  sch.reverse_compute_at(copy, tile_outer.back());
  if (values.pack) {
    if (!loops.packable) fail("the columns operand is not a matrix read by one reduction");
    BlockRef pack = sch.cache_read(block, loops.columns_read, "global");
    sch.compute_at(pack, j.outer);
    sch.vectorize(schedule::innermost_loops(sch, pack, 1)[0]);
  }
  const loop::Block& node = schedule::get_block(sch.func(), sch.block_name(block.var));
  // The row tiles share the next panel's prefetches where they run inside a column tile.
  std::optional<LoopRef> row_tiles;
  if (!values.rows_outer && !j.middle) row_tiles = tile_outer.back();
  schedule::prefetch_next_panel(sch, node, schedule::multiplicands(node), reduce.front(),
                                row_tiles);
  schedule::finish_register_tile(sch, block, copy, reduce.front(), i.inner, j.inner);
  if (k_inner && values.tile_k[1] <= kMaxUnrolledReduction) sch.unroll(*k_inner);
  schedule::fold_epilogue(sch, copy);
  if (values.parallel >= static_cast<int64_t>(outer.size())) {
    fail("no outer loop {} to run in parallel", values.parallel);
  }
  if (values.parallel >= 0) sch.parallel(outer[static_cast<size_t>(values.parallel)]);
}

// A gemm-like block's tile of mr rows x nr columns needs mr * (nr / lanes) accumulators.
std::string register_violation(const std::string& block, const Decisions& point,
                               const Target& target) {
  const std::vector<int64_t>& rows = value_of(point, block, "tile_i");
  const std::vector<int64_t>& columns = value_of(point, block, "tile_j");
  const int64_t lanes = schedule::vector_lanes(target);
  const int64_t registers = accumulator_registers(target);
  int64_t vectors = (columns.back() + lanes - 1) / lanes;
  if (rows.back() * vectors <= registers) return "";
  return fmt::format("block {}: a register tile of {} rows x {} vectors needs more than {} "
                     "registers",
                     block, rows.back(), vectors, registers);
}

// B's panel is packed under the column tile loop j0, into one buffer: threads running a
// loop around j0 would all write it. The two tile loops are the last two positions of
// the parallel knob's outer loops; j0 is the first of them in order 0, the second in 1.
std::string pack_violation(const std::string& block, const std::vector<Knob>& knobs,
                           const Decisions& point) {
  int64_t parallel = value_of(point, block, "parallel").at(0);
  if (value_of(point, block, "pack").at(0) != 1 || parallel < 0) return "";
  int64_t last = -1;
  for (const Knob& knob : knobs) {
    if (knob.name != knob_name(block, "parallel")) continue;
    for (const std::vector<int64_t>& choice : knob.choices) last = std::max(last, choice.at(0));
  }
  int64_t column_tiles = value_of(point, block, "order").at(0) == 1 ? last : last - 1;
  if (parallel >= column_tiles) return "";
  return fmt::format("block {}: the threads of outer loop {} would all write the packed panel "
                     "of the columns operand (packed under outer loop {})",
                     block, parallel, column_tiles);
}

}  // namespace

std::optional<BlockSpace> gemm_space(Schedule& sch, const BlockRef& block,
                                     const std::string& name, const LoopRoles& roles,
                                     const Target& target) {
  try {
    Schedule probe = sch;  // gemm_loops splits a grouped row loop
    GemmLoops loops = gemm_loops(probe, block, roles);
    int64_t extent_j = schedule::extent_of(probe, loops.j);
    int64_t extent_i = schedule::extent_of(probe, loops.i);
    int64_t extent_k = schedule::extent_of(probe, loops.reduce.front());
    int64_t groups = loops.group ? schedule::extent_of(probe, *loops.group) : 1;
    const int64_t lanes = schedule::vector_lanes(target);
    const GemmTile tile =
        schedule::gemm_tile_or_fail(extent_i, extent_j, schedule::product(probe, loops.reduce),
                                    target, loops.group.has_value());
    const int64_t nr = tile.columns;
    const int64_t mr = tile.rows;
    if (extent_k < 1) fail("the reduction extent is not constant");

    // Column tiles of whole vectors that divide the columns; where B is in panels of P
    // columns, tiles that divide P, so that each reads within one panel (the index
    // [floordiv(j, P), k, floormod(j, P)] then simplifies to one contiguous run).
    std::vector<int64_t> column_tiles;
    for (int64_t tile = lanes; tile <= kMaxColumnVectors * lanes; tile += lanes) {
      const bool in_panel = loops.panel_width == 0 || loops.panel_width % tile == 0;
      if (extent_j % tile == 0 && in_panel) column_tiles.push_back(tile);
    }
    if (column_tiles.empty()) column_tiles.push_back(nr);
    std::vector<int64_t> row_tiles;
    for (int64_t tile = 1; tile <= kMaxRegisterRows; ++tile) {
      if (extent_i % tile == 0) row_tiles.push_back(tile);
    }
    // The parallel loop's choices, among [others, j0, i0], and the default's, as
    // schedule::parallelize picks it (parallel_loop), when there is enough work.
    std::vector<int64_t> outer_extents;
    for (const LoopRef& loop : loops.others) {
      outer_extents.push_back(schedule::extent_of(probe, loop));
    }
    outer_extents.push_back((extent_j + nr - 1) / nr);
    outer_extents.push_back((extent_i + mr - 1) / mr * groups);
    bool enough_work = loops.total_work >= schedule::kParallelMinWork;
    Choices parallel_choices = {{-1}};
    for (size_t p = 0; enough_work && p < outer_extents.size(); ++p) {
      // An outer loop of one iteration is never worth a thread; the tile loops' extents
      // depend on the point.
      if (p < loops.others.size() && outer_extents[p] <= 1) continue;
      parallel_choices.push_back({static_cast<int64_t>(p)});
    }
    std::optional<size_t> chosen = schedule::parallel_loop(outer_extents);
    int64_t default_parallel = enough_work && chosen ? static_cast<int64_t>(*chosen) : -1;

    BlockSpace space;
    add_tile_knob(space, name, "tile_j", extent_j, column_tiles, nr);
    add_tile_knob(space, name, "tile_i", extent_i, row_tiles, mr);
    add_knob(space, name, "tile_k", factorizations(extent_k, 2), {extent_k, 1});
    add_knob(space, name, "order", {{0}, {1}}, {0});
    add_knob(space, name, "pack", yes_no(loops.packable), {loops.packable ? 1 : 0});
    add_knob(space, name, "parallel", parallel_choices, {default_parallel});
    Schedule scheduled = sch;
    schedule_gemm(scheduled, block, roles, gemm_values(space.default_values, name));
    sch = std::move(scheduled);
    return space;
  } catch (const InternalError&) {
    throw;  // a bug, not a refusal
  } catch (const Error&) {
    return std::nullopt;  // the gemm rule refuses the block
  }
}

void schedule_gemm_point(Schedule& sch, const BlockRef& block, const LoopRoles& roles,
                         const std::string& name, const Decisions& point) {
  schedule_gemm(sch, block, roles, gemm_values(point, name));
}

std::string gemm_violation(const std::vector<Knob>& knobs, const std::string& block,
                           const Decisions& point, const Target& target) {
  std::string reason = register_violation(block, point, target);
  return reason.empty() ? pack_violation(block, knobs, point) : reason;
}

}  // namespace minic::autotune
