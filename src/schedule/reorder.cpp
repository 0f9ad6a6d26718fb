// reorder: the loops of a perfect nest in another order.
//
// Course module 4 (loop transformations): with split, the way to tile. The loops named
// take, in the order given, the places the named loops held; loops between them that are
// not named keep their places.
//
// Before, reorder(k, i):
//   for i in 0..64 {
//     for j in 0..48 {
//       for k in 0..32 {
//         block C(vi = spatial(64) i, vj = spatial(48) j, vk = reduce(32) k) { ... }
// After:
//   for k in 0..32 {
//     for j in 0..48 {
//       for i in 0..64 {
//         block C(vi = spatial(64) i, vj = spatial(48) j, vk = reduce(32) k) { ... }
//
// Preconditions (each refused with an Error before anything changes):
//   - at least one loop, no loop twice, every one a loop of the function, none bound to a
//     GPU axis (reorder before bind);
//   - all on one path from the root, and between the outermost and the innermost of them
//     only loops, each the single statement of the one above (a perfect nest);
//   - no loop of the nest has bounds that use the variable of another;
//   - a reduction block with an init below: each loop of the nest feeds only its spatial
//     or only its reduction variables. The init runs where every reduction variable is
//     0; for loops like these that stays the first iteration of each output element in
//     any order (a fused spatial-and-reduction loop, or one the block ignores, would
//     change it);
//   - the blocks below do not pass data to one another across iterations of the nest
//     (iteration_analysis.h); within one block the order is free (the block contract:
//     spatial iterations are independent, reduction iterations commute).
//
// Algorithm:
//   1. Find each loop's path; the longest must hold all the others.
//   2. Walk from the outermost named loop down to the innermost: the nest.
//   3. Check the preconditions on the nest.
//   4. The new order: the nest with the named loops' places refilled in the order given.
//   5. Rebuild the loops in the new order around the innermost loop's body (each keeps
//      its kind and annotations) and put the nest where the outermost loop was.
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#include "minic/schedule/primitives.h"

#include "iteration_analysis.h"
#include "loop_tree.h"
#include "minic/ir/loop/analysis.h"
#include "minic/support/error.h"

#include <algorithm>
#include <unordered_set>

namespace minic::schedule {
namespace {

using loop::For;
using loop::Stmt;
using loop::Var;

// The nest from the outermost named loop to the innermost: fails unless perfect.
std::vector<const For*> perfect_nest(const std::vector<Stmt>& deepest_path,
                                     const std::unordered_set<const Var*>& named) {
  std::vector<const For*> nest;
  for (const Stmt& stmt : deepest_path) {
    const For* node = stmt.as<For>();
    if (nest.empty() && !(node && named.count(node->var.as<Var>()))) continue;
    if (!node) {
      fail("reorder: the loops are not a perfect nest: loop {} holds a {} before loop {}",
           loop_name(nest.back()->var), loop::stmt_kind_name(stmt.kind()),
           loop_name(deepest_path.back().as<For>()->var));
    }
    if (!nest.empty() && !nest.back()->body.same_as(stmt)) {
      fail("reorder: the loops are not a perfect nest: loop {} holds more than loop {}",
           loop_name(nest.back()->var), loop_name(node->var));
    }
    nest.push_back(node);
  }
  return nest;
}

void check_bounds_independent(const std::vector<const For*>& nest) {
  for (const For* outer : nest) {
    for (const For* other : nest) {
      const Var* var = outer->var.as<Var>();
      if (loop::uses_var(other->min, var) || loop::uses_var(other->extent, var)) {
        fail("reorder: the bounds of loop {} use the variable of loop {}", loop_name(other->var),
             loop_name(outer->var));
      }
    }
  }
}

// Every loop of the nest feeds only spatial or only reduction variables of each block
// with an init below it.
void check_init_order(const std::vector<const For*>& nest) {
  for (const loop::Block* block : collect_blocks(nest.back()->body)) {
    if (!block->init) continue;
    for (const For* node : nest) {
      const Var* var = node->var.as<Var>();
      bool spatial = false;
      bool reduce = false;
      for (const loop::IterVar& iter : block->iter_vars) {
        if (!loop::uses_var(iter.binding, var)) continue;
        (iter.kind == loop::IterKind::reduce ? reduce : spatial) = true;
      }
      if (spatial == reduce) {
        fail("reorder: loop {} feeds {} of block {}, which has an init: in another order the "
             "init might no longer run first for each element",
             var->name, spatial ? "both spatial and reduction variables" : "no variable",
             block->name);
      }
    }
  }
}

}  // namespace

void reorder(PrimFunc& func, const std::vector<Expr>& loops) {
  if (loops.empty()) fail("reorder: needs at least one loop");
  std::vector<Stmt> deepest;
  std::unordered_set<const Var*> named;
  for (const Expr& loop : loops) {
    std::vector<Stmt> path = loop_path(func, loop, "reorder");
    if (!named.insert(loop.as<Var>()).second) {
      fail("reorder: loop {} is named twice", loop_name(loop));
    }
    if (path.size() > deepest.size()) deepest = std::move(path);
  }
  for (const Expr& loop : loops) {
    bool on_path = std::any_of(deepest.begin(), deepest.end(), [&](const Stmt& stmt) {
      const For* node = stmt.as<For>();
      return node && node->var.same_as(loop);
    });
    if (!on_path) {
      fail("reorder: loops {} and {} are not nested one in the other", loop_name(loop),
           loop_name(deepest.back().as<For>()->var));
    }
  }
  std::vector<const For*> nest = perfect_nest(deepest, named);
  for (const For* node : nest) {
    if (node->for_kind == loop::ForKind::thread_binding) {
      fail("reorder: loop {} is bound to {}; reorder before binding", loop_name(node->var),
           node->thread_axis);
    }
  }
  check_bounds_independent(nest);
  check_init_order(nest);
  // The dependence test for each loop of the nest: `path` ends at that loop.
  std::vector<Stmt> path = deepest;
  for (size_t depth = nest.size(); depth-- > 0; path.pop_back()) {
    std::string reason = find_dependence(path, {.trust_blocks = true});
    if (!reason.empty()) {
      fail("reorder: cannot show that the new order computes the same: {}, under loop {}",
           reason, loop_name(nest[depth]->var));
    }
  }

  // The new order: the named loops' places, refilled in the order given.
  std::vector<const For*> order = nest;
  size_t next = 0;
  for (const For*& place : order) {
    if (!named.count(place->var.as<Var>())) continue;
    const Var* wanted = loops[next++].as<Var>();
    place = *std::find_if(nest.begin(), nest.end(),
                          [&](const For* node) { return node->var.as<Var>() == wanted; });
  }
  Stmt body = nest.back()->body;
  for (size_t depth = order.size(); depth-- > 0;) {
    const For* node = order[depth];
    body = For::make(node->var, node->min, node->extent, node->for_kind, body,
                     node->thread_axis, node->annotations);
  }
  Stmt outermost = deepest[deepest.size() - nest.size()];
  commit_body(func, replace_stmt(func.body, outermost, body), "reorder");
}

}  // namespace minic::schedule
