// Exercise m3-fuse-loops, solved: the loop pass `fuse-loops`, which makes two
// neighbouring loops over the same range one loop, where that keeps the results. Course
// module 3.
//
// Fusing `for i {S1}` and `for i' {S2}` into `for i {S1; S2[i' := i]}` runs S2's
// iteration i right after S1's iteration i instead of after all of S1. That keeps the
// results when no iteration of one loop touches what another iteration of the other
// writes. The pass proves it the simple way: every buffer that one loop writes and the
// other touches is indexed, in some dimension, by the same `i`, `i + c` or `i - c` (c a
// constant) in every access of both loops. Iteration i of either loop then stays in its
// own slice of that buffer. Anything else (a shifted or reversed read, a dimension that
// does not follow i, a vector of lanes) is not fused: the test is sufficient, not
// exact, and so it is safe.
//
// Each list of statements is walked left to right, fusing a loop into the one before it
// as long as the test allows; then the walk goes inside, where the fused body's inner
// loops are neighbours now and may fuse in turn.
//
// Chapter: docs/module3-loop-ir.md#2-walking-and-rewriting
#include "minic/ir/loop/access.h"
#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/visitor.h"
#include "minic/passes/pass_registry.h"

#include <set>

namespace minic::loop {
namespace {

// True if `index` is var, var + c, var - c or c + var, for a constant c.
bool follows(const Expr& index, const Var* var) {
  if (index.as<Var>() == var) return true;
  if (const Add* add = index.as<Add>()) {
    return (follows(add->a, var) && as_const_int(add->b)) ||
           (as_const_int(add->a) && follows(add->b, var));
  }
  if (const Sub* sub = index.as<Sub>()) return follows(sub->a, var) && as_const_int(sub->b);
  return false;
}

// True if, among `accesses`, those of `buffer` share one index in some dimension that
// follows `var`.
bool stays_in_its_slice(const std::vector<Access>& accesses, const BufferNode* buffer,
                        const Var* var) {
  std::vector<Access> uses = accesses_of(accesses, buffer);
  if (uses.empty()) return false;  // named by a block's region only
  for (size_t d = 0; d < uses.front().indices.size(); ++d) {
    const Expr& index = uses.front().indices[d];
    if (!follows(index, var)) continue;
    bool shared = true;
    for (const Access& use : uses) shared = shared && same_expr(use.indices[d], index);
    if (shared) return true;
  }
  return false;
}

// `second`'s body with `first`'s variable in place of its own, if the two loops may
// run as one; else a null Stmt.
Stmt body_to_fuse(const For* first, const For* second) {
  if (first->for_kind != second->for_kind || first->for_kind == ForKind::thread_binding ||
      !same_expr(first->min, second->min) || !same_expr(first->extent, second->extent)) {
    return Stmt();
  }
  const Var* var = first->var.as<Var>();
  Stmt renamed = substitute(second->body, VarMap{{second->var.as<Var>(), first->var}});
  std::vector<Access> accesses = collect_accesses(first->body, {.bindings = true});
  std::vector<Access> more = collect_accesses(renamed, {.bindings = true});
  accesses.insert(accesses.end(), more.begin(), more.end());
  BufferUse one = buffer_use(first->body);
  BufferUse two = buffer_use(renamed);
  std::set<const BufferNode*> shared;
  for (const BufferNode* buffer : one.writes) if (two.touches(buffer)) shared.insert(buffer);
  for (const BufferNode* buffer : two.writes) if (one.touches(buffer)) shared.insert(buffer);
  for (const BufferNode* buffer : shared) {
    if (!stays_in_its_slice(accesses, buffer, var)) return Stmt();
  }
  return renamed;
}

// The statements of a Seq, or the one statement.
std::vector<Stmt> statements_of(const Stmt& stmt) {
  if (const Seq* seq = stmt.as<Seq>()) return seq->stmts;
  return {stmt};
}

class LoopFuser : public IRMutator {
 public:
  Stmt mutate_Seq(const Seq* node, const Stmt& self) override {
    std::vector<Stmt> fused;
    bool changed = false;
    for (const Stmt& stmt : node->stmts) {
      const For* previous = fused.empty() ? nullptr : fused.back().as<For>();
      const For* loop = stmt.as<For>();
      Stmt body = previous && loop ? body_to_fuse(previous, loop) : Stmt();
      if (!body) {
        fused.push_back(stmt);
        continue;
      }
      std::vector<Stmt> both = statements_of(previous->body);
      for (const Stmt& part : statements_of(body)) both.push_back(part);
      fused.back() = For::make(previous->var, previous->min, previous->extent,
                               previous->for_kind, Seq::make(both), previous->thread_axis,
                               previous->annotations);
      changed = true;
    }
    for (Stmt& stmt : fused) {
      Stmt inside = mutate(stmt);
      changed = changed || !inside.same_as(stmt);
      stmt = inside;
    }
    if (!changed) return self;
    return fused.size() == 1 ? fused[0] : Seq::make(std::move(fused));
  }
};

PrimFunc fuse_loops(PrimFunc func) {
  func.body = LoopFuser().mutate(func.body);
  return func;
}

}  // namespace

MINIC_REGISTER_LOOP_PASS("fuse-loops", fuse_loops,
                         "exercise m3-fuse-loops: fuse neighbouring loops over the same range");

}  // namespace minic::loop
