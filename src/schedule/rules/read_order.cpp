// Rules that follow the order in which a block reads its largest input (block_roles.h):
// which loop reads it in memory order (loop_along_input: a softmax's row), and the
// transposed copy rule for a block that reads it across its nest (transposed_read,
// schedule_transposed_copy: a transpose, a layout change out of blocks of channels).
//
// Course module 4. A vector of 16 lanes along the innermost loop of a transpose gathers
// one element from each of 16 cache lines; each line holds the next 15 elements of its
// row too, which the next 15 iterations of the loop that reads in memory order want. The
// rule tiles that loop and puts its tile just outside the vector loop, so they get them
// from L1.
//
// Chapter: docs/module4-schedules.md#4-the-default-cpu-schedule
#include "minic/schedule/block_roles.h"

#include "minic/ir/loop/access.h"
#include "minic/ir/loop/analysis.h"
#include "minic/schedule/primitives.h"

#include <optional>
#include <string>
#include <vector>

namespace minic::schedule {

using loop::Block;

namespace {

// A load of the block's largest input, as the block reads it (the last such load).
std::optional<loop::Access> largest_read(const Block& block) {
  const loop::BufferRegion* largest = nullptr;
  int64_t largest_size = 0;
  for (const loop::BufferRegion& read : block.reads) {
    int64_t size = 1;
    for (int64_t extent : read.buffer->shape) size *= extent;
    if (size > largest_size) {
      largest = &read;
      largest_size = size;
    }
  }
  if (!largest || largest->region.empty()) return std::nullopt;
  std::optional<loop::Access> found;
  for (const loop::Access& access : loop::collect_accesses(block)) {
    if (access.kind == loop::AccessKind::load && access.buffer == largest->buffer &&
        !access.indices.empty()) {
      found = access;
    }
  }
  return found;
}

// The last index of that load.
std::optional<loop::Expr> largest_read_last_index(const Block& block) {
  std::optional<loop::Access> access = largest_read(block);
  if (!access) return std::nullopt;
  return access->indices.back();
}

// How many elements the load's address moves when the block's iteration variable `var`
// goes from 0 to 1, every other one at 0: the indices evaluated at both points (they may
// be floordiv and floormod of a flat offset, as a reshape reads). nullopt where an index
// has no value there (it reads memory).
std::optional<int64_t> address_step(const loop::Access& access, const Block& block,
                                    const loop::Var* var) {
  loop::VarBounds at_zero, at_one;
  for (const loop::IterVar& iter : block.iter_vars) {
    const loop::Var* v = iter.var.as<loop::Var>();
    at_zero[v] = loop::IntBound::single(0);
    at_one[v] = loop::IntBound::single(v == var ? 1 : 0);
  }
  int64_t stride = 1;
  int64_t step = 0;
  for (size_t d = access.indices.size(); d-- > 0;) {
    const loop::IntBound from = loop::bound_of(access.indices[d], at_zero);
    const loop::IntBound to = loop::bound_of(access.indices[d], at_one);
    if (!from.is_single() || !to.is_single()) return std::nullopt;
    step += (to.min - from.min) * stride;
    stride *= access.buffer->shape[d];
  }
  return step;
}

// The block's iteration variable bound to `loop` alone; null if none is.
const loop::Var* iter_var_of(Schedule& sch, const Block& block, const LoopRef& loop) {
  const loop::Var* loop_var = sch.loop_var(loop.var).as<loop::Var>();
  for (const loop::IterVar& iter : block.iter_vars) {
    if (loop_var && iter.binding.as<loop::Var>() == loop_var) return iter.var.as<loop::Var>();
  }
  return nullptr;
}

// The loop of `outer` that reads the largest input in memory order (its address moves by
// one element a step) where the innermost spatial loop does not: a transpose read through
// a reshape, whose last index is floormod(flat offset, n) rather than a variable.
std::optional<LoopRef> loop_in_memory_order(Schedule& sch, const Block& block,
                                            const std::vector<LoopRef>& outer,
                                            const LoopRef& innermost) {
  std::optional<loop::Access> access = largest_read(block);
  const loop::Var* inner = iter_var_of(sch, block, innermost);
  if (!access || !inner) return std::nullopt;
  std::optional<int64_t> inner_step = address_step(*access, block, inner);
  if (!inner_step || *inner_step == 1 || *inner_step == 0) return std::nullopt;
  for (const LoopRef& loop : outer) {
    const loop::Var* var = iter_var_of(sch, block, loop);
    std::optional<int64_t> step = var ? address_step(*access, block, var) : std::nullopt;
    if (step && *step == 1) return loop;
  }
  return std::nullopt;
}

// The loop among `loops` that feeds the block's iteration variable `var` (bound to it
// alone); nullopt if none does.
std::optional<LoopRef> loop_feeding(Schedule& sch, const Block& block, const loop::Var* var,
                                    const std::vector<LoopRef>& loops) {
  for (const loop::IterVar& iter : block.iter_vars) {
    if (iter.var.as<loop::Var>() != var) continue;
    const loop::Var* loop_var = iter.binding.as<loop::Var>();
    for (const LoopRef& loop : loops) {
      if (loop_var && sch.loop_var(loop.var).as<loop::Var>() == loop_var) return loop;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<LoopRef> loop_along_input(Schedule& sch, const BlockRef& block_ref,
                                        const std::vector<LoopRef>& loops) {
  const Block& block = get_block(sch.func(), sch.block_name(block_ref.var));
  std::optional<loop::Expr> last = largest_read_last_index(block);
  const loop::Var* var = last ? last->as<loop::Var>() : nullptr;
  if (!var) return std::nullopt;
  return loop_feeding(sch, block, var, loops);
}

std::optional<TransposedRead> transposed_read(Schedule& sch, const BlockRef& block_ref,
                                              const LoopRoles& roles, int64_t vector) {
  if (roles.spatial.size() < 2 || !roles.reduce.empty()) return std::nullopt;
  const Block& block = get_block(sch.func(), sch.block_name(block_ref.var));
  std::optional<loop::Expr> last = largest_read_last_index(block);
  if (!last) return std::nullopt;
  TransposedRead read;
  const loop::Var* var = last->as<loop::Var>();
  if (const auto* mod = last->as<loop::FloorMod>()) {  // a lane of a blocked layout
    std::optional<int64_t> block_size = loop::as_const_int(mod->b);
    var = mod->a.as<loop::Var>();
    read.tile = block_size.value_or(0);
  }
  std::vector<LoopRef> outer(roles.spatial.begin(), roles.spatial.end() - 1);
  std::optional<LoopRef> loop = var ? loop_feeding(sch, block, var, outer) : std::nullopt;
  if (!loop && !last->as<loop::Var>()) {
    // Read through a reshape: the loop whose step is one element of the input.
    read.tile = 0;
    loop = loop_in_memory_order(sch, block, outer, roles.spatial.back());
  } else if (loop && last->as<loop::FloorMod>() && read.tile < 2) {
    return std::nullopt;
  }
  if (!loop) return std::nullopt;
  if (read.tile == 0) read.tile = vector;
  read.loop = *loop;
  if (extent_of(sch, read.loop) < read.tile || extent_of(sch, roles.spatial.back()) <= vector) {
    return std::nullopt;
  }
  return read;
}

namespace {

// The coefficient of `var` in the element offset an access reaches (its indices times the
// buffer's row-major strides); nullopt where an index is not linear.
std::optional<int64_t> offset_coefficient(const loop::Access& access, const loop::Var* var) {
  int64_t stride = 1;
  int64_t coefficient = 0;
  for (size_t d = access.indices.size(); d-- > 0;) {
    std::optional<loop::Linear> linear = loop::linearize(access.indices[d]);
    if (!linear) return std::nullopt;
    for (const auto& [term, factor] : linear->terms) {
      if (term.as<loop::Var>() == var) coefficient += factor * stride;
    }
    stride *= access.buffer->shape[d];
  }
  return coefficient;
}

// Rows shorter than a vector fused with the loop around them where every access runs
// through both in memory order or not at all (spatial_form), and the roles with the fused
// loop in their place; nullopt otherwise.
std::optional<LoopRoles> fuse_short_rows(Schedule& sch, const BlockRef& block_ref,
                                         const LoopRoles& roles, int64_t vector) {
  const size_t n = roles.spatial.size();
  if (n < 2 || !roles.reduce.empty()) return std::nullopt;
  const LoopRef rows = roles.spatial[n - 2];
  const LoopRef columns = roles.spatial[n - 1];
  const int64_t width = extent_of(sch, columns);
  if (width >= vector || width * extent_of(sch, rows) < vector) return std::nullopt;
  const Block& block = get_block(sch.func(), sch.block_name(block_ref.var));
  const loop::Var* row = iter_var_of(sch, block, rows);
  const loop::Var* column = iter_var_of(sch, block, columns);
  if (!row || !column) return std::nullopt;
  for (const loop::Access& access : loop::collect_accesses(block)) {
    std::optional<int64_t> along_row = offset_coefficient(access, row);
    std::optional<int64_t> along_column = offset_coefficient(access, column);
    if (!along_row || !along_column) return std::nullopt;
    const bool in_order = *along_column == 1 && *along_row == width;
    const bool broadcast = *along_column == 0 && *along_row == 0;
    if (!in_order && !broadcast) return std::nullopt;
  }
  LoopRoles fused = roles;
  fused.spatial.pop_back();
  fused.spatial.back() = sch.fuse({rows, columns});
  return fused;
}

}  // namespace

SpatialForm spatial_form(Schedule& sch, const BlockRef& block, const LoopRoles& roles,
                         int64_t vector) {
  if (std::optional<TransposedRead> read = transposed_read(sch, block, roles, vector)) {
    return {read, roles};
  }
  std::optional<LoopRoles> fused = fuse_short_rows(sch, block, roles, vector);
  return {std::nullopt, fused ? *fused : roles};
}

void schedule_transposed_copy(Schedule& sch, const LoopRoles& roles, const TransposedRead& read,
                              int64_t vector, bool parallel) {
  const int64_t total_work = product(sch, roles.spatial);
  const std::string across = read.loop.var;
  const std::string along = roles.spatial.back().var;
  std::vector<LoopRef> across_parts = sch.split(read.loop, {-1, read.tile});
  std::vector<LoopRef> along_parts = sch.split(roles.spatial.back(), {-1, vector});
  std::vector<LoopRef> tiles;
  for (const LoopRef& loop : roles.spatial) {
    tiles.push_back(loop.var == across ? across_parts[0]
                    : loop.var == along ? along_parts[0]
                                        : loop);
  }
  std::vector<LoopRef> order = tiles;
  order.push_back(across_parts[1]);
  order.push_back(along_parts[1]);
  sch.reorder(order);
  sch.vectorize(along_parts[1]);
  if (parallel) parallelize(sch, tiles, total_work);
}

}  // namespace minic::schedule
