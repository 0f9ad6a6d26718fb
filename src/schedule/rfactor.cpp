// rfactor: a reduction in two steps, through partial results that a loop of the
// reduction makes independent.
//
// Course module 4. A reduction's iterations all update one element, so none of its
// loops can run in parallel. rfactor takes one loop of the reduction, ki, and makes it a
// spatial axis of partial results: block S_rf reduces everything but ki into
// rf[..., ki], and block S then reduces the ki partials. The loops of S_rf over ki can
// now be bound to threads (a GPU block reduces a row with one partial per thread: module
// 6, docs/module6-cuda.md#reductions-across-threads) or vectorised.
//
//   Before (k split into ko, ki):
//   for i in 0..16 {
//     for ko in 0..8 {
//       for ki in 0..32 {
//         block S(vi = spatial(16) i, vk = reduce(256) ko * 32 + ki) {
//           init { S[vi] = 0.0 }
//           S[vi] = S[vi] + X[vi, vk]
//
//   After rfactor(f, "S", ki, shared):
//   alloc S_rf: f32[16,32] shared {
//     for i in 0..16 {
//       for ko in 0..8 {
//         for ki in 0..32 {
//           block S_rf(vi = spatial(16) i, vko = reduce(8) ko, vr = spatial(32) ki) {
//             init { S_rf[vi, vr] = 0.0 }
//             S_rf[vi, vr] = S_rf[vi, vr] + X[vi, vko * 32 + vr]
//     for i in 0..16 {
//       for ax_r in 0..32 {
//         block S(vi = spatial(16) i, r = reduce(32) ax_r) {
//           init { S[vi] = 0.0 }
//           S[vi] = S[vi] + S_rf[vi, r]
//
// Preconditions (each refused with an Error naming the block, the loop and the reason):
//   - the block's body is one store B[v...] = combine(B[v...], value) and its init one
//     store B[v...] = start, with combine +, *, max or min, v... the block's spatial
//     iteration variables, each once, and start an immediate that is the combiner's
//     identity (0 for +, 1 for *; any for max and min, which may see it twice);
//   - `loop` is a loop around the block that feeds its reduction variables only, and
//     every loop that feeds a reduction variable feeds no spatial one and runs from 0 to
//     a constant: the reduction variables become expressions of those loops alone.
//
// Algorithm:
//   1. check the preconditions;
//   2. the partials' buffer `<B>_rf` of `scope`: B's spatial extents with `loop`'s
//      inserted at `factor_axis` (by default after them: rf[vi, vr] above; at 0,
//      rf[vr, vi], each partial a whole row of B, which a loop over vr run in parallel
//      fills row by row -- a matrix-vector product split along k, one row per thread);
//   3. the rf block in place of the block, under the same loops: its spatial variables,
//      a spatial variable for `loop` and a reduction variable for each other reduction
//      loop (bound to those loops), the reduction variables in its body replaced by their
//      bindings written in the new variables, the predicate kept (with no other reduction
//      loop, each partial is `start` combined with its one value, and has no init);
//   4. the block itself after the loop nest that holds it alone (nest_root_index), under
//      copies of that nest's loops that feed spatial variables and a loop ax_r over the
//      partials: its spatial variables as before, one reduction over the partials from
//      `start`, the predicate's parts on spatial loops; the partials' buffer allocated
//      around the function's body. (So in a softmax, whose row loop holds the row's
//      maximum, sum and normalisation, the maximum is complete before the sum reads it.)
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#include "minic/schedule/primitives.h"

#include "block_edit.h"
#include "loop_tree.h"
#include "preconditions.h"

#include "minic/ir/loop/binary_operands.h"
#include "minic/ir/loop/printer.h"

#include <fmt/format.h>

#include <unordered_set>

namespace minic::schedule {
namespace {

using loop::Block;
using loop::For;
using loop::Var;

constexpr const char* kPrimitive = "rfactor";

// The reduction `B[v...] = combine(B[v...], value)` with init `B[v...] = start`.
struct Reduction {
  const loop::Store* update = nullptr;
  loop::ExprKind combine = loop::ExprKind::Add;
  Expr value;  // the operand that is not B[v...]
  Expr start;  // the init's value
};

bool is_identity(loop::ExprKind combine, const Expr& start) {
  if (combine == loop::ExprKind::Max || combine == loop::ExprKind::Min) return true;
  double one = combine == loop::ExprKind::Mul ? 1.0 : 0.0;
  if (const auto* value = start.as<loop::FloatImm>()) return value->value == one;
  if (const auto* value = start.as<loop::IntImm>()) {
    return static_cast<double>(value->value) == one;
  }
  return false;
}

// Step 1 for the block's body and init.
Reduction read_reduction(const Block& block) {
  const auto* update = block.body.as<loop::Store>();
  const auto* init = block.init ? block.init.as<loop::Store>() : nullptr;
  if (!update || !init || init->buffer != update->buffer) {
    fail("{}: block {} is not one store with an init of the same buffer", kPrimitive,
         block.name);
  }
  bool one_element = at_spatial_vars(block, update->indices);
  for (size_t d = 0; one_element && d < init->indices.size(); ++d) {
    one_element = same_expr(init->indices[d], update->indices[d]);
  }
  if (!one_element) {
    fail("{}: block {} does not store to {} at its spatial iteration variables, each once",
         kPrimitive, block.name, update->buffer->name);
  }
  Reduction reduction{update, update->value.kind(), Expr(), init->value};
  auto own_element = [&](const Expr& operand) {
    const auto* load = operand.as<loop::Load>();
    if (!load || load->buffer != update->buffer) return false;
    for (size_t d = 0; d < load->indices.size(); ++d) {
      if (!same_expr(load->indices[d], update->indices[d])) return false;
    }
    return true;
  };
  bool combiner = reduction.combine == loop::ExprKind::Add ||
                  reduction.combine == loop::ExprKind::Mul ||
                  reduction.combine == loop::ExprKind::Max ||
                  reduction.combine == loop::ExprKind::Min;
  auto [a, b] = loop::binary_operands(update->value);
  if (combiner && own_element(*a)) reduction.value = *b;
  if (combiner && !reduction.value && own_element(*b)) reduction.value = *a;
  bool reads_output = reduction.value &&
                      !loop::accesses_of(loop::collect_accesses(reduction.value),
                                         update->buffer.get()).empty();
  if (!reduction.value || reads_output) {
    fail("{}: block {} is not B = B + value (or *, max, min) of its own element, value not "
         "reading B", kPrimitive, block.name);
  }
  if (!is_identity(reduction.combine, reduction.start)) {
    fail("{}: block {} starts its reduction from {}, not the identity of its combiner",
         kPrimitive, block.name, loop::print_expr(reduction.start));
  }
  return reduction;
}

Expr combine(loop::ExprKind kind, const Expr& a, const Expr& b) {
  switch (kind) {
    case loop::ExprKind::Mul: return loop::Mul::make(a, b);
    case loop::ExprKind::Max: return loop::Max::make(a, b);
    case loop::ExprKind::Min: return loop::Min::make(a, b);
    default: return loop::Add::make(a, b);
  }
}

// Step 1 for the loops: those around the block that feed its reduction variables.
std::vector<const For*> reduction_loops(const Block& block, const std::vector<Stmt>& path,
                                        const For& factor) {
  std::vector<const For*> loops;
  bool found = false;
  for (const For* node : loops_on_path(path)) {
    const Var* var = node->var.as<Var>();
    if (!feeds(block, var, loop::IterKind::reduce)) continue;
    if (feeds(block, var, loop::IterKind::spatial)) {
      fail("{}: loop {} feeds both spatial and reduction variables of block {}", kPrimitive,
           var->name, block.name);
    }
    std::optional<int64_t> min = loop::as_const_int(node->min);
    if (!min || *min != 0 || !loop::as_const_int(node->extent)) {
      fail("{}: loop {} of block {}'s reduction does not run from 0 to a constant", kPrimitive,
           var->name, block.name);
    }
    found = found || node == &factor;
    loops.push_back(node);
  }
  if (!found) {
    fail("{}: loop {} is not a loop around block {} that feeds its reduction", kPrimitive,
         factor.var.as<Var>()->name, block.name);
  }
  return loops;
}

// Step 4: the block reducing the partials, under copies of the loops from the nest's
// root (path[root]) down that feed its spatial variables, and a loop over the partials.
Stmt total_nest(const Block& block, const std::vector<Stmt>& path, size_t root,
                const Reduction& reduction, const loop::Buffer& partials, int axis) {
  loop::VarMap renamed;
  std::vector<const For*> copied;
  std::unordered_set<const Var*> reduction_loops;
  for (size_t i = root; i < path.size(); ++i) {
    const auto* node = path[i].as<For>();
    if (!node) continue;
    const Var* var = node->var.as<Var>();
    if (feeds(block, var, loop::IterKind::reduce)) reduction_loops.insert(var);
    if (!feeds(block, var, loop::IterKind::spatial)) continue;
    copied.push_back(node);
    renamed[var] = Var::make(var->name);
  }
  Block::Parts total;
  total.name = block.name;
  loop::VarMap iter_map;
  for (const loop::IterVar& iter : block.iter_vars) {
    if (iter.kind != loop::IterKind::spatial) continue;
    Expr var = Var::make(iter.var.as<Var>()->name);
    iter_map[iter.var.as<Var>()] = var;
    Expr binding = loop::substitute(iter.binding, renamed);
    total.iter_vars.push_back({var, iter.extent, iter.kind, binding});
  }
  Expr partial_loop = Var::make("ax_r");
  Expr r = Var::make("r");
  int64_t count = partials->shape[axis];
  total.iter_vars.push_back({r, count, loop::IterKind::reduce, partial_loop});
  std::vector<Expr> indices;
  for (const Expr& index : reduction.update->indices) {
    indices.push_back(iter_map.at(index.as<Var>()));
  }
  std::vector<Expr> partial_indices = indices;
  partial_indices.insert(partial_indices.begin() + axis, r);
  const loop::Buffer& output = reduction.update->buffer;
  total.body = loop::Store::make(output, indices,
                                 combine(reduction.combine, loop::Load::make(output, indices),
                                         loop::Load::make(partials, partial_indices)));
  total.init = loop::Store::make(output, indices, reduction.start);
  for (const Expr& condition : conjuncts(block.predicate)) {
    bool on_reduction = loop::uses_any_var(
        condition, [&](const Var* var) { return reduction_loops.count(var) > 0; });
    if (on_reduction) continue;
    Expr kept = loop::substitute(condition, renamed);
    total.predicate = total.predicate ? loop::And::make(total.predicate, kept) : kept;
  }
  loop::VarBounds bounds;
  for (const loop::IterVar& iter : total.iter_vars) {
    bounds[iter.var.as<Var>()] = {0, iter.extent - 1};
  }
  loop::DeclaredRegions regions = loop::declared_regions(total.body, bounds);
  total.reads = std::move(regions.reads);
  total.writes = std::move(regions.writes);
  Stmt nest = For::make(partial_loop, loop::IntImm::make(0), loop::IntImm::make(count),
                        loop::ForKind::serial, Block::make(std::move(total)));
  for (size_t i = copied.size(); i-- > 0;) {
    const For& node = *copied[i];
    nest = For::make(renamed.at(node.var.as<Var>()), loop::substitute(node.min, renamed),
                     loop::substitute(node.extent, renamed), node.for_kind, nest,
                     node.thread_axis, node.annotations);
  }
  return nest;
}

}  // namespace

std::string rfactor(PrimFunc& func, const std::string& block_name, const Expr& loop_var,
                    MemoryScope scope, std::optional<int> factor_axis) {
  std::vector<Stmt> path = block_path(func, block_name, kPrimitive);
  const Block& block = *path.back().as<Block>();
  const For& factor = *loop_path(func, loop_var, kPrimitive).back().as<For>();
  Reduction reduction = read_reduction(block);
  std::vector<const For*> loops = reduction_loops(block, path, factor);
  const loop::Buffer& output = reduction.update->buffer;
  int64_t factor_extent = *loop::as_const_int(factor.extent);

  // 2. The partials' buffer.
  std::vector<int64_t> shape;
  std::vector<Expr> spatial_vars;
  for (const Expr& index : reduction.update->indices) {
    spatial_vars.push_back(index);
    for (const loop::IterVar& iter : block.iter_vars) {
      if (iter.var.same_as(index)) shape.push_back(iter.extent);
    }
  }
  const int axis = factor_axis.value_or(static_cast<int>(shape.size()));
  if (axis < 0 || axis > static_cast<int>(shape.size())) {
    fail("{}: factor axis {} of block {}'s partials is not in 0..{}", kPrimitive, axis,
         block.name, shape.size());
  }
  shape.insert(shape.begin() + axis, factor_extent);
  std::string rf_name = unique_buffer_name(func, output->name + "_rf");
  loop::Buffer partials = loop::BufferNode::make(rf_name, output->dtype, shape, scope);

  // 3. The rf block: one new iteration variable per reduction loop.
  Block::Parts rf;
  rf.name = unique_block_name(func, block.name + "_rf");
  loop::VarMap loop_to_iter;
  Expr factor_var;
  for (const loop::IterVar& iter : block.iter_vars) {
    if (iter.kind == loop::IterKind::spatial) rf.iter_vars.push_back(iter);
  }
  for (const For* node : loops) {
    bool is_factor = node == &factor;
    Expr var = Var::make(is_factor ? "vr" : "v" + node->var.as<Var>()->name);
    loop_to_iter[node->var.as<Var>()] = var;
    if (is_factor) factor_var = var;
    rf.iter_vars.push_back({var, *loop::as_const_int(node->extent),
                            is_factor ? loop::IterKind::spatial : loop::IterKind::reduce,
                            node->var});
  }
  loop::VarMap reduction_values;
  for (const loop::IterVar& iter : block.iter_vars) {
    if (iter.kind != loop::IterKind::reduce) continue;
    reduction_values[iter.var.as<Var>()] = loop::substitute(iter.binding, loop_to_iter);
  }
  std::vector<Expr> rf_indices = spatial_vars;
  rf_indices.insert(rf_indices.begin() + axis, factor_var);
  Expr own = loop::Load::make(partials, rf_indices);
  Expr value = loop::substitute(reduction.value, reduction_values);
  bool reduces = loops.size() > 1;  // else each partial has one term: start + value
  rf.body = loop::Store::make(partials, rf_indices,
                              combine(reduction.combine, reduces ? own : reduction.start, value));
  if (reduces) rf.init = loop::Store::make(partials, rf_indices, reduction.start);
  rf.predicate = block.predicate;
  loop::VarBounds bounds;
  for (const loop::IterVar& iter : rf.iter_vars) bounds[iter.var.as<Var>()] = {0, iter.extent - 1};
  loop::DeclaredRegions regions = loop::declared_regions(rf.body, bounds);
  rf.reads = std::move(regions.reads);
  rf.writes = std::move(regions.writes);
  std::string rf_block = rf.name;
  Stmt body = replace_stmt(func.body, path.back(), Block::make(std::move(rf)));

  // 4. The block over the partials, after the nest that holds the block alone.
  size_t root = nest_root_index(path);
  Stmt nest = total_nest(block, path, root, reduction, partials, axis);
  std::vector<Stmt> new_path = path_to_block(body, rf_block);
  new_path.resize(root + 1);
  body = insert_beside(body, new_path, nest, /*after=*/true);
  commit_body(func, loop::Allocate::make(partials, body), kPrimitive);
  return rf_block;
}

}  // namespace minic::schedule
