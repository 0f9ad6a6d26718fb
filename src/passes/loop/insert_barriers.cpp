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
#include "minic/ir/loop/visitor.h"

#include <array>
#include <map>
#include <set>

namespace minic::loop {
namespace {

Stmt make_barrier() { return Evaluate::make(Call::make(DataType::int64(), "barrier", {})); }

bool is_barrier(const Stmt& stmt) {
  const Evaluate* node = stmt.as<Evaluate>();
  const Call* call = node ? node->value.as<Call>() : nullptr;
  return call && call->name == "barrier";
}

// The shared buffers a statement reads, and those it writes with the stores that do.
struct SharedUse {
  std::set<const BufferNode*> reads;
  std::map<const BufferNode*, std::set<const Store*>> writes;
};

class SharedAccesses : public IRVisitor {
 public:
  SharedUse use;
  void visit_Load(const Load* node) override {
    if (node->buffer->scope == MemoryScope::shared) use.reads.insert(node->buffer.get());
    IRVisitor::visit_Load(node);
  }
  void visit_Store(const Store* node) override {
    if (node->buffer->scope == MemoryScope::shared) use.writes[node->buffer.get()].insert(node);
    IRVisitor::visit_Store(node);
  }
};

SharedUse shared_use(const Stmt& stmt) {
  SharedAccesses accesses;
  accesses.visit(stmt);
  return accesses.use;
}

// The shared buffers read and written since the last barrier.
struct Pending {
  SharedUse use;

  // True if a statement that reads and writes `next` must wait for the threads' accesses
  // pending: it reads what they wrote, or writes what they read, or writes what another
  // store wrote. (One store repeated, in the next iteration of a loop, is not taken to
  // write what another thread's earlier iteration of it wrote: a copy loop needs no
  // barrier between its iterations.)
  bool conflicts(const SharedUse& next) const {
    for (const BufferNode* buffer : next.reads) {
      if (use.writes.count(buffer)) return true;
    }
    for (const auto& [buffer, stores] : next.writes) {
      if (use.reads.count(buffer)) return true;
      auto written = use.writes.find(buffer);
      if (written == use.writes.end()) continue;
      for (const Store* store : written->second) {
        if (!stores.count(store)) return true;
      }
    }
    return false;
  }
  void add(const SharedUse& next) {
    use.reads.insert(next.reads.begin(), next.reads.end());
    for (const auto& [buffer, stores] : next.writes) {
      use.writes[buffer].insert(stores.begin(), stores.end());
    }
  }
  void join(const Pending& other) { add(other.use); }
  bool operator==(const Pending& other) const {
    return use.reads == other.use.reads && use.writes == other.use.writes;
  }
};

// The threadIdx loops of a launch, with the block's extent on each axis.
class ThreadLoops : public IRVisitor {
 public:
  std::array<int64_t, 3> block = {1, 1, 1};
  std::set<const Var*> vars;

  void visit_For(const For* node) override {
    if (node->for_kind == ForKind::thread_binding && is_thread_axis(node->thread_axis)) {
      vars.insert(node->var.as<Var>());
      int64_t& extent = block[gpu_axis(node->thread_axis)->dim];
      extent = std::max(extent, as_const_int(node->extent).value_or(0));
    }
    IRVisitor::visit_For(node);
  }
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
    bool transparent = stmt.kind() == StmtKind::Seq || stmt.kind() == StmtKind::Allocate;
    SharedUse use = shared_use(stmt);
    bool wait = !transparent && pending.conflicts(use);
    if (wait) pending = {};
    Stmt result = stmt;
    if (uniform(stmt)) {
      result = walk_inside(stmt, pending);
    } else {
      pending.add(use);
    }
    return wait ? Seq::make({make_barrier(), result}) : result;
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
