// simplify: the walk that applies the rule table to every expression of a function, and
// the statement rules. Course module 4 (the pass is documented in
// include/minic/passes/loop/simplify.h; the rules are in simplify_rules.cpp).
//
// Invariant: same results on every input; the function still verifies.
//
// Algorithm, one IRMutator walk:
//   1. Keep the range of every variable in scope: a loop variable over [min, min + extent)
//      of its loop (when the bounds are known), a block's iteration variable over
//      [0, extent) narrowed by its binding's range (the body runs only where the binding
//      lies inside the extent).
//   2. Simplify expressions bottom-up: after a node's operands, rewrite the node itself
//      with simplify_rules::rewrite_root until no rule applies; each replacement's
//      operands are simplified again first (they may hold `c1 * c2` to fold).
//   3. Statements: an `if` of a constant condition becomes its branch; a loop of extent 1
//      becomes its body with the variable replaced by the start (not a thread-bound loop,
//      which names a GPU axis); a loop of extent <= 0 or of an empty body, and a block
//      whose predicate never holds, become `evaluate 0`; a predicate that always holds is
//      dropped; sequences drop their `evaluate 0`s.
//
//   for i in 0..1 { B[i * 4 + 0] = A[floordiv(i, 8)] * 1.0 }   →   B[0] = A[0]
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#include "minic/passes/loop/simplify.h"
#include "minic/passes/pass_registry.h"

#include "pass_util.h"
#include "simplify_rules.h"

#include "minic/ir/loop/visitor.h"

namespace minic::loop {
namespace {

// A second guarantee that rewriting ends: the rules never cycle, but a node stops being
// rewritten after this many rewrites whatever happens.
constexpr int kMaxRewritesPerNode = 64;

bool is_constant(const Expr& expr, bool value) {
  const IntImm* imm = expr.as<IntImm>();
  return imm && expr.type() == DataType::boolean() && (imm->value != 0) == value;
}

class Simplifier : public IRMutator {
 public:
  explicit Simplifier(VarBounds bounds) : bounds_(std::move(bounds)) {}

  // Every expression node: its operands first (the default), then the node.
#define MINIC_SIMPLIFY_NODE(Node)                                    \
  Expr mutate_##Node(const Node* node, const Expr& self) override { \
    return rewrite(IRMutator::mutate_##Node(node, self));            \
  }
  MINIC_EXPR_NODES(MINIC_SIMPLIFY_NODE)
#undef MINIC_SIMPLIFY_NODE

  Stmt mutate_For(const For* node, const Stmt& self) override {
    Expr min = mutate(node->min);
    Expr extent = mutate(node->extent);
    std::optional<int64_t> count = as_const_int(extent);
    if (count && *count <= 0) return pass_util::no_op();
    const Var* var = node->var.as<Var>();
    if (count == 1 && node->for_kind != ForKind::thread_binding) {
      return mutate(substitute(node->body, VarMap{{var, min}}));
    }
    IntBound start = bound_of(min, bounds_);
    IntBound length = bound_of(extent, bounds_);
    if (start.is_bounded() && length.is_bounded() && length.max >= 1) {
      bounds_[var] = {start.min, start.max + length.max - 1};
    }
    Stmt body = mutate(node->body);
    bounds_.erase(var);
    if (pass_util::is_no_op(body)) return pass_util::no_op();
    if (min.same_as(node->min) && extent.same_as(node->extent) && body.same_as(node->body)) {
      return self;
    }
    return For::make(node->var, min, extent, node->for_kind, body, node->thread_axis,
                     node->annotations);
  }

  Stmt mutate_Block(const Block* node, const Stmt& self) override {
    Block::Parts parts = node->parts();
    for (IterVar& iter : parts.iter_vars) iter.binding = mutate(iter.binding);
    parts.predicate = mutate(parts.predicate);
    if (is_constant(parts.predicate, false)) return pass_util::no_op();
    if (is_constant(parts.predicate, true)) parts.predicate = Expr();
    // The ranges of the iteration variables, from the loops outside, before they are
    // defined (a binding never uses them).
    VarBounds inside;
    for (const IterVar& iter : parts.iter_vars) {
      if (iter.extent < 1) continue;
      IntBound range{0, iter.extent - 1};
      IntBound bound = bound_of(iter.binding, bounds_);
      IntBound narrowed{std::max(range.min, bound.min), std::min(range.max, bound.max)};
      inside[iter.var.as<Var>()] = narrowed.min <= narrowed.max ? narrowed : range;
    }
    for (const auto& [var, range] : inside) bounds_[var] = range;
    bool changed = false;
    parts.reads = mutate_regions(node->reads, changed);
    parts.writes = mutate_regions(node->writes, changed);
    parts.init = mutate(node->init);
    parts.body = mutate(node->body);
    for (const auto& [var, range] : inside) bounds_.erase(var);
    return Block::make(std::move(parts));
  }

  Stmt mutate_IfThenElse(const IfThenElse* node, const Stmt& self) override {
    Expr condition = mutate(node->condition);
    if (is_constant(condition, true)) return mutate(node->then_case);
    if (is_constant(condition, false)) {
      return node->else_case ? mutate(node->else_case) : pass_util::no_op();
    }
    Stmt then_case = mutate(node->then_case);
    Stmt else_case = mutate(node->else_case);
    if (pass_util::is_no_op(else_case)) else_case = Stmt();
    if (pass_util::is_no_op(then_case)) {
      if (!else_case) return pass_util::no_op();
      return IfThenElse::make(mutate(Not::make(condition)), else_case);
    }
    if (condition.same_as(node->condition) && then_case.same_as(node->then_case) &&
        else_case.same_as(node->else_case)) {
      return self;
    }
    return IfThenElse::make(condition, then_case, else_case);
  }

  Stmt mutate_Seq(const Seq* node, const Stmt& self) override {
    std::vector<Stmt> stmts;
    bool changed = false;
    for (const Stmt& stmt : node->stmts) {
      stmts.push_back(mutate(stmt));
      changed = changed || !stmts.back().same_as(stmt) || pass_util::is_no_op(stmts.back());
    }
    return changed ? pass_util::sequence(stmts) : self;
  }

 private:
  Expr rewrite(Expr expr) {
    for (int step = 0; step < kMaxRewritesPerNode; ++step) {
      Expr next = simplify_rules::rewrite_root(expr, bounds_);
      if (!next) return expr;
      expr = simplify_operands(next);
    }
    return expr;
  }

  Expr simplify_operands(const Expr& expr) {
    std::vector<Expr> operands = pass_util::operands_of(expr);
    bool changed = false;
    for (Expr& operand : operands) {
      Expr simplified = mutate(operand);
      changed = changed || !simplified.same_as(operand);
      operand = simplified;
    }
    return changed ? pass_util::make_operator(expr.kind(), operands) : expr;
  }

  VarBounds bounds_;
};

}  // namespace

Expr simplify_expr(const Expr& expr, const VarBounds& bounds) {
  return Simplifier(bounds).mutate(expr);
}

Stmt simplify_stmt(const Stmt& stmt, const VarBounds& bounds) {
  return Simplifier(bounds).mutate(stmt);
}

PrimFunc simplify(PrimFunc func) {
  func.body = simplify_stmt(func.body, {});
  return func;
}

MINIC_REGISTER_LOOP_PASS("simplify", simplify,
                         "fold constants and simplify index arithmetic with the loop bounds");

}  // namespace minic::loop
