// lower-blocks: blocks → plain statements. Course module 4 (the pass is documented in
// include/minic/passes/loop/lower_blocks.h).
//
// Invariant: same results; no Block left; the function verifies.
//
// Algorithm, one IRMutator walk, for each block from the outside in:
//   1. Map each iteration variable to its binding, and substitute in the init and body
//      (inner blocks' bindings included, so that they then refer to loops only).
//   2. Lower the blocks inside the substituted init and body (the walk goes on there).
//   3. init → `if (b1 == 0 && b2 == 0 ...) init`, over the bindings of the reduction
//      variables, placed before the body.
//   4. Wrap in one Allocate per alloc_buffer, then in `if (predicate)`.
//
//   block C(vi = spatial(8) i.0 * 4 + i.1, vk = reduce(8) k) where (i.0 < 2) {
//     init { C[vi] = 0.0 }  C[vi] = C[vi] + A[vi, vk] }
//   →
//   if (i.0 < 2) { if (k == 0) { C[i.0 * 4 + i.1] = 0.0 }
//                  C[i.0 * 4 + i.1] = C[i.0 * 4 + i.1] + A[i.0 * 4 + i.1, k] }
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#include "minic/passes/loop/lower_blocks.h"
#include "minic/passes/pass_registry.h"

#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/visitor.h"

namespace minic::loop {
namespace {

class BlockLowerer : public IRMutator {
 public:
  Stmt mutate_Block(const Block* node, const Stmt& self) override {
    VarMap bindings;
    for (const IterVar& iter : node->iter_vars) bindings[iter.var.as<Var>()] = iter.binding;
    Stmt body = mutate(substitute(node->body, bindings));
    if (node->init) {
      Stmt init = mutate(substitute(node->init, bindings));
      body = Seq::make({IfThenElse::make(first_step(node), init), body});
    }
    for (auto buffer = node->alloc_buffers.rbegin(); buffer != node->alloc_buffers.rend();
         ++buffer) {
      body = Allocate::make(*buffer, body);
    }
    if (node->predicate) body = IfThenElse::make(node->predicate, body);
    return body;
  }

 private:
  // True at the first step of the block's reduction: every reduction binding is 0.
  static Expr first_step(const Block* block) {
    Expr condition;
    for (const IterVar& iter : block->iter_vars) {
      if (iter.kind != IterKind::reduce) continue;
      Expr is_zero = EQ::make(iter.binding, IntImm::make(0));
      condition = condition ? And::make(condition, is_zero) : is_zero;
    }
    // The verifier allows an init only with a reduction variable; without one, the block
    // is its own first step.
    return condition ? condition : IntImm::make(1, DataType::boolean());
  }
};

}  // namespace

PrimFunc lower_blocks(PrimFunc func) {
  func.body = BlockLowerer().mutate(func.body);
  return func;
}

MINIC_REGISTER_LOOP_PASS("lower-blocks", lower_blocks,
                         "replace blocks by plain loops, ifs and allocations");

}  // namespace minic::loop
