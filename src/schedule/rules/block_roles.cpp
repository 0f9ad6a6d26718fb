// What schedule rules read off a block (block_roles.h). Course module 4.
//
// Chapter: docs/module4-schedules.md#4-the-default-cpu-schedule
#include "minic/schedule/block_roles.h"

#include "../loop_tree.h"
#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/visitor.h"
#include "minic/schedule/primitives.h"
#include "minic/support/error.h"
#include "minic/tensor/tensor.h"

#include <algorithm>
#include <optional>
#include <tuple>
#include <utility>

namespace minic::schedule {

using loop::Block;

int64_t vector_lanes(const Target& target) { return target.vector_lanes(DType::f32); }

int64_t extent_of(const Schedule& sch, const LoopRef& loop_ref) {
  const loop::For& node = find_loop(sch.func(), sch.loop_var(loop_ref.var), "default schedule");
  return loop::as_const_int(node.extent).value_or(0);
}

loop::ForKind kind_of(const Schedule& sch, const LoopRef& loop_ref) {
  return find_loop(sch.func(), sch.loop_var(loop_ref.var), "default schedule").for_kind;
}

int64_t product(Schedule& sch, const std::vector<LoopRef>& loops) {
  int64_t total = 1;
  for (const LoopRef& loop : loops) total *= std::max<int64_t>(extent_of(sch, loop), 1);
  return total;
}

LoopRoles loop_roles(Schedule& sch, const BlockRef& block_ref, const std::vector<LoopRef>& loops) {
  const Block& block = get_block(sch.func(), sch.block_name(block_ref.var));
  LoopRoles roles;
  for (const LoopRef& loop_ref : loops) {
    const loop::Var* var = sch.loop_var(loop_ref.var).as<loop::Var>();
    bool feeds_spatial = false;
    bool feeds_reduce = false;
    for (const loop::IterVar& iter : block.iter_vars) {
      if (!loop::uses_var(iter.binding, var)) continue;
      (iter.kind == loop::IterKind::reduce ? feeds_reduce : feeds_spatial) = true;
    }
    if (feeds_spatial && feeds_reduce) roles.mixed = true;
    if (feeds_reduce) {
      roles.reduce.push_back(loop_ref);
    } else {
      roles.spatial.push_back(loop_ref);
    }
  }
  return roles;
}

namespace {

// The two factors of a product term: x * y, or the words of dot4_u8i8(x, y) (four byte
// products at a time); nullopt for anything else.
std::optional<std::pair<loop::Expr, loop::Expr>> factors(const loop::Expr& term) {
  if (const auto* mul = term.as<loop::Mul>()) return std::pair{mul->a, mul->b};
  const auto* call = term.as<loop::Call>();
  if (call && call->name == "dot4_u8i8") return std::pair{call->args[0], call->args[1]};
  return std::nullopt;
}

}  // namespace

bool is_multiply_accumulate(const Block& block) {
  const auto* store = block.body.as<loop::Store>();
  if (!store || !block.init) return false;
  const auto* add = store->value.as<loop::Add>();
  if (!add) return false;
  const auto* acc = add->a.as<loop::Load>();
  return acc && acc->buffer == store->buffer && factors(add->b).has_value();
}

namespace {

// The load a multiplicand reads: the load itself, or under the widening and shift of an
// integer GEMM's operand, cast<i32>(A[i, k]) - cast<i32>(zero_point[i]).
const loop::Load* multiplicand_load(const loop::Expr& operand) {
  if (const auto* load = operand.as<loop::Load>()) return load;
  if (const auto* widened = operand.as<loop::Cast>()) return multiplicand_load(widened->value);
  if (const auto* shifted = operand.as<loop::Sub>()) return multiplicand_load(shifted->a);
  return nullptr;
}

}  // namespace

int64_t panel_width(const Block& block, const loop::Load& columns) {
  if (columns.indices.size() != 3) return 0;
  const auto* div = columns.indices[0].as<loop::FloorDiv>();
  const auto* mod = columns.indices[2].as<loop::FloorMod>();
  if (!div || !mod || !div->a.as<loop::Var>() || div->a.get() != mod->a.get()) return 0;
  const bool spatial = std::any_of(block.iter_vars.begin(), block.iter_vars.end(),
                                   [&](const loop::IterVar& iter) {
    return iter.var.get() == div->a.get() && iter.kind == loop::IterKind::spatial;
  });
  std::optional<int64_t> width = loop::as_const_int(mod->b);
  return spatial && width && loop::as_const_int(div->b) == width ? *width : 0;
}

void prefetch_next_panel(Schedule& sch, const Block& block, const Operands& operands,
                         const LoopRef& reduction, const std::optional<LoopRef>& row_tiles) {
  const loop::Buffer& panels = operands.columns->buffer;
  if (panel_width(block, *operands.columns) == 0) return;
  auto bytes_of = [](const loop::Buffer& buffer) {
    return num_elements(buffer->shape) * dtype_size(buffer->dtype);
  };
  const int64_t panel_bytes = bytes_of(panels) / panels->shape[0];
  const int64_t a_bytes = bytes_of(operands.rows->buffer);
  if (bytes_of(panels) < kPrefetchPanelBytes ||
      (!row_tiles && 2 * panel_bytes + a_bytes > kPrefetchBudgetBytes)) {
    return;
  }
  sch.annotate(reduction, "prefetch_ahead", panels->shape[1] * panels->shape[2]);
  if (row_tiles) sch.annotate(*row_tiles, "prefetch_spread", panels->shape[2]);
}

Operands multiplicands(const Block& block) {
  const auto* store = block.body.as<loop::Store>();
  std::optional<std::pair<loop::Expr, loop::Expr>> product =
      factors(store->value.as<loop::Add>()->b);
  if (!product) return {};
  const loop::Var* j = nullptr;
  for (const loop::IterVar& iter : block.iter_vars) {
    if (iter.kind == loop::IterKind::spatial) j = iter.var.as<loop::Var>();
  }
  Operands operands;
  for (const loop::Expr& operand : {product->first, product->second}) {
    const loop::Load* load = multiplicand_load(operand);
    if (!load) return {};
    bool by_column = !load->indices.empty() && loop::uses_var(load->indices.back(), j);
    (by_column ? operands.columns : operands.rows) = load;
  }
  return operands.rows && operands.columns ? operands : Operands{};
}

int read_index(const Block& block, const loop::Load* load) {
  for (size_t r = 0; r < block.reads.size(); ++r) {
    if (block.reads[r].buffer == load->buffer) return static_cast<int>(r);
  }
  fail("the operand is not among the block's reads");
}

std::optional<LoopRef> row_loop(Schedule& sch, const Block& block, const LoopRoles& roles,
                                const Operands& operands) {
  std::optional<LoopRef> i;
  for (size_t l = 0; l + 1 < roles.spatial.size(); ++l) {
    const loop::Var* var = sch.loop_var(roles.spatial[l].var).as<loop::Var>();
    for (const loop::IterVar& iter : block.iter_vars) {
      if (!loop::uses_var(iter.binding, var)) continue;
      for (const loop::Expr& index : operands.rows->indices) {
        if (loop::uses_var(index, iter.var.as<loop::Var>())) i = roles.spatial[l];
      }
    }
  }
  return i;
}

namespace {

// Replaces floordiv(var, k) by a placeholder and collects the k's: what is left of an index
// then shows whether `var` is read only through its groups.
class GroupsOf : public loop::IRMutator {
 public:
  explicit GroupsOf(const loop::Var* var) : var_(var) {}
  std::vector<int64_t> divisors;

  loop::Expr mutate_FloorDiv(const loop::FloorDiv* node, const loop::Expr& self) override {
    std::optional<int64_t> k = loop::as_const_int(node->b);
    if (node->a.as<loop::Var>() == var_ && k && *k > 0) {
      divisors.push_back(*k);
      return loop::IntImm::make(0, node->a.type());
    }
    return loop::IRMutator::mutate_FloorDiv(node, self);
  }

 private:
  const loop::Var* var_;
};

}  // namespace

std::optional<int64_t> group_size(Schedule& sch, const loop::Block& block, const loop::Load& load,
                                  const LoopRef& loop_ref) {
  const loop::Var* var = sch.loop_var(loop_ref.var).as<loop::Var>();
  std::optional<int64_t> size;
  for (const loop::IterVar& iter : block.iter_vars) {
    if (!loop::uses_var(iter.binding, var)) continue;
    if (iter.binding.as<loop::Var>() != var) return std::nullopt;
    const loop::Var* v = iter.var.as<loop::Var>();
    for (const loop::Expr& index : load.indices) {
      GroupsOf groups(v);
      if (loop::uses_var(groups.mutate(index), v)) return std::nullopt;
      for (int64_t k : groups.divisors) {
        if (size && *size != k) return std::nullopt;
        size = k;
      }
    }
  }
  return size;
}

namespace {

// The group size q of a grouped row loop i (split_groups): the columns operand reads i's
// variable only through floordiv(v, q), with q less than i's extent and dividing it.
std::optional<int64_t> row_group(Schedule& sch, const Block& block, const LoopRef& i,
                                 const Operands& operands) {
  std::optional<int64_t> q = group_size(sch, block, *operands.columns, i);
  const int64_t extent = extent_of(sch, i);
  if (!q || *q >= extent || extent % *q != 0) return std::nullopt;
  return q;
}

}  // namespace

std::optional<LoopRef> split_groups(Schedule& sch, const Block& block, LoopRef& i,
                                    const Operands& operands) {
  std::optional<int64_t> group = row_group(sch, block, i, operands);
  if (!group) return std::nullopt;
  std::vector<LoopRef> parts = sch.split(i, {-1, *group});
  i = parts[1];
  return parts[0];
}

std::vector<LoopRef> innermost_loops(Schedule& sch, const BlockRef& block, size_t count) {
  std::vector<LoopRef> loops = sch.get_loops(block);
  if (loops.size() < count) fail("expected {} loops", count);
  return {loops.end() - count, loops.end()};
}

std::vector<LoopRef> loops_below(Schedule& sch, const BlockRef& block, const LoopRef& above) {
  std::vector<LoopRef> loops = sch.get_loops(block);
  loop::Expr var = sch.loop_var(above.var);
  auto at = std::find_if(loops.begin(), loops.end(), [&](const LoopRef& loop) {
    return sch.loop_var(loop.var).same_as(var);
  });
  if (at == loops.end()) fail("block {} is not under loop {}", block.var, above.var);
  return {at + 1, loops.end()};
}

GemmTile gemm_tile_or_fail(int64_t rows, int64_t columns, int64_t reduction,
                           const Target& target, bool whole_row_tiles) {
  GemmTile tile = gemm_tile(rows, columns, reduction, target);
  if (tile.columns == 0) fail("no column tile divides the innermost spatial extent");
  if (whole_row_tiles && rows % tile.rows != 0) {
    tile.rows = row_tile(rows, tile.columns, target);
    if (tile.rows == 1) fail("no register tile of 2 rows or more divides a group");
  }
  if (tile.rows == 1) fail("no register tile of 2 rows or more fits the row extent");
  return tile;
}

// One loop, not the outer loops fused into one (which would share out more evenly still:
// parallel accepts a fused loop, tests/lit/schedule/parallel.test, but the rules do not
// fuse yet).
std::optional<size_t> parallel_loop(const std::vector<int64_t>& extents) {
  std::optional<size_t> chosen;
  int64_t longest = 1;
  for (size_t l = 0; l < extents.size(); ++l) {
    if (extents[l] >= kMinParallelExtent) return l;
    if (extents[l] > longest) {
      chosen = l;
      longest = extents[l];
    }
  }
  return chosen;
}

void parallelize(Schedule& sch, const std::vector<LoopRef>& outer, int64_t total_work) {
  if (total_work < kParallelMinWork) return;
  std::vector<int64_t> extents;
  for (const LoopRef& loop : outer) extents.push_back(extent_of(sch, loop));
  if (std::optional<size_t> chosen = parallel_loop(extents)) sch.parallel(outer[*chosen]);
}

namespace {

// The innermost loop of each block split by `vector` lanes (when its extent is more than
// one vector) and vectorised.
void vectorize_innermost(Schedule& sch, const std::vector<BlockRef>& blocks, int64_t extent,
                         int64_t vector) {
  for (const BlockRef& part : blocks) {
    LoopRef lanes = innermost_loops(sch, part, 1)[0];
    if (extent > vector) lanes = sch.split(lanes, {-1, vector})[1];
    sch.vectorize(lanes);
  }
}

// No spatial loop outside the reduction to share among threads (a matrix-vector product,
// its loops [outer..., k, j] with the outer ones of one iteration): the outermost
// reduction loop is split into `parts` runs, each summed into a row of partial results of
// its own (rfactor at axis 0) in parallel, and the rows are added after by the block
// itself, under the same rule, serial. Each run of a matrix-vector product reads a
// contiguous block of the matrix.
void split_reduction(Schedule& sch, const BlockRef& block, const LoopRoles& roles, int64_t parts,
                     int64_t vector) {
  const size_t outer = roles.spatial.size() - 1;
  const int64_t extent = extent_of(sch, roles.spatial.back());
  std::vector<LoopRef> runs = sch.split(roles.reduce.front(), {parts, -1});
  BlockRef partials = sch.rfactor(block, runs[0], "global", 0);
  std::vector<LoopRef> loops = sch.get_loops(partials);
  BlockRef init = sch.decompose_reduction(partials, loops[outer + 1]);
  if (vector > 1) vectorize_innermost(sch, {partials, init}, extent, vector);
  sch.parallel(loops[outer]);
  std::vector<LoopRef> total_loops = sch.get_loops(block);
  schedule_reduction(sch, block, loop_roles(sch, block, total_loops), /*inner=*/true, vector,
                     /*parallel=*/false);
}

bool all_single(Schedule& sch, const std::vector<LoopRef>& loops) {
  return std::all_of(loops.begin(), loops.end(),
                     [&](const LoopRef& loop) { return extent_of(sch, loop) <= 1; });
}

}  // namespace

int64_t reduction_parts(int64_t extent) {
  for (int64_t parts = kMaxReductionParts; parts >= 2; parts /= 2) {
    if (extent % parts == 0 && extent / parts >= kMinReductionPart) return parts;
  }
  return 1;
}

int64_t schedule_reduction(Schedule& sch, const BlockRef& block, const LoopRoles& roles,
                           bool inner, int64_t vector, bool parallel) {
  if (roles.reduce.empty()) fail("no reduction loop");
  int64_t total_work = product(sch, roles.spatial) * product(sch, roles.reduce);
  std::vector<LoopRef> outer = roles.spatial;
  if (inner && !roles.spatial.empty()) {
    outer.pop_back();
    std::vector<LoopRef> order = outer;
    order.insert(order.end(), roles.reduce.begin(), roles.reduce.end());
    order.push_back(roles.spatial.back());
    sch.reorder(order);
  }
  const int64_t extent = roles.spatial.empty() ? 0 : extent_of(sch, roles.spatial.back());
  const bool vectors = inner && vector > 1 && extent >= vector;
  const int64_t parts = reduction_parts(extent_of(sch, roles.reduce.front()));
  if (parallel && inner && extent > 0 && total_work >= kMinSplitWork &&
      all_single(sch, outer) && parts > 1) {
    Schedule attempt = sch;
    try {
      split_reduction(attempt, block, roles, parts, vectors ? vector : 1);
      sch = std::move(attempt);
      return parts;
    } catch (const InternalError&) {
      throw;  // a bug, not a refusal
    } catch (const Error&) {
      // rfactor refuses this reduction (its body is not B = B + value): kept serial.
    }
  }
  BlockRef init = sch.decompose_reduction(block, roles.reduce.front());
  if (vectors) vectorize_innermost(sch, {block, init}, extent, vector);
  if (parallel) parallelize(sch, outer, total_work);
  return 1;
}

bool taken_by_earlier_rule(const loop::PrimFunc& func, const std::string& name) {
  std::vector<std::string> left = get_block_names(func);
  if (std::find(left.begin(), left.end(), name) == left.end()) return true;
  for (const loop::For* node : loops_on_path(block_path(func, name, "default schedule"))) {
    if (node->for_kind != loop::ForKind::serial) return true;
  }
  return false;
}

std::vector<std::string> readers_of(const loop::PrimFunc& func, const loop::BufferNode* buffer) {
  std::vector<std::string> readers;
  for (const std::string& name : get_block_names(func)) {
    const Block& block = get_block(func, name);
    for (const loop::BufferRegion& read : block.reads) {
      if (read.buffer.get() == buffer) {
        readers.push_back(name);
        break;
      }
    }
  }
  return readers;
}

std::optional<std::string> only_reader(const loop::PrimFunc& func, const loop::BufferNode* buffer,
                                       const std::string& except) {
  std::vector<std::string> readers = readers_of(func, buffer);
  std::erase(readers, except);
  if (readers.size() != 1) return std::nullopt;
  return readers.front();
}

void finish_register_tile(Schedule& sch, const BlockRef& block, const BlockRef& copy,
                          const LoopRef& reduction, const LoopRef& rows, const LoopRef& columns) {
  BlockRef init = sch.decompose_reduction(block, reduction);
  sch.unroll(rows);
  sch.vectorize(columns);
  for (const BlockRef& tile_block : {init, copy}) {
    std::vector<LoopRef> tile = innermost_loops(sch, tile_block, 2);
    sch.unroll(tile[0]);
    sch.vectorize(tile[1]);
  }
}

void fold_epilogue(Schedule& sch, const BlockRef& copy) {
  const std::string copy_name = sch.block_name(copy.var);
  const loop::Block& block = get_block(sch.func(), copy_name);
  if (block.writes.size() != 1) return;
  std::optional<std::string> epilogue =
      only_reader(sch.func(), block.writes[0].buffer.get(), copy_name);
  if (!epilogue) return;
  Schedule attempt = sch;
  try {
    attempt.reverse_compute_inline(attempt.get_block(*epilogue));
    sch = std::move(attempt);
  } catch (const InternalError&) {
    throw;  // a bug, not a refusal
  } catch (const Error&) {
    // The epilogue stays a loop nest of its own.
  }
}

void schedule_row_reduction(Schedule& sch, const BlockRef& block, const LoopRoles& roles,
                            int64_t vector, bool parallel) {
  if (roles.reduce.empty()) fail("no reduction loop");
  const LoopRef row = roles.reduce.back();
  if (extent_of(sch, row) % vector != 0) {
    fail("the row's {} elements are not whole vectors of {}", extent_of(sch, row), vector);
  }
  const int64_t total_work = product(sch, roles.spatial) * product(sch, roles.reduce);
  std::vector<LoopRef> parts = sch.split(row, {-1, vector});
  BlockRef partials = sch.rfactor(block, parts[1], "local");
  std::vector<LoopRef> loops = sch.get_loops(partials);
  // The partials' loops: the spatial ones, the other reduction loops and parts[0], then
  // the lanes; the reduction starts at the first loop that feeds it.
  BlockRef init = sch.decompose_reduction(partials, loops[roles.spatial.size()]);
  sch.vectorize(loops.back());
  sch.vectorize(innermost_loops(sch, init, 1)[0]);
  if (parallel) parallelize(sch, roles.spatial, total_work);
}

void schedule_elementwise(Schedule& sch, const LoopRoles& roles, int64_t vector, bool parallel) {
  std::vector<LoopRef> outer = roles.spatial;
  if (outer.empty()) return;
  int64_t total_work = product(sch, outer);
  if (vector > 1) {
    std::vector<LoopRef> parts = sch.split(outer.back(), {-1, vector});
    sch.vectorize(parts[1]);
    outer.back() = parts[0];
  }
  if (parallel) parallelize(sch, outer, total_work);
}

}  // namespace minic::schedule
