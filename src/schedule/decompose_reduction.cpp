// decompose_reduction: split a reduction block's init out into a block of its own, run
// before the reduction loops.
//
// Course module 4. A block's init runs "when every reduction variable is 0": a test in
// the innermost loop. Code generation wants the zeroing as its own loop nest, before the
// loop that starts the reduction, so the update loop is a plain accumulation (and can be
// vectorised or tensorised).
//
//   Before                                  After decompose_reduction(f, "C", k)
//   for i in 0..64 {                        for i in 0..64 {
//     for j in 0..48 {                        for j in 0..48 {
//       for k in 0..32 {                        block C_init(vi = spatial(64) i,
//         block C(vi = spatial(64) i,                        vj = spatial(48) j) {
//                 vj = spatial(48) j,             writes(C[vi, vj])
//                 vk = reduce(32) k) {            C[vi, vj] = 0.0
//           init { C[vi, vj] = 0.0 }            }
//           C[vi, vj] = C[vi, vj] + ...         for k in 0..32 {
//                                                 block C(vi = ..., vk = reduce(32) k) {
//                                                   C[vi, vj] = C[vi, vj] + ...
//
// Preconditions (each a named check of this file, whose refusal names the block, the loop
// and the reason):
//   - the block has an init, and `loop` is one of the loops around it;
//   - no loop above `loop` feeds a reduction variable (the init would run again in each
//     of its iterations), and no loop from `loop` down feeds both a spatial and a
//     reduction variable;
//   - each part of the block's predicate either uses no reduction loop (it is kept) or
//     guards a reduction variable's domain (true when that variable is 0, so dropped).
//
// Algorithm:
//   1. check the preconditions;
//   2. copy the loops from `loop` down that feed spatial variables (new loop variables,
//      same ranges and kinds); loops that feed only reduction variables are left out;
//   3. make the block `<name>_init`: the spatial iteration variables (new ones, bound as
//      before through the copied loops), the predicate's parts on spatial loops, the init
//      as its body, the regions of its loads and stores (loop::declared_regions);
//   4. put the init's nest just before `loop`, and remove the init from the block.
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#include "minic/schedule/primitives.h"

#include "block_edit.h"
#include "loop_tree.h"
#include "preconditions.h"

#include "minic/ir/loop/access.h"
#include "minic/ir/loop/printer.h"

#include <fmt/format.h>

#include <unordered_set>

namespace minic::schedule {
namespace {

using loop::Block;
using loop::For;
using loop::Var;

constexpr const char* kPrimitive = "decompose_reduction";

// The variables of the loops on `path` that feed a reduction variable.
std::unordered_set<const Var*> reduction_loops(const Block& block, const std::vector<Stmt>& path) {
  std::unordered_set<const Var*> loops;
  for (const For* node : loops_on_path(path)) {
    const Var* var = node->var.as<Var>();
    if (feeds(block, var, loop::IterKind::reduce)) loops.insert(var);
  }
  return loops;
}

Refusal has_init(const Block& block) {
  if (block.init) return std::nullopt;
  return fmt::format("block {} has no init", block.name);
}

// Sets `start` to the position of the loop in the block's path.
Refusal is_loop_around(const std::vector<Stmt>& path, const Stmt& loop, size_t& start) {
  for (start = 0; start < path.size(); ++start) {
    if (path[start].same_as(loop)) return std::nullopt;
  }
  return fmt::format("loop {} is not a loop around block {}",
                     loop_name(loop.as<For>()->var), path.back().as<Block>()->name);
}

// The init runs once per element: no loop above `start` feeds a reduction variable, and
// no loop feeds both kinds.
Refusal init_runs_once(const Block& block, const std::vector<Stmt>& path, size_t start) {
  for (size_t i = 0; i < path.size(); ++i) {
    const auto* node = path[i].as<For>();
    if (!node || !feeds(block, node->var.as<Var>(), loop::IterKind::reduce)) continue;
    if (i < start) {
      return fmt::format("loop {} is inside the reduction loop {} of block {}; the init would "
                         "run in each of its iterations", loop_name(path[start].as<For>()->var),
                         node->var.as<Var>()->name, block.name);
    }
    if (feeds(block, node->var.as<Var>(), loop::IterKind::spatial)) {
      return fmt::format("loop {} feeds both spatial and reduction variables of block {}",
                         node->var.as<Var>()->name, block.name);
    }
  }
  return std::nullopt;
}

bool uses_reduction_loop(const Expr& condition, const std::unordered_set<const Var*>& loops) {
  return loop::uses_any_var(condition, [&](const Var* var) { return loops.count(var) > 0; });
}

// Each part of the predicate on reduction loops guards the domain (and is dropped).
Refusal reduction_guards_only_domain(const Block& block,
                                     const std::unordered_set<const Var*>& loops) {
  for (const Expr& condition : conjuncts(block.predicate)) {
    if (uses_reduction_loop(condition, loops) && !is_domain_guard(block, condition)) {
      return fmt::format("block {} has the predicate {} on its reduction loops, which is more "
                         "than a guard of its domain", block.name, loop::print_expr(condition));
    }
  }
  return std::nullopt;
}

// Step 3: the init block, its spatial variables bound through the copied loops (`renamed`).
Stmt init_block(const PrimFunc& func, const Block& block, const loop::VarMap& renamed,
                const std::unordered_set<const Var*>& reduction) {
  Block::Parts init;
  init.name = unique_block_name(func, block.name + "_init");
  loop::VarMap iter_map;
  loop::VarBounds bounds;
  for (const loop::IterVar& iter : block.iter_vars) {
    if (iter.kind != loop::IterKind::spatial) continue;
    Expr var = Var::make(iter.var.as<Var>()->name);
    iter_map[iter.var.as<Var>()] = var;
    bounds[var.as<Var>()] = {0, iter.extent - 1};
    Expr binding = loop::substitute(iter.binding, renamed);
    init.iter_vars.push_back({var, iter.extent, iter.kind, binding});
  }
  for (const Expr& condition : conjuncts(block.predicate)) {
    if (uses_reduction_loop(condition, reduction)) continue;
    Expr kept = loop::substitute(condition, renamed);
    init.predicate = init.predicate ? loop::And::make(init.predicate, kept) : kept;
  }
  init.body = loop::substitute(block.init, iter_map);
  loop::DeclaredRegions regions = loop::declared_regions(init.body, bounds);
  init.reads = std::move(regions.reads);
  init.writes = std::move(regions.writes);
  return Block::make(std::move(init));
}

}  // namespace

std::string decompose_reduction(PrimFunc& func, const std::string& block_name,
                                const Expr& loop_var) {
  std::vector<Stmt> path = block_path(func, block_name, kPrimitive);
  const Block& block = *path.back().as<Block>();

  // 1. The preconditions.
  require(kPrimitive, has_init(block));
  size_t start = 0;
  require(kPrimitive, is_loop_around(path, loop_path(func, loop_var, kPrimitive).back(), start));
  require(kPrimitive, init_runs_once(block, path, start));
  std::unordered_set<const Var*> reduction = reduction_loops(block, path);
  require(kPrimitive, reduction_guards_only_domain(block, reduction));

  // 2. The loops from `loop` down that feed spatial variables, with new variables.
  loop::VarMap renamed;
  std::vector<const For*> copied;
  for (size_t i = start; i < path.size(); ++i) {
    const auto* node = path[i].as<For>();
    if (!node || !feeds(block, node->var.as<Var>(), loop::IterKind::spatial)) continue;
    copied.push_back(node);
    renamed[node->var.as<Var>()] = Var::make(node->var.as<Var>()->name);
  }

  // 3. The init block, under copies of those loops.
  Stmt nest = init_block(func, block, renamed, reduction);
  std::string init_name = nest.as<Block>()->name;
  for (size_t i = copied.size(); i-- > 0;) {
    const For& node = *copied[i];
    nest = For::make(renamed.at(node.var.as<Var>()), loop::substitute(node.min, renamed),
                     loop::substitute(node.extent, renamed), node.for_kind, nest,
                     node.thread_axis, node.annotations);
  }

  // 4. The init's nest before `loop`; the block without its init.
  Block::Parts update = block.parts();
  update.init = Stmt();
  Stmt body = replace_stmt(func.body, path.back(), Block::make(std::move(update)));
  std::vector<Stmt> new_path = path_to_block(body, block_name);
  new_path.resize(start + 1);
  body = insert_beside(body, new_path, nest, /*after=*/false);
  commit_body(func, body, kPrimitive);
  return init_name;
}

}  // namespace minic::schedule
