// split: one loop becomes a nest of loops that together run the same iterations.
//
// Course module 4 (loop transformations): tiling starts here. The loop's variable becomes
// a mixed-radix number of the new loops' variables, and every use of it is rewritten.
//
// Before, split(i, [-1, 32]) on a loop of 100 iterations:
//   for i in 0..100 {
//     block B(v = spatial(100) i) { B[v] = A[v] * 2.0 }
//   }
// After (4 * 32 = 128 > 100, so the block gets a guard):
//   for i.0 in 0..4 {
//     for i.1 in 0..32 {
//       block B(v = spatial(100) i.0 * 32 + i.1) where (i.0 * 32 + i.1 < 100) { ... }
//     }
//   }
//
// Preconditions (each refused with an Error before anything changes):
//   - the factors are not empty, each is >= 1 except at most one -1 (to be inferred);
//   - the loop starts at 0, has a constant extent of at least 1, and is not bound to a GPU
//     axis (split before bind);
//   - the product of the factors is at least the extent;
//   - if the product is larger (a guard is needed), nothing below the loop stores or
//     synchronises outside a block: the guard is a block predicate.
//
// Algorithm:
//   1. Infer the -1 factor: the ceiling of extent / (product of the others).
//   2. Make one new variable per factor, named after the loop (i.0, i.1, ...), and the
//      expression i.0 * (f1 * f2 ...) + i.1 * (f2 ...) + ... + i.last that replaces i.
//   3. Substitute it for i in the loop's body (block bindings, inner loop bounds, ...).
//   4. If the product is not the extent, conjoin `expression < extent` to the predicate
//      of every block below (the outermost ones: a nested block runs inside its parent).
//   5. Wrap the body in the new serial loops, first factor outermost, and put the nest
//      where the loop was.
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#include "minic/schedule/primitives.h"

#include "loop_tree.h"
#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/printer.h"
#include "minic/ir/loop/visitor.h"
#include "minic/support/error.h"

#include <limits>

namespace minic::schedule {
namespace {

using loop::Block;
using loop::IntImm;
using loop::Stmt;

// Finds a store or barrier that is not inside any block.
class EffectOutsideBlocks : public loop::IRVisitor {
 public:
  std::string found;  // "a store to B", "a barrier"; empty if none

  void visit_Block(const Block*) override {}
  void visit_Store(const loop::Store* node) override {
    if (found.empty()) found = "a store to " + node->buffer->name;
  }
  void visit_Evaluate(const loop::Evaluate*) override {
    if (found.empty()) found = "a barrier";
  }
};

// Conjoins `guard` to the predicate of every outermost block.
class AddGuard : public loop::IRMutator {
 public:
  explicit AddGuard(Expr guard) : guard_(std::move(guard)) {}

  Stmt mutate_Block(const Block* node, const Stmt&) override {
    Block::Parts parts = node->parts();
    parts.predicate = parts.predicate ? loop::And::make(parts.predicate, guard_) : guard_;
    return Block::make(std::move(parts));
  }

 private:
  Expr guard_;
};

// The factors with the -1 replaced by its inferred value; checks every precondition on them.
std::vector<int64_t> complete_factors(const std::string& name, int64_t extent,
                                      std::vector<int64_t> factors) {
  if (factors.empty()) fail("split: loop {} needs at least one factor", name);
  int64_t known_product = 1;
  int inferred = -1;
  for (size_t k = 0; k < factors.size(); ++k) {
    if (factors[k] == -1 && inferred == -1) {
      inferred = static_cast<int>(k);
      continue;
    }
    if (factors[k] == -1) fail("split: loop {}: at most one factor may be -1", name);
    if (factors[k] < 1) {
      fail("split: loop {}: factor {} is not a positive number", name, factors[k]);
    }
    // Products beyond the extent only add guarded iterations; cap them to avoid overflow.
    known_product = std::min<int64_t>(known_product * std::min(factors[k], extent + 1), extent + 1);
  }
  if (inferred >= 0) factors[inferred] = (extent + known_product - 1) / known_product;
  if (inferred < 0 && known_product < extent) {
    fail("split: the factors of loop {} cover {} iterations, fewer than its extent {}", name,
         known_product, extent);
  }
  return factors;
}

}  // namespace

std::vector<Expr> split(PrimFunc& func, const Expr& loop, const std::vector<int64_t>& factors) {
  std::vector<Stmt> path = loop_path(func, loop, "split");
  const loop::For& node = *path.back().as<loop::For>();
  std::string name = loop_name(loop);
  std::optional<int64_t> min = loop::as_const_int(node.min);
  std::optional<int64_t> extent = loop::as_const_int(node.extent);
  if (!min || *min != 0 || !extent) {
    fail("split: loop {} must run over a constant range 0..N; it runs over {}..+{}", name,
         loop::print_expr(node.min), loop::print_expr(node.extent));
  }
  if (*extent < 1) fail("split: loop {} has no iterations (extent {})", name, *extent);
  if (node.for_kind == loop::ForKind::thread_binding) {
    fail("split: loop {} is bound to {}; split it before binding", name, node.thread_axis);
  }
  std::vector<int64_t> complete = complete_factors(name, *extent, factors);
  __int128 product = 1;
  for (int64_t factor : complete) {
    product *= factor;
    if (product > std::numeric_limits<int64_t>::max()) {
      fail("split: the product of the factors of loop {} overflows", name);
    }
  }
  bool guarded = product != *extent;
  if (guarded) {
    EffectOutsideBlocks finder;
    finder.visit(node.body);
    if (!finder.found.empty()) {
      fail("split: loop {} holds {} outside any block, which a guard (a block predicate) "
           "cannot cover; use factors whose product is {}", name, finder.found, *extent);
    }
  }

  // The new variables and the expression of the old one in them, outermost term first.
  std::vector<int64_t> strides(complete.size(), 1);
  for (size_t k = complete.size() - 1; k-- > 0;) strides[k] = strides[k + 1] * complete[k + 1];
  std::vector<Expr> vars;
  Expr value;
  for (size_t k = 0; k < complete.size(); ++k) {
    Expr var = loop::Var::make(name + "." + std::to_string(k));
    vars.push_back(var);
    Expr term = strides[k] == 1 ? var : loop::Mul::make(var, IntImm::make(strides[k]));
    value = value ? loop::Add::make(value, term) : term;
  }
  Stmt body = loop::substitute(node.body, {{loop.as<loop::Var>(), value}});
  if (guarded) body = AddGuard(loop::LT::make(value, IntImm::make(*extent))).mutate(body);
  for (size_t k = vars.size(); k-- > 0;) {
    body = loop::For::make(vars[k], IntImm::make(0), IntImm::make(complete[k]),
                           loop::ForKind::serial, body);
  }
  commit_body(func, replace_stmt(func.body, path.back(), body), "split");
  return vars;
}

}  // namespace minic::schedule
