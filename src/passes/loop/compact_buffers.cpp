// compact-buffers: allocations shrunk to the region one iteration uses. Course module 4.
//
// Invariant: every access of a compacted buffer reads or writes the element it did
// before, renamed: index - minimum, dimension by dimension, where the minimum is the same
// for every access and depends only on loops outside the new allocation, or (a shared
// buffer) on loops inside it whose iterations use disjoint parts of the buffer.
//
// Algorithm, for each Allocate of buffer X (row-major strides, no blocks inside):
//   1. Scope: from the Allocate's body go down while one statement holds every access of
//      X: into the one child of a sequence that uses X, into another allocation's body,
//      and into a loop's body when the iterations of the loop use disjoint parts of X
//      (then no value flows from one iteration to the next through X, and each iteration
//      may have its own copy): in some dimension every access lies in [m, m + e), m the
//      same expression for all of them, and m grows by at least e from one iteration to
//      the next. Into a GPU loop by its scope: every thread block has its own shared
//      and local memory, every thread its own local memory, so a blockIdx loop is entered
//      by shared and local buffers, a threadIdx loop by local ones, each iteration with
//      its copy. A shared buffer stops at the first threadIdx loop, which is its home
//      (the threads of a block share one copy), but the descent goes on below it to find
//      the statement whose iterations fix the region: the threadIdx loops passed vary
//      like the loops inside (the region covers every thread), and a loop entered below
//      them because its iterations are disjoint reuses the one copy in each iteration
//      (insert-barriers orders the threads' reuse). A global buffer enters no GPU loop.
//      Without a threadIdx loop the statement reached is the new home of X.
//   2. Region: for every access below the statement reached, collect the ranges of the
//      loops between it and the access, and of the threadIdx loops passed. Per
//      dimension, the minimum of an index is the index with each of those loop
//      variables at its smallest value; the rest (index - minimum,
//      simplified) must depend on those loops only and be at least 0; its largest value
//      + 1 is the extent. All accesses must agree on the minimum.
//   3. Rewrite: a buffer of the new extents (a dimension that did not pass step 2 keeps
//      its whole extent, minimum 0), every index shifted by its minimum, and the Allocate
//      moved to the home.
//
//   for bx in 0..4 bind(blockIdx.x) {           S (shared f32[4, 64]) becomes f32[1, 16]:
//     for tx in 0..16 bind(threadIdx.x) {       home: bx's body (one copy a block);
//       for ko in 0..4 {                        region: ko's body, tx varying: the
//         S[bx, ko * 16 + tx] = ...             elements ko * 16 + [0, 15], minimum
//         for k in 0..16 {                      ko * 16; each ko reuses the 16.
//           ... S[bx, ko * 16 + k] ...
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#include "minic/passes/loop/compact_buffers.h"
#include "minic/passes/pass_registry.h"

#include "minic/ir/loop/access.h"
#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/gpu_axis.h"
#include "minic/ir/loop/visitor.h"
#include "minic/passes/loop/simplify.h"
#include "pass_util.h"

#include <algorithm>

namespace minic::loop {
namespace {

using pass_util::equal_exprs;
using pass_util::uses_buffer;

// One access of the buffer, with the ranges of the loops between the home and it.
struct BoundedAccess {
  std::vector<Expr> indices;
  VarBounds inner;
};

// The ranges of the loops around an access. A loop of unknown range leaves its variable
// unbounded: its accesses keep whole dimensions.
VarBounds constant_ranges(const std::vector<LoopAround>& loops) {
  VarBounds inner;
  for (const LoopAround& around : loops) {
    std::optional<int64_t> min = as_const_int(around.min);
    std::optional<int64_t> extent = as_const_int(around.extent);
    if (!min || !extent || *extent <= 0) continue;
    inner[around.loop->var.as<Var>()] = {*min, *min + *extent - 1};
  }
  return inner;
}

// The part of one dimension the accesses cover: [min, min + extent).
struct DimRegion {
  Expr min;
  int64_t extent = 0;
};

// The index a vector access starts at, and how far its lanes reach beyond it (-1 if the
// lanes go backwards, which the pass does not handle).
std::pair<Expr, int64_t> scalar_start(const Expr& index) {
  const Ramp* ramp = index.as<Ramp>();
  if (!ramp) return {index, 0};
  std::optional<int64_t> stride = as_const_int(ramp->stride);
  if (!stride || *stride < 0) return {index, -1};
  return {ramp->base, *stride * (ramp->lanes - 1)};
}

// Step 2 for dimension `d`; nullopt when the dimension must stay whole.
std::optional<DimRegion> dim_region(const std::vector<BoundedAccess>& accesses, size_t d) {
  DimRegion region;
  for (const BoundedAccess& access : accesses) {
    auto [start, reach] = scalar_start(access.indices[d]);
    if (reach < 0 || start.type().is_vector()) return std::nullopt;
    VarMap at_min;
    for (const auto& [var, bound] : access.inner) at_min[var] = IntImm::make(bound.min);
    Expr min = simplify_expr(substitute(start, at_min), {});
    Expr offset = simplify_expr(start - min, access.inner);
    bool only_inner = !uses_any_var(offset, [&](const Var* var) {
      return access.inner.count(var) == 0;
    });
    IntBound bound = bound_of(offset, access.inner);
    if (!only_inner || !bound.is_bounded() || bound.min < 0) return std::nullopt;
    if (!region.min) {
      region.min = min;
    } else if (!equal_exprs(region.min, min)) {
      return std::nullopt;
    }
    region.extent = std::max(region.extent, bound.max + reach + 1);
  }
  return region;
}

// Step 3: the buffer's accesses renamed to the compact buffer.
class Rebase : public IRMutator {
 public:
  Rebase(const BufferNode* from, Buffer to, std::vector<Expr> mins)
      : from_(from), to_(std::move(to)), mins_(std::move(mins)) {}

  Expr mutate_Load(const Load* node, const Expr& self) override {
    Expr load = IRMutator::mutate_Load(node, self);
    const Load* changed = load.as<Load>();
    if (changed->buffer.get() != from_) return load;
    return Load::make(to_, shifted(changed->indices));
  }
  Stmt mutate_Store(const Store* node, const Stmt& self) override {
    Stmt store = IRMutator::mutate_Store(node, self);
    const Store* changed = store.as<Store>();
    if (changed->buffer.get() != from_) return store;
    return Store::make(to_, shifted(changed->indices), changed->value);
  }

 private:
  std::vector<Expr> shifted(const std::vector<Expr>& indices) const {
    std::vector<Expr> result;
    for (size_t d = 0; d < indices.size(); ++d) {
      if (!mins_[d]) {
        result.push_back(indices[d]);
      } else if (const Ramp* ramp = indices[d].as<Ramp>()) {
        result.push_back(
            Ramp::make(simplify_expr(ramp->base - mins_[d], {}), ramp->stride, ramp->lanes));
      } else {
        result.push_back(simplify_expr(indices[d] - mins_[d], {}));
      }
    }
    return result;
  }

  const BufferNode* from_;
  Buffer to_;
  std::vector<Expr> mins_;  // null: the dimension stays whole
};

bool row_major(const BufferNode& buffer) {
  return BufferNode::make(buffer.name, buffer.dtype, buffer.shape)->strides == buffer.strides;
}

// `stmt` with the statement at the end of `path` (a descent from it) replaced.
Stmt rebuild(const std::vector<Stmt>& path, size_t at, const Stmt& replacement) {
  if (at + 1 == path.size()) return replacement;
  Stmt inner = rebuild(path, at + 1, replacement);
  const Stmt& stmt = path[at];
  if (const For* node = stmt.as<For>()) {
    return For::make(node->var, node->min, node->extent, node->for_kind, inner,
                     node->thread_axis, node->annotations);
  }
  if (const Allocate* node = stmt.as<Allocate>()) return Allocate::make(node->buffer, inner);
  const Seq* node = stmt.as<Seq>();
  std::vector<Stmt> stmts = node->stmts;
  for (Stmt& child : stmts) {
    if (child.same_as(path[at + 1])) child = inner;
  }
  return Seq::make(std::move(stmts));
}

// The region of each dimension that the accesses of `buffer` inside `scope` cover, the
// loops inside `scope` and those of `threads` (threadIdx loops above it) varying (nullopt
// for a dimension that must stay whole). Empty if `scope` has a block or no access.
std::vector<std::optional<DimRegion>> regions_in(const Stmt& scope, const BufferNode* buffer,
                                                 const VarBounds& threads) {
  std::vector<Access> all = collect_accesses(scope);
  bool has_block = std::any_of(all.begin(), all.end(),
                               [](const Access& access) { return access.block; });
  std::vector<BoundedAccess> accesses;
  for (const Access& access : accesses_of(all, buffer)) {
    VarBounds inner = constant_ranges(access.loops);
    inner.insert(threads.begin(), threads.end());
    accesses.push_back({access.indices, inner});
  }
  if (has_block || accesses.empty()) return {};
  std::vector<std::optional<DimRegion>> regions;
  for (size_t d = 0; d < buffer->shape.size(); ++d) regions.push_back(dim_region(accesses, d));
  return regions;
}

// True if the iterations of `loop` use disjoint parts of `buffer` (step 1); a loop of
// one iteration trivially does (a batch loop of extent 1 above a GEMM's column tiles).
bool iterations_disjoint(const For& loop, const BufferNode* buffer, const VarBounds& threads) {
  if (as_const_int(loop.extent) == int64_t{1}) return true;
  const Var* var = loop.var.as<Var>();
  for (const std::optional<DimRegion>& region : regions_in(loop.body, buffer, threads)) {
    if (!region || !uses_var(region->min, var)) continue;
    Expr next = substitute(region->min, {{var, loop.var + 1}});
    std::optional<int64_t> step = as_const_int(simplify_expr(next - region->min, {}));
    if (step && *step >= region->extent) return true;
  }
  return false;
}

// True if `buffer` may be allocated inside the GPU loop `loop`, one copy per iteration
// (step 1): a blockIdx loop for shared and local buffers, a threadIdx loop for local ones.
bool has_copy_per_iteration(const For& loop, const BufferNode& buffer) {
  if (buffer.scope == MemoryScope::local) return true;
  return buffer.scope == MemoryScope::shared && is_block_axis(loop.thread_axis);
}

class Compactor : public IRMutator {
 public:
  Stmt mutate_Allocate(const Allocate* node, const Stmt& self) override {
    Stmt body = mutate(node->body);
    const BufferNode* buffer = node->buffer.get();
    Stmt unchanged = body.same_as(node->body) ? self : Allocate::make(node->buffer, body);
    if (!row_major(*buffer)) return unchanged;

    // 1. The home, and the statement whose iterations fix the region (the last of path).
    std::vector<Stmt> path = {body};
    std::optional<size_t> shared_home;  // where a shared buffer met a threadIdx loop
    VarBounds threads;                  // the threadIdx loops passed below it
    while (true) {
      const Stmt& current = path.back();
      if (const For* loop = current.as<For>()) {
        if (loop->for_kind == ForKind::thread_binding) {
          if (!has_copy_per_iteration(*loop, *buffer)) {
            std::optional<int64_t> min = as_const_int(loop->min);
            std::optional<int64_t> extent = as_const_int(loop->extent);
            bool shared_threads = buffer->scope == MemoryScope::shared &&
                                  is_thread_axis(loop->thread_axis) && min && extent;
            if (!shared_threads || *extent <= 0) break;
            if (!shared_home) shared_home = path.size() - 1;
            threads[loop->var.as<Var>()] = {*min, *min + *extent - 1};
          }
        } else if (!iterations_disjoint(*loop, buffer, threads)) {
          break;
        }
        path.push_back(loop->body);
      } else if (const Allocate* inner = current.as<Allocate>()) {
        path.push_back(inner->body);
      } else if (const Seq* seq = current.as<Seq>()) {
        std::vector<Stmt> users;
        for (const Stmt& child : seq->stmts) {
          if (uses_buffer(child, buffer)) users.push_back(child);
        }
        if (users.size() != 1) break;
        path.push_back(users[0]);
      } else {
        break;
      }
    }
    size_t home = shared_home.value_or(path.size() - 1);

    // 2. The region.
    std::vector<std::optional<DimRegion>> regions = regions_in(path.back(), buffer, threads);
    if (regions.empty()) return unchanged;
    std::vector<int64_t> shape = buffer->shape;
    std::vector<Expr> mins(shape.size());
    bool smaller = false;
    for (size_t d = 0; d < shape.size(); ++d) {
      const std::optional<DimRegion>& region = regions[d];
      if (!region || region->extent >= shape[d]) continue;
      shape[d] = region->extent;
      mins[d] = region->min;
      smaller = true;
    }
    if (!smaller && home == 0) return unchanged;

    // 3. The compact buffer, allocated at the home.
    Buffer compact = BufferNode::make(buffer->name, buffer->dtype, shape, buffer->scope);
    path.resize(home + 1);
    Stmt rebased = Rebase(buffer, compact, mins).mutate(path.back());
    return rebuild(path, 0, Allocate::make(compact, rebased));
  }
};

}  // namespace

PrimFunc compact_buffers(PrimFunc func) {
  func.body = Compactor().mutate(func.body);
  return func;
}

MINIC_REGISTER_LOOP_PASS("compact-buffers", compact_buffers,
                         "shrink allocations to the region one loop iteration uses");

}  // namespace minic::loop
