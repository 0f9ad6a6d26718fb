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
// Preconditions (each failure names the block, the loop and the reason):
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
//      before through the copied loops), the init as its body, the regions of its loads
//      and stores (loop::declared_regions); put its nest just before `loop`;
//   4. remove the init from the block.
#include "minic/schedule/primitives.h"

#include "block_edit.h"
#include "loop_tree.h"

#include "minic/ir/loop/access.h"
#include "minic/ir/loop/printer.h"
#include "minic/ir/loop/visitor.h"
#include "minic/support/error.h"

#include <unordered_set>

namespace minic::schedule {
namespace {

using loop::BufferRegion;

constexpr const char* kPrimitive = "decompose_reduction";

}  // namespace

std::string decompose_reduction(PrimFunc& func, const std::string& block_name,
                                const Expr& loop_var) {
  std::vector<Stmt> path = block_path(func, block_name, kPrimitive);
  const loop::Block& block = *path.back().as<loop::Block>();
  std::string loop_text = loop_name(loop_var);
  if (!block.init) fail("{}: block {} has no init", kPrimitive, block_name);
  const Stmt loop_stmt = loop_path(func, loop_var, kPrimitive).back();
  size_t start = 0;
  while (start < path.size() && !path[start].same_as(loop_stmt)) ++start;
  if (start == path.size()) {
    fail("{}: loop {} is not a loop around block {}", kPrimitive, loop_text, block_name);
  }

  // Which loops feed spatial and which feed reduction variables.
  auto feeds = [&](const loop::Var* var, loop::IterKind kind) {
    for (const loop::IterVar& iter : block.iter_vars) {
      if (iter.kind == kind && loop::uses_var(iter.binding, var)) return true;
    }
    return false;
  };
  std::unordered_set<const loop::Var*> reduction_loops;
  for (size_t i = 0; i < path.size(); ++i) {
    const auto* node = path[i].as<loop::For>();
    if (!node) continue;
    const loop::Var* var = node->var.as<loop::Var>();
    bool reduce = feeds(var, loop::IterKind::reduce);
    if (reduce) reduction_loops.insert(var);
    if (reduce && i < start) {
      fail("{}: loop {} is inside the reduction loop {} of block {}; the init would run in "
           "each of its iterations", kPrimitive, loop_text, var->name, block_name);
    }
    if (reduce && feeds(var, loop::IterKind::spatial)) {
      fail("{}: loop {} feeds both spatial and reduction variables of block {}", kPrimitive,
           var->name, block_name);
    }
  }

  // The copied loops and the init block's iteration variables.
  loop::VarMap renamed;
  std::vector<const loop::For*> copied;
  for (size_t i = start; i < path.size(); ++i) {
    const auto* node = path[i].as<loop::For>();
    if (!node || !feeds(node->var.as<loop::Var>(), loop::IterKind::spatial)) continue;
    copied.push_back(node);
    renamed[node->var.as<loop::Var>()] = loop::Var::make(node->var.as<loop::Var>()->name);
  }
  loop::Block::Parts init;
  init.name = unique_block_name(func, block_name + "_init");
  loop::VarMap iter_map;
  loop::VarBounds init_bounds;
  for (const loop::IterVar& iter : block.iter_vars) {
    if (iter.kind != loop::IterKind::spatial) continue;
    Expr var = loop::Var::make(iter.var.as<loop::Var>()->name);
    iter_map[iter.var.as<loop::Var>()] = var;
    init_bounds[var.as<loop::Var>()] = {0, iter.extent - 1};
    Expr binding = loop::substitute(iter.binding, renamed);
    init.iter_vars.push_back({var, iter.extent, iter.kind, binding});
  }
  for (const Expr& condition : conjuncts(block.predicate)) {
    bool reduce = loop::uses_any_var(condition, [&](const loop::Var* var) {
      return reduction_loops.count(var) > 0;
    });
    if (!reduce) {
      Expr kept = loop::substitute(condition, renamed);
      init.predicate = init.predicate ? loop::And::make(init.predicate, kept) : kept;
    } else if (!is_domain_guard(block, condition)) {
      fail("{}: block {} has the predicate {} on its reduction loops, which is more than a "
           "guard of its domain", kPrimitive, block_name, loop::print_expr(condition));
    }
  }
  init.body = loop::substitute(block.init, iter_map);
  loop::DeclaredRegions regions = loop::declared_regions(init.body, init_bounds);
  init.reads = std::move(regions.reads);
  init.writes = std::move(regions.writes);
  Stmt nest = loop::Block::make(std::move(init));
  std::string init_name = nest.as<loop::Block>()->name;
  for (size_t i = copied.size(); i-- > 0;) {
    const loop::For& node = *copied[i];
    nest = loop::For::make(renamed.at(node.var.as<loop::Var>()),
                           loop::substitute(node.min, renamed),
                           loop::substitute(node.extent, renamed), node.for_kind, nest,
                           node.thread_axis, node.annotations);
  }

  loop::Block::Parts update = block.parts();
  update.init = Stmt();
  Stmt body = replace_stmt(func.body, path.back(), loop::Block::make(std::move(update)));
  std::vector<Stmt> new_path = path_to_block(body, block_name);
  new_path.resize(start + 1);
  body = insert_beside(body, new_path, nest, /*after=*/false);
  commit_body(func, body, kPrimitive);
  return init_name;
}

}  // namespace minic::schedule
