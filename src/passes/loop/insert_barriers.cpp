// insert-barriers: barriers between the threads' accesses of shared memory. Course module
// 6 (the pass is documented in include/minic/passes/loop/insert_barriers.h).
//
// Invariant: same results; the function verifies.
//
// Algorithm:
//   1. Find each launch: an outermost thread-bound loop. Its block has, on each threadIdx
//      axis, the largest extent of the threadIdx loops on that axis inside it (as the CUDA
//      back end and the interpreter count it).
//   2. In the launch, each outermost threadIdx loop is a thread nest; walk it (walk) with
//      nothing pending. A statement (other than a sequence or an allocation, which are
//      only their parts) first meets the pending reads and writes as a whole: if it
//      reads a shared buffer pending as written, or writes one pending at all, a barrier
//      goes before it and nothing is pending any more. Then, if every thread
//      arrives at the statements inside it (uniform), they are walked one by one, so that
//      a barrier it needs inside goes there; else its accesses are added as they are.
//   3. A loop's body is walked with the pending accesses at the loop's start joined with
//      those at the end of its body, until that join stops growing (at most one more
//      walk per shared buffer and kind); the last walk's body is kept. After the loop,
//      what is pending is the join (the loop may run no iteration).
//   4. A uniform branch: both sides walked from what is pending before it; after it, the
//      join of both.
//
//   for ko in 0..4 {                   walk 1 from {}: S written, then read by the second
//     S[tx] = A[ko * 16 + tx]          store: a barrier before it; {S read} at the end.
//     B[ko * 16 + tx] = S[15 - tx]     walk 2 from {S read}: the first store writes S: a
//   }                                  barrier before it too; the join stops growing.
//
// Chapter: docs/module6-cuda.md#barriers
#include "minic/passes/loop/insert_barriers.h"
#include "minic/passes/pass_registry.h"

#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/gpu_axis.h"
#include "minic/ir/loop/printer.h"
#include "minic/ir/loop/visitor.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>

namespace minic::loop {
namespace {

// The threadIdx loops of a launch, with the block's extent on each axis.
class ThreadLoops : public IRVisitor {
 public:
  std::array<int64_t, 3> block = {1, 1, 1};
  std::map<const Var*, int> vars;  // each threadIdx loop's variable, and its axis

  void visit_For(const For* node) override {
    if (node->for_kind == ForKind::thread_binding && is_thread_axis(node->thread_axis)) {
      int dim = gpu_axis(node->thread_axis)->dim;
      vars[node->var.as<Var>()] = dim;
      block[dim] = std::max(block[dim], as_const_int(node->extent).value_or(0));
    }
    IRVisitor::visit_For(node);
  }
};

// True if different threads of the block never reach one value of `index`: it is a sum
// of terms, those with a thread's index (a threadIdx loop's variable, times a constant)
// one per axis of more than one thread, their coefficients far enough apart (each at
// least the one before times its axis's threads: the digits of a mixed radix), the rest
// free of thread indices.
bool thread_injective(const Expr& index, const ThreadLoops& threads) {
  std::vector<Expr> terms;
  std::vector<Expr> pending = {index};
  while (!pending.empty()) {
    Expr term = pending.back();
    pending.pop_back();
    if (const Add* add = term.as<Add>()) {
      pending.push_back(add->a);
      pending.push_back(add->b);
    } else {
      terms.push_back(term);
    }
  }
  std::map<int, int64_t> coefficient;  // axis -> coefficient
  for (const Expr& term : terms) {
    const Var* var = term.as<Var>();
    int64_t c = 1;
    if (const Mul* mul = term.as<Mul>()) {
      var = mul->a.as<Var>();
      std::optional<int64_t> factor = as_const_int(mul->b);
      if (!var || !factor) var = nullptr;
      c = factor.value_or(0);
    }
    auto axis = var ? threads.vars.find(var) : threads.vars.end();
    if (axis == threads.vars.end()) {
      bool uses_thread = uses_any_var(term, [&](const Var* v) { return threads.vars.count(v); });
      if (uses_thread) return false;
      continue;
    }
    if (coefficient.count(axis->second) || c <= 0) return false;
    coefficient[axis->second] = c;
  }
  std::vector<std::pair<int64_t, int64_t>> digits;  // coefficient, threads on the axis
  for (int dim = 0; dim < 3; ++dim) {
    if (threads.block[dim] <= 1) continue;
    if (!coefficient.count(dim)) return false;
    digits.push_back({coefficient[dim], threads.block[dim]});
  }
  std::sort(digits.begin(), digits.end());
  for (size_t d = 1; d < digits.size(); ++d) {
    if (digits[d].first < digits[d - 1].first * digits[d - 1].second) return false;
  }
  return true;
}

// One load or store of a shared buffer: which store (null for a load), at which indices
// (as text, so that equal indices compare equal), and whether only one thread reaches
// each element through them.
struct SharedAccess {
  const BufferNode* buffer = nullptr;
  const Store* store = nullptr;
  std::string indices;
  bool own_element = false;
  auto operator<=>(const SharedAccess&) const = default;
};
using SharedUse = std::set<SharedAccess>;

class SharedAccesses : public IRVisitor {
 public:
  explicit SharedAccesses(const ThreadLoops& threads) : threads_(threads) {}
  SharedUse use;

  void visit_Load(const Load* node) override {
    add(node->buffer, nullptr, node->indices);
    IRVisitor::visit_Load(node);
  }
  void visit_Store(const Store* node) override {
    add(node->buffer, node, node->indices);
    IRVisitor::visit_Store(node);
  }

 private:
  void add(const Buffer& buffer, const Store* store, const std::vector<Expr>& indices) {
    if (buffer->scope != MemoryScope::shared) return;
    SharedAccess access{buffer.get(), store, "", false};
    for (const Expr& index : indices) {
      access.indices += print_expr(index) + ";";
      access.own_element = access.own_element || thread_injective(index, threads_);
    }
    use.insert(access);
  }
  const ThreadLoops& threads_;
};

// True if access `b` after access `a`, with no barrier between, may be two threads'
// accesses of one element, one of them a store. Not when both reach each element from one
// thread only, at the same indices (a thread's own element: the accumulator of a
// partial sum), nor for one store repeated in the next iteration of a loop: a copy
// loop's iterations write different elements, and a store whose iterations in two
// threads wrote one element would race within one iteration already, which no barrier
// mends.
bool may_race(const SharedAccess& a, const SharedAccess& b) {
  if (a.buffer != b.buffer || (!a.store && !b.store)) return false;
  if (a.own_element && a.indices == b.indices) return false;
  return !(a.store && a.store == b.store);
}

// The shared accesses since the last barrier.
struct Pending {
  SharedUse use;

  // True if a statement that makes the accesses `next` must wait for those pending.
  bool conflicts(const SharedUse& next) const {
    for (const SharedAccess& b : next) {
      for (const SharedAccess& a : use) {
        if (may_race(a, b)) return true;
      }
    }
    return false;
  }
  void add(const SharedUse& next) { use.insert(next.begin(), next.end()); }
  void join(const Pending& other) { add(other.use); }
  bool operator==(const Pending& other) const { return use == other.use; }
};

// Walks one thread nest (step 2).
class NestWalker {
 public:
  explicit NestWalker(const ThreadLoops& threads) : threads_(threads) {}

  // `stmt` with the barriers it needs, given what is pending before it; `pending` becomes
  // what is pending after it.
  Stmt walk(const Stmt& stmt, Pending& pending) {
    if (is_barrier(stmt)) {
      pending = {};
      return stmt;
    }
    // A sequence or an allocation is only what it holds: its parts meet the pending
    // accesses one by one (a barrier first in it counts).
    if (stmt.kind() == StmtKind::Seq || stmt.kind() == StmtKind::Allocate) {
      return walk_inside(stmt, pending);
    }
    SharedAccesses accesses(threads_);
    accesses.visit(stmt);
    bool wait = pending.conflicts(accesses.use);
    if (wait) pending = {};
    Stmt result = stmt;
    if (uniform(stmt)) {
      result = walk_inside(stmt, pending);
    } else {
      pending.add(accesses.use);
    }
    return wait ? Seq::make({barrier_stmt(), result}) : result;
  }

 private:
  // True if every thread of the block reaches the statements directly inside `stmt`.
  bool uniform(const Stmt& stmt) const {
    switch (stmt.kind()) {
      case StmtKind::Seq:
      case StmtKind::Allocate:
        return true;
      case StmtKind::IfThenElse:
        return !thread_dependent(stmt.as<IfThenElse>()->condition);
      case StmtKind::For: {
        const For* node = stmt.as<For>();
        if (node->for_kind == ForKind::thread_binding) {
          std::optional<int64_t> extent = as_const_int(node->extent);
          return is_thread_axis(node->thread_axis) && extent &&
                 *extent == threads_.block[gpu_axis(node->thread_axis)->dim];
        }
        bool sequential = node->for_kind == ForKind::serial || node->for_kind == ForKind::unrolled;
        return sequential && !thread_dependent(node->min) && !thread_dependent(node->extent);
      }
      default:
        return false;  // a store, an evaluate, a block: one statement
    }
  }

  bool thread_dependent(const Expr& expr) const {
    return uses_any_var(expr, [&](const Var* var) { return threads_.vars.count(var) > 0; });
  }

  Stmt walk_inside(const Stmt& stmt, Pending& pending) {
    switch (stmt.kind()) {
      case StmtKind::Seq: {
        std::vector<Stmt> stmts;
        for (const Stmt& part : stmt.as<Seq>()->stmts) stmts.push_back(walk(part, pending));
        return Seq::make(std::move(stmts));
      }
      case StmtKind::Allocate: {
        const Allocate* node = stmt.as<Allocate>();
        return Allocate::make(node->buffer, walk(node->body, pending));
      }
      case StmtKind::IfThenElse: {
        const IfThenElse* node = stmt.as<IfThenElse>();
        Pending other = pending;
        Stmt then_case = walk(node->then_case, pending);
        Stmt else_case = node->else_case ? walk(node->else_case, other) : Stmt();
        pending.join(other);
        return IfThenElse::make(node->condition, then_case, else_case);
      }
      case StmtKind::For:
        return walk_loop(stmt.as<For>(), pending);
      default:
        return stmt;
    }
  }

  // Step 3 (a threadIdx loop runs its body once in each thread: no next iteration).
  Stmt walk_loop(const For* node, Pending& pending) {
    Pending start = pending;
    Stmt body;
    for (;;) {
      Pending end = start;
      body = walk(node->body, end);
      if (node->for_kind == ForKind::thread_binding) {
        pending = end;
        break;
      }
      Pending joined = start;
      joined.join(end);
      if (joined == start) {
        pending = joined;
        break;
      }
      start = joined;
    }
    return For::make(node->var, node->min, node->extent, node->for_kind, body, node->thread_axis,
                     node->annotations);
  }

  const ThreadLoops& threads_;
};

// Step 1: finds the launches; in each, walks every thread nest.
class LaunchFinder : public IRMutator {
 public:
  Stmt mutate_For(const For* node, const Stmt& self) override {
    if (node->for_kind != ForKind::thread_binding) return IRMutator::mutate_For(node, self);
    ThreadLoops threads;
    threads.visit_For(node);
    return NestFinder(threads).mutate(self);
  }

 private:
  // Inside a launch: each outermost threadIdx loop is a thread nest.
  class NestFinder : public IRMutator {
   public:
    explicit NestFinder(const ThreadLoops& threads) : threads_(threads) {}
    Stmt mutate_For(const For* node, const Stmt& self) override {
      if (node->for_kind != ForKind::thread_binding || !is_thread_axis(node->thread_axis)) {
        return IRMutator::mutate_For(node, self);
      }
      Pending pending;
      return NestWalker(threads_).walk(self, pending);
    }

   private:
    const ThreadLoops& threads_;
  };
};

}  // namespace

PrimFunc insert_barriers(PrimFunc func) {
  func.body = LaunchFinder().mutate(func.body);
  return func;
}

MINIC_REGISTER_LOOP_PASS("insert-barriers", insert_barriers,
                         "a barrier where threads of a block share a shared buffer's elements");

}  // namespace minic::loop
