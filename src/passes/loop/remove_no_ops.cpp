// remove-no-ops: statements that do nothing → nothing. Course module 4 (the pass is
// documented in include/minic/passes/loop/remove_no_ops.h).
//
// Invariant: same results; the function verifies.
//
// Algorithm, one IRMutator walk, bottom-up: each statement is rebuilt from its rebuilt
// children, and a statement that does nothing becomes a null Stmt, which its parent drops
// (a Seq leaves it out; a loop, an Allocate or a block around only nothing is nothing).
// The root becomes `evaluate 0` if nothing is left.
//
//   if (i < 4) { evaluate 0 } else { A[i] = 0.0 }   →   if (!(i < 4)) { A[i] = 0.0 }
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#include "minic/passes/loop/remove_no_ops.h"
#include "minic/passes/pass_registry.h"

#include "pass_util.h"

#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/visitor.h"

namespace minic::loop {
namespace {

// True if evaluating `expr` has no effect: it holds no barrier.
class BarrierFinder : public IRVisitor {
 public:
  bool found = false;
  void visit_Call(const Call* node) override {
    found = found || node->name == "barrier";
    IRVisitor::visit_Call(node);
  }
};

bool is_pure(const Expr& expr) {
  BarrierFinder finder;
  finder.visit(expr);
  return !finder.found;
}

bool nothing(const Stmt& stmt) { return pass_util::is_no_op(stmt); }

class NoOpRemover : public IRMutator {
 public:
  Stmt mutate_For(const For* node, const Stmt& self) override {
    std::optional<int64_t> extent = as_const_int(node->extent);
    if (extent && *extent <= 0) return Stmt();
    Stmt body = mutate(node->body);
    if (nothing(body)) return Stmt();
    if (body.same_as(node->body)) return self;
    return For::make(node->var, node->min, node->extent, node->for_kind, body, node->thread_axis,
                     node->annotations);
  }

  Stmt mutate_Store(const Store* node, const Stmt& self) override {
    const Load* load = node->value.as<Load>();
    if (!load || load->buffer != node->buffer) return self;
    for (size_t d = 0; d < node->indices.size(); ++d) {
      if (!pass_util::equal_exprs(node->indices[d], load->indices[d])) return self;
    }
    return Stmt();
  }

  Stmt mutate_IfThenElse(const IfThenElse* node, const Stmt& self) override {
    Stmt then_case = mutate(node->then_case);
    Stmt else_case = mutate(node->else_case);
    if (nothing(then_case) && nothing(else_case)) return Stmt();
    if (nothing(then_case)) return IfThenElse::make(Not::make(node->condition), else_case);
    if (nothing(else_case)) else_case = Stmt();
    if (then_case.same_as(node->then_case) && else_case.same_as(node->else_case)) return self;
    return IfThenElse::make(node->condition, then_case, else_case);
  }

  Stmt mutate_Evaluate(const Evaluate* node, const Stmt& self) override {
    return is_pure(node->value) ? Stmt() : self;
  }

  Stmt mutate_Allocate(const Allocate* node, const Stmt& self) override {
    Stmt body = mutate(node->body);
    if (nothing(body)) return Stmt();
    if (!pass_util::uses_buffer(body, node->buffer.get())) return body;
    return body.same_as(node->body) ? self : Allocate::make(node->buffer, body);
  }

  Stmt mutate_Block(const Block* node, const Stmt& self) override {
    Block::Parts parts = node->parts();
    parts.init = mutate(node->init);
    parts.body = mutate(node->body);
    if (nothing(parts.init) && nothing(parts.body)) return Stmt();
    if (nothing(parts.init)) parts.init = Stmt();
    if (nothing(parts.body)) parts.body = pass_util::no_op();  // a block has a body
    if (parts.init.same_as(node->init) && parts.body.same_as(node->body)) return self;
    return Block::make(std::move(parts));
  }

  Stmt mutate_Seq(const Seq* node, const Stmt& self) override {
    std::vector<Stmt> kept;
    for (const Stmt& stmt : node->stmts) {
      Stmt result = mutate(stmt);
      if (!nothing(result)) kept.push_back(result);
    }
    if (kept.empty()) return Stmt();
    if (kept.size() == node->stmts.size()) {
      bool same = true;
      for (size_t i = 0; i < kept.size(); ++i) same = same && kept[i].same_as(node->stmts[i]);
      if (same) return self;
    }
    return Seq::make(std::move(kept));
  }
};

}  // namespace

PrimFunc remove_no_ops(PrimFunc func) {
  Stmt body = NoOpRemover().mutate(func.body);
  func.body = body ? body : pass_util::no_op();
  return func;
}

MINIC_REGISTER_LOOP_PASS("remove-no-ops", remove_no_ops, "remove statements that do nothing");

}  // namespace minic::loop
