// vectorize-loops: vectorized loops of constant extent → Ramp/Broadcast vector code.
//
// Course module 4. What the pass does and when it leaves a loop alone is in
// include/minic/passes/loop/vectorize_loops.h.
//
// Invariant: the function computes what it computed before, on every input (the lanes of
// a rewritten loop never depend on each other, so running them at once is running them in
// order); every vectorized loop left is one the body did not allow.
//
// For each vectorized loop `for v in min..+N`, innermost first:
//   1. inline the blocks of its body (BlockInliner): iteration variables become their
//      bindings, a predicate and an init become ifs;
//   2. widen the body (Widener): v becomes ramp(min, 1, N); an expression that does not
//      use v stays as it is; one that does becomes N lanes, with affine index arithmetic
//      kept as a Ramp (ramp(b, s) + x = ramp(b + x, s), ramp(b, s) * x = ramp(b * x, s * x));
//      anything the rules in the header forbid makes the widening fail;
//   3. check that the lanes are independent (LaneCheck): a buffer stored to is read only at
//      the indices it is stored at;
//   4. if all went well, the widened body replaces the loop; else the loop stays.
//
//   vectorized for j in 0..4 { B[i * 4 + j] = A[i * 4 + j] + 1.0 }
//   →  B[ramp(i * 4, 1, 4)] = A[ramp(i * 4, 1, 4)] + broadcast(1.0, 4)
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#include "minic/passes/loop/vectorize_loops.h"
#include "minic/passes/pass_registry.h"

#include "minic/ir/loop/access.h"
#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/printer.h"
#include "minic/ir/loop/visitor.h"
#include "pass_util.h"

#include <map>

namespace minic::loop {

namespace {

// Wider than this a loop stays a loop: LLVM's vectoriser picks the width then.
constexpr int64_t kMaxLanes = 64;

// --- 1. inlining blocks ---------------------------------------------------------------------

class BlockInliner : public IRMutator {
 public:
  bool failed = false;

  Stmt mutate_Block(const Block* node, const Stmt& self) override {
    if (!node->alloc_buffers.empty()) {
      failed = true;
      return self;
    }
    VarMap bindings;
    Expr first_step;  // every reduction variable is 0
    for (const IterVar& iter : node->iter_vars) {
      bindings[iter.var.as<Var>()] = iter.binding;
      if (iter.kind != IterKind::reduce) continue;
      Expr is_zero = EQ::make(iter.binding, make_const(iter.binding.type(), 0));
      first_step = first_step ? And::make(first_step, is_zero) : is_zero;
    }
    Stmt body = substitute(mutate(node->body), bindings);
    if (node->init && first_step) {
      Stmt init = substitute(mutate(node->init), bindings);
      body = Seq::make({IfThenElse::make(first_step, init), body});
    }
    if (node->predicate) body = IfThenElse::make(node->predicate, body);
    return body;
  }
};

// --- 2. widening ----------------------------------------------------------------------------

// Index arithmetic with the constants folded, so ramps read as written by hand.
Expr fold_add(const Expr& a, const Expr& b) {
  auto x = as_const_int(a);
  auto y = as_const_int(b);
  if (x && y) return IntImm::make(*x + *y);
  if (x && *x == 0) return b;
  if (y && *y == 0) return a;
  return Add::make(a, b);
}

Expr fold_sub(const Expr& a, const Expr& b) {
  auto x = as_const_int(a);
  auto y = as_const_int(b);
  if (x && y) return IntImm::make(*x - *y);
  if (y && *y == 0) return a;
  return Sub::make(a, b);
}

Expr fold_mul(const Expr& a, const Expr& b) {
  auto x = as_const_int(a);
  auto y = as_const_int(b);
  if (x && y) return IntImm::make(*x * *y);
  if ((x && *x == 0) || (y && *y == 0)) return IntImm::make(0);
  if (x && *x == 1) return b;
  if (y && *y == 1) return a;
  return Mul::make(a, b);
}

class Widener {
 public:
  Widener(const Var* var, const Expr& min, int lanes)
      : var_(var), ramp_(Ramp::make(min, IntImm::make(1), lanes)), lanes_(lanes) {}

  bool failed = false;

  Expr widen(const Expr& expr) {
    if (failed || !uses_var(expr, var_)) return expr;
    if (expr.as<Var>()) return ramp_;
    // Each case widens its operands first and builds the vector node only if none gave
    // up: a node's constructor refuses a missing operand.
    if (const Not* node = expr.as<Not>()) {
      Expr a = widen(node->a);
      return failed ? Expr() : Not::make(a);
    }
    if (const Select* node = expr.as<Select>()) return widen_select(node);
    if (const Cast* node = expr.as<Cast>()) {
      Expr value = vector(widen(node->value));
      return failed ? Expr() : Cast::make(node->type.with_lanes(lanes_), value);
    }
    if (const Load* node = expr.as<Load>()) {
      std::vector<Expr> indices = widen_indices(node->indices);
      return failed ? Expr() : Load::make(node->buffer, indices);
    }
    if (const Call* node = expr.as<Call>()) {
      std::vector<Expr> args;
      for (const Expr& arg : node->args) args.push_back(vector(widen(arg)));
      return failed ? Expr() : Call::make(node->type.with_lanes(lanes_), node->name, args);
    }
    if (is_binary(expr.kind())) return widen_binary(expr);
    return give_up();  // a Ramp or Broadcast of the loop variable: already vector code
  }

  Stmt widen(const Stmt& stmt) {
    if (failed) return stmt;
    if (const Store* node = stmt.as<Store>()) {
      std::vector<Expr> indices = widen_indices(node->indices);
      bool distinct_lanes = false;
      for (const Expr& index : indices) {
        const Ramp* ramp = index.as<Ramp>();
        auto stride = ramp ? as_const_int(ramp->stride) : std::nullopt;
        if (stride && *stride != 0) distinct_lanes = true;
      }
      // Lanes writing one element, or a store the loop repeats unchanged: not lane-parallel.
      if (!distinct_lanes) failed = true;
      Expr value = vector(widen(node->value));
      return failed ? stmt : Store::make(node->buffer, indices, value);
    }
    if (const Seq* node = stmt.as<Seq>()) {
      std::vector<Stmt> stmts;
      for (const Stmt& inner : node->stmts) stmts.push_back(widen(inner));
      return Seq::make(stmts);
    }
    if (const IfThenElse* node = stmt.as<IfThenElse>()) {
      if (uses_var(node->condition, var_)) failed = true;
      Stmt then_case = widen(node->then_case);
      Stmt else_case = node->else_case ? widen(node->else_case) : Stmt();
      return failed ? stmt : IfThenElse::make(node->condition, then_case, else_case);
    }
    failed = true;  // loops, allocations, evaluates
    return stmt;
  }

 private:
  Expr give_up() {
    failed = true;
    return Expr();
  }
  Expr vector(const Expr& expr) {
    if (failed || expr.type().lanes > 1) return expr;
    return Broadcast::make(expr, lanes_);
  }

  // Indices that depend on the loop must come out affine (a Ramp).
  std::vector<Expr> widen_indices(const std::vector<Expr>& indices) {
    std::vector<Expr> result;
    for (const Expr& index : indices) {
      Expr widened = widen(index);
      if (failed) return {};
      if (widened.type().lanes > 1 && !widened.as<Ramp>()) give_up();
      result.push_back(widened);
    }
    return result;
  }

  Expr widen_select(const Select* node) {
    Expr condition = widen(node->condition);
    if (failed) return Expr();
    // A vector select evaluates both operands in every lane: a load it guarded might then
    // read outside its buffer.
    if (condition.type().lanes > 1 &&
        (reads_memory(node->true_value) || reads_memory(node->false_value))) {
      return give_up();
    }
    Expr true_value = vector(widen(node->true_value));
    Expr false_value = vector(widen(node->false_value));
    return failed ? Expr() : Select::make(condition, true_value, false_value);
  }

  Expr widen_binary(const Expr& expr) {
    std::vector<Expr> operands = pass_util::operands_of(expr);
    Expr a = widen(operands.at(0));
    Expr b = widen(operands.at(1));
    if (failed) return Expr();
    ExprKind kind = expr.kind();
    bool index_arithmetic = a.type().dtype == DType::i64 &&
                            (kind == ExprKind::Add || kind == ExprKind::Sub ||
                             kind == ExprKind::Mul);
    // Affine forms: a scalar x is ramp(x, 0).
    const Ramp* ramp_a = a.as<Ramp>();
    const Ramp* ramp_b = b.as<Ramp>();
    bool affine_a = ramp_a || a.type().lanes == 1;
    bool affine_b = ramp_b || b.type().lanes == 1;
    if (index_arithmetic && affine_a && affine_b) {
      Expr base_a = ramp_a ? ramp_a->base : a;
      Expr base_b = ramp_b ? ramp_b->base : b;
      Expr stride_a = ramp_a ? ramp_a->stride : IntImm::make(0);
      Expr stride_b = ramp_b ? ramp_b->stride : IntImm::make(0);
      if (kind == ExprKind::Add) {
        return Ramp::make(fold_add(base_a, base_b), fold_add(stride_a, stride_b), lanes_);
      }
      if (kind == ExprKind::Sub) {
        return Ramp::make(fold_sub(base_a, base_b), fold_sub(stride_a, stride_b), lanes_);
      }
      if (!ramp_a || !ramp_b) {  // Mul by a scalar
        Expr factor = ramp_a ? b : a;
        const Ramp* ramp = ramp_a ? ramp_a : ramp_b;
        return Ramp::make(fold_mul(ramp->base, factor), fold_mul(ramp->stride, factor), lanes_);
      }
    }
    return pass_util::make_operator(kind, {vector(a), vector(b)});
  }

  const Var* var_;
  Expr ramp_;
  int lanes_;
};

// --- 3. independent lanes -------------------------------------------------------------------

// True if every buffer the statement stores to is stored and loaded at one list of indices
// only: then lane k touches only its own elements of it, whatever the other lanes do.
bool lanes_independent(const Stmt& stmt) {
  auto text = [](const std::vector<Expr>& indices) {
    std::vector<std::string> result;
    for (const Expr& index : indices) result.push_back(print_expr(index));
    return result;
  };
  std::vector<Access> accesses = collect_accesses(stmt);
  std::map<const BufferNode*, std::vector<std::string>> stored;
  for (const Access& access : accesses) {
    if (access.kind != AccessKind::store) continue;
    auto [it, inserted] = stored.emplace(access.buffer.get(), text(access.indices));
    if (!inserted && it->second != text(access.indices)) return false;
  }
  for (const Access& access : accesses) {
    auto it = stored.find(access.buffer.get());
    if (it != stored.end() && it->second != text(access.indices)) return false;
  }
  return true;
}

// --- 4. the pass ----------------------------------------------------------------------------

class VectorizeLoops : public IRMutator {
 public:
  Stmt mutate_For(const For* node, const Stmt& self) override {
    Stmt mutated = IRMutator::mutate_For(node, self);  // inner loops first
    const For* loop = mutated.as<For>();
    if (loop->for_kind != ForKind::vectorized) return mutated;
    std::optional<int64_t> extent = as_const_int(loop->extent);
    if (!extent || *extent < 2 || *extent > kMaxLanes) return mutated;
    BlockInliner inliner;
    Stmt body = inliner.mutate(loop->body);
    if (inliner.failed) return mutated;
    Widener widener(loop->var.as<Var>(), loop->min, static_cast<int>(*extent));
    Stmt widened = widener.widen(body);
    if (widener.failed || !lanes_independent(widened)) return mutated;
    return widened;
  }
};

}  // namespace

PrimFunc vectorize_loops(PrimFunc func) {
  func.body = VectorizeLoops().mutate(func.body);
  return func;
}

MINIC_REGISTER_LOOP_PASS("vectorize-loops", vectorize_loops,
                         "turn vectorized loops into vector expressions (ramp, broadcast)");

}  // namespace minic::loop
