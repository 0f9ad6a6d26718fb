// Exercise m3-unswitch, solved: the loop pass `unswitch`, which moves an `if` whose
// condition does not change inside a loop out of it. Course module 3.
//
// Bottom-up, one IRMutator walk: a loop whose whole body is an `if`, with a condition
// that reads no memory and does not use the loop's variable, becomes an `if` of two
// loops, one around each side. The condition is then tested once instead of on every
// iteration, and each loop's body is straight-line code again (what vectorisation and
// unrolling want). Inner loops are done first, so an invariant `if` climbs as far as it
// can. The `else` side gets a loop with a new variable: every loop defines its own.
// Thread-bound loops stay as they are: a GPU thread's index is not a loop to move.
//
// Chapter: docs/module3-loop-ir.md#2-walking-and-rewriting
#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/visitor.h"
#include "minic/passes/pass_registry.h"

namespace minic::loop {
namespace {

// True if evaluating `expr` reads memory or calls anything (a barrier, a math function).
class ReadsMemory : public IRVisitor {
 public:
  bool found = false;
  void visit_Load(const Load*) override { found = true; }
  void visit_Call(const Call*) override { found = true; }
};

bool is_invariant_in(const Expr& condition, const For* loop) {
  ReadsMemory reads;
  reads.visit(condition);
  return !reads.found && !uses_var(condition, loop->var.as<Var>());
}

// `loop` around `body` (none if there is no body), with a new variable when `fresh`.
Stmt loop_around(const For* loop, const Stmt& body, bool fresh) {
  if (!body) return Stmt();
  Expr var = loop->var;
  Stmt new_body = body;
  if (fresh) {
    const Var* old_var = loop->var.as<Var>();
    var = Var::make(old_var->name, old_var->type);
    new_body = substitute(body, VarMap{{old_var, var}});
  }
  return For::make(var, loop->min, loop->extent, loop->for_kind, new_body, loop->thread_axis,
                   loop->annotations);
}

class Unswitcher : public IRMutator {
 public:
  Stmt mutate_For(const For* node, const Stmt& self) override {
    Stmt body = mutate(node->body);
    const IfThenElse* branch = body.as<IfThenElse>();
    if (branch && node->for_kind != ForKind::thread_binding &&
        is_invariant_in(branch->condition, node)) {
      return IfThenElse::make(branch->condition, loop_around(node, branch->then_case, false),
                              loop_around(node, branch->else_case, true));
    }
    if (body.same_as(node->body)) return self;
    return For::make(node->var, node->min, node->extent, node->for_kind, body, node->thread_axis,
                     node->annotations);
  }
};

PrimFunc unswitch(PrimFunc func) {
  func.body = Unswitcher().mutate(func.body);
  return func;
}

}  // namespace

MINIC_REGISTER_LOOP_PASS("unswitch", unswitch,
                         "exercise m3-unswitch: move loop-invariant ifs out of their loops");

}  // namespace minic::loop
