// partition-loops: loops with guarded tails → a guard-free main part and a guarded rest.
// Course module 4 (the pass is documented in include/minic/passes/loop/partition_loops.h).
//
// Invariant: the same iterations run in the same order; the function verifies.
//
// Algorithm, one IRMutator walk from the outside in, for a loop `for v in lo..hi` with
// constant bounds, not thread-bound:
//   1. Collect the guards of its body that use v (if conditions, block predicates, select
//      conditions; a conjunction conjunct by conjunct; not a condition that reads a
//      buffer, which tests data, not indices), each with the ranges of the
//      constant loops between the loop and the guard. A loop that some block binds an
//      iteration variable to directly (`v = spatial(10) i`) is not cut: the verifier
//      requires such a loop to cover the block's whole domain.
//   2. Binary search the largest p in [lo, hi] such that, with v in [lo, p - 1], simplify
//      proves every guard true. Proofs only get easier on a smaller range, so "proven on
//      [lo, p - 1]" is monotone in p and the search is exact. If p is lo, search instead
//      the smallest q such that the guards are proven on [q, hi - 1] (a guard at the start,
//      as padding makes); failing that, the first of the next kMaxHead points where they
//      are proven (borders on both sides: the part after it then has a proven prefix).
//   3. A cut is kept only where the loop has at most kMaxPeeled iterations, or the rest
//      does nothing once simplified, or -- outside the rest of an outer cut -- the
//      guard-free part is at least as long as the rest (a tail or a head, not a long
//      reduction's `if (k == 0)`, whose peeling would copy the whole body for one step).
//      A short loop guarded in every iteration (the tiles of a narrow row, each at a
//      border) has its first iteration peeled.
//   4. If a cut c in (lo, hi) was found: the loop becomes `for v in lo..c` then
//      `for v in c..hi`, the pair simplified under the ranges around it (which removes the
//      proven guards, and the loops of one iteration), and the walk goes on inside the
//      result, which partitions the inner loops of the rest. Each cut shortens a loop, so
//      the walk ends.
//   5. Otherwise the walk goes on into the body, with v in [lo, hi - 1].
//
//   for i in 0..10 { if (i >= 1) { A[i] = A[i - 1] } }
//   →  for i in 1..10 { A[i] = A[i - 1] }     (the rest, i in 0..1, guards nothing true)
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#include "minic/passes/loop/partition_loops.h"
#include "minic/passes/pass_registry.h"

#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/visitor.h"
#include "minic/passes/loop/simplify.h"
#include "pass_util.h"

namespace minic::loop {
namespace {

// A condition on the loop variable, and the ranges of the loops between it and the loop.
struct Guard {
  Expr condition;
  VarBounds inner;
};

class GuardCollector : public IRVisitor {
 public:
  explicit GuardCollector(const Var* var) : var_(var) {}
  std::vector<Guard> guards;
  // True if some block binds an iteration variable to the loop variable itself.
  bool bound_directly = false;

  void visit_For(const For* node) override {
    std::optional<int64_t> min = as_const_int(node->min);
    std::optional<int64_t> extent = as_const_int(node->extent);
    const Var* var = node->var.as<Var>();
    if (min && extent && *extent >= 1) inner_[var] = {*min, *min + *extent - 1};
    visit(node->body);
    inner_.erase(var);
  }

  void visit_IfThenElse(const IfThenElse* node) override {
    add(node->condition);
    IRVisitor::visit_IfThenElse(node);
  }

  // A select of loop indices is a guard too: a convolution reading its input through
  // `select(0 <= oh + kh - 1 < H && ..., X[..], 0)` needs it only at the borders.
  void visit_Select(const Select* node) override {
    add(node->condition);
    IRVisitor::visit_Select(node);
  }

  void visit_Block(const Block* node) override {
    for (const IterVar& iter : node->iter_vars) {
      bound_directly = bound_directly || iter.binding.as<Var>() == var_;
    }
    if (node->predicate) add(node->predicate);
    IRVisitor::visit_Block(node);
  }

 private:
  // Each conjunct on its own: the parts of a border check that use other loops' variables
  // are those loops' business.
  void add(const Expr& condition) {
    if (const And* both = condition.as<And>()) {
      add(both->a);
      add(both->b);
    } else if (uses_var(condition, var_) && !reads_memory(condition)) {
      // (a condition that reads a buffer tests data, which no range of the loop proves)
      guards.push_back({condition, inner_});
    }
  }

  const Var* var_;
  VarBounds inner_;
};

bool is_true(const Expr& expr) {
  const IntImm* imm = expr.as<IntImm>();
  return imm && expr.type() == DataType::boolean() && imm->value != 0;
}

// How far into a loop a border in the middle of its range is looked for.
constexpr int64_t kMaxHead = 8;
// Loops of at most this many iterations are cut wherever their guards change (peeled one
// by one where every iteration is guarded).
constexpr int64_t kMaxPeeled = 4;

// A cut of [lo, hi) at `at`: the guards are proven before it (prefix) or from it on.
struct Cut {
  int64_t at;
  bool prefix;
};

// True if `stmt` does nothing: no statement, or loops and sequences of nothing.
bool does_nothing(const Stmt& stmt) {
  if (pass_util::is_no_op(stmt)) return true;
  if (const For* loop = stmt.as<For>()) return does_nothing(loop->body);
  if (const Seq* seq = stmt.as<Seq>()) {
    for (const Stmt& part : seq->stmts) {
      if (!does_nothing(part)) return false;
    }
    return true;
  }
  return false;
}

class Partitioner : public IRMutator {
 public:
  Stmt mutate_For(const For* node, const Stmt& self) override {
    std::optional<int64_t> lo = as_const_int(node->min);
    std::optional<int64_t> extent = as_const_int(node->extent);
    if (!lo || !extent || *extent < 1 || node->for_kind == ForKind::thread_binding) {
      return IRMutator::mutate_For(node, self);
    }
    const Var* var = node->var.as<Var>();
    int64_t hi = *lo + *extent;
    GuardCollector collector(var);
    collector.visit(node->body);
    // A loop that is a block's binding must cover the block's whole domain (a rule of the
    // verifier), so it is not cut; after lower-blocks it may be.
    std::optional<Cut> cut = collector.bound_directly ? std::nullopt
                                                      : find_cut(collector.guards, var, *lo, hi);
    auto part = [&](int64_t begin, int64_t end) {
      return simplify_stmt(For::make(node->var, IntImm::make(begin), IntImm::make(end - begin),
                                     node->for_kind, node->body, node->thread_axis,
                                     node->annotations),
                           bounds_);
    };
    // The rest: what follows a proven prefix, or precedes a proven suffix (or the first
    // iteration, peeled).
    Stmt rest;
    if (cut) {
      // The pass is for tails: a cut is kept where the loop is short, or the rest does
      // nothing, or (outside a rest) the guard-free part is at least as long as the rest.
      // A reduction's `if (k == 0) init` is proven on the first step alone, and peeling it
      // from a long loop would copy the whole body for one step.
      rest = cut->prefix ? part(cut->at, hi) : part(*lo, cut->at);
      const int64_t free_length = cut->prefix ? cut->at - *lo : hi - cut->at;
      const bool worth_a_copy = hi - *lo <= kMaxPeeled ||
                                (!in_rest_ && free_length >= hi - *lo - free_length);
      if (!worth_a_copy && !does_nothing(rest)) cut.reset();
    }
    if (!cut) {
      bounds_[var] = {*lo, hi - 1};
      Stmt result = IRMutator::mutate_For(node, self);
      bounds_.erase(var);
      return result;
    }
    // The rest keeps the guards of its long inner loops, cut only where a part does
    // nothing: a border row is not copied again for each of its own borders.
    Stmt main_part = cut->prefix ? part(*lo, cut->at) : part(cut->at, hi);
    const bool was_in_rest = in_rest_;
    in_rest_ = true;
    rest = mutate(rest);
    in_rest_ = was_in_rest;
    main_part = mutate(main_part);
    return cut->prefix ? pass_util::sequence({main_part, rest})
                       : pass_util::sequence({rest, main_part});
  }

 private:
  // True if simplify proves every guard with v in [first, last].
  bool proven(const std::vector<Guard>& guards, const Var* var, int64_t first, int64_t last) {
    for (const Guard& guard : guards) {
      VarBounds bounds = bounds_;
      for (const auto& [inner, range] : guard.inner) bounds[inner] = range;
      bounds[var] = {first, last};
      if (!is_true(simplify_expr(guard.condition, bounds))) return false;
    }
    return true;
  }

  // Where to cut [lo, hi): the end of the longest proven prefix, else the start of the
  // longest proven suffix; nullopt if neither is a proper part of the range.
  std::optional<Cut> find_cut(const std::vector<Guard>& guards, const Var* var, int64_t lo,
                                  int64_t hi) {
    if (guards.empty()) return std::nullopt;
    int64_t low = lo;  // [lo, low - 1] is proven (empty at first)
    int64_t high = hi;
    while (low < high) {
      int64_t middle = low + (high - low + 1) / 2;
      if (proven(guards, var, lo, middle - 1)) {
        low = middle;
      } else {
        high = middle - 1;
      }
    }
    if (low == hi) return std::nullopt;  // proven everywhere: simplify's business
    if (low > lo) return Cut{low, true};
    low = lo;
    high = hi;  // [high, hi - 1] is proven (empty at first)
    while (low < high) {
      int64_t middle = low + (high - low) / 2;
      if (proven(guards, var, middle, hi - 1)) {
        high = middle;
      } else {
        low = middle + 1;
      }
    }
    if (high > lo && high < hi) return Cut{high, false};
    // Neither end: the guards may still hold in the middle (a border on both sides), from
    // one of the first kMaxHead points on. Cut there; the part after has a proven prefix.
    for (int64_t first = lo + 1; first < std::min(hi - 1, lo + 1 + kMaxHead); ++first) {
      if (proven(guards, var, first, first)) return Cut{first, false};
    }
    // A short loop whose every iteration meets a border (the tiles of a narrow row): its
    // first iteration is peeled, so that each iteration's guards see a constant.
    if (hi - lo >= 2 && hi - lo <= kMaxPeeled) return Cut{lo + 1, false};
    return std::nullopt;
  }

  VarBounds bounds_;
  bool in_rest_ = false;  // inside the rest of a cut
};

}  // namespace

PrimFunc partition_loops(PrimFunc func) {
  func.body = Partitioner().mutate(func.body);
  return func;
}

MINIC_REGISTER_LOOP_PASS("partition-loops", partition_loops,
                         "cut loops with guarded tails into a guard-free main part and a rest");

}  // namespace minic::loop
