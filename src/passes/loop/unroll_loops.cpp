// unroll-loops: unrolled loops → copies of their body. Course module 4 (the pass is
// documented in include/minic/passes/loop/unroll_loops.h).
//
// Invariant: the same statements run in the same order; the function verifies.
//
// Algorithm, one IRMutator walk, bottom-up:
//   1. Unroll the loops inside the body first.
//   2. A loop of kind unrolled with constant min m and extent n, 0 <= n <= 64: the Seq of
//      the body with var := m, m + 1, ..., m + n - 1 (each copy a simple substitution; the
//      simplify pass folds `0 * 8 + j` afterwards). n = 0 gives `evaluate 0`.
//   3. Any other loop is rebuilt around its new body.
//
// The copies share the Var nodes of loops inside the body: each copy defines them in its
// own scope, one after another, which the verifier allows.
//
//   unrolled for i in 0..2 { unrolled for j in 0..2 { C[i, j] = 0.0 } }
//   →  C[0, 0] = 0.0   C[0, 1] = 0.0   C[1, 0] = 0.0   C[1, 1] = 0.0
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#include "minic/passes/loop/unroll_loops.h"
#include "minic/passes/pass_registry.h"

#include "pass_util.h"

#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/visitor.h"

namespace minic::loop {
namespace {

class Unroller : public IRMutator {
 public:
  Stmt mutate_For(const For* node, const Stmt& self) override {
    Stmt loop = IRMutator::mutate_For(node, self);
    const For* unrolled = loop.as<For>();
    std::optional<int64_t> min = as_const_int(unrolled->min);
    std::optional<int64_t> extent = as_const_int(unrolled->extent);
    if (unrolled->for_kind != ForKind::unrolled || !min || !extent) return loop;
    if (*extent > kMaxUnrollCopies) return loop;
    std::vector<Stmt> copies;
    for (int64_t k = 0; k < *extent; ++k) {
      VarMap value = {{unrolled->var.as<Var>(), IntImm::make(*min + k)}};
      copies.push_back(substitute(unrolled->body, value));
    }
    return pass_util::sequence(copies);
  }
};

}  // namespace

PrimFunc unroll_loops(PrimFunc func) {
  func.body = Unroller().mutate(func.body);
  return func;
}

MINIC_REGISTER_LOOP_PASS("unroll-loops", unroll_loops,
                         "replace unrolled loops of constant extent by copies of their body");

}  // namespace minic::loop
