// Region analysis for the block primitives: which part of a buffer the blocks inside a
// loop touch in one iteration of the loops outside it. Private to src/schedule.
//
// Course module 4. compute_at asks "which elements of B do the consumers under loop i.0
// read while i.0 has one value?"; reverse_compute_at asks the same of the elements a
// producer writes. The answer is one range per dimension, written in the outer loop
// variables (the "fixed" loops: `loop` and those above it):
//
//   for i.0 in 0..4 {              consumer reads B[vi, vk] with vi = i.0 * 32 + i.1,
//     for i.1 in 0..32 {           vk = k. With i.0 fixed, i.1 in [0, 31], k in [0, 63]:
//       for k in 0..64 {             dimension 0: i.0 * 32 + [0, 31]  (base i.0 * 32)
//         block C(...)               dimension 1: [0, 63]             (no base)
//
// The algorithm, for each load (store) of the buffer in a block under the loop:
//   1. replace the block's iteration variables by their bindings (through nested blocks),
//      so each index is an expression of loop variables;
//   2. if the index is linear (sums of constant multiples of variables), its terms in
//      fixed loop variables form the base and its terms in the loops inside (the
//      "relaxed" loops, whose ranges are known) give the constant range [lo, hi] by
//      interval arithmetic, taking each term's smallest and largest value;
//   3. otherwise the base is the index itself when it uses no relaxed variable, else
//      the base is empty and [lo, hi] is bound_of over every loop: a larger region, never
//      a smaller one;
//   4. regions of several accesses unite: with the same base, [min lo, max hi]; else the
//      constant bounds of both over the fixed loops' ranges.
// The result is always a superset of what is touched, which is what the primitives need.
#pragma once

#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/stmt.h"

#include <optional>
#include <string>
#include <vector>

namespace minic::schedule {

// Loop variables in order (outermost first) with their ranges.
struct LoopScope {
  std::vector<loop::Expr> vars;
  loop::VarBounds bounds;
  // For each variable: true if it is a loop with constant bounds (its values are exactly
  // its range); false for a loop with variable bounds or a block's iteration variable.
  std::vector<bool> exact;
};

// The For loops of a path (from block_path or loop_path), outermost first, with their
// ranges computed from their bounds (each in terms of the loops above it), and the
// iteration variables of the blocks the path passes through (not its last). Fails naming
// `primitive` if a loop's range cannot be bounded.
LoopScope scope_of_path(const std::vector<loop::Stmt>& path, const std::string& primitive);

// One dimension of a region: the elements [base + lo, base + hi], where `base` is an
// expression of fixed loop variables (null for none).
struct DimRange {
  loop::Expr base;
  int64_t lo = 0;
  int64_t hi = 0;

  int64_t extent() const { return hi - lo + 1; }
  // base + lo, as an expression.
  loop::Expr min() const;
};
using Region = std::vector<DimRange>;

// Whether to collect loads or stores.
enum class Access { load, store };

// The region of `buffer` that `stmt` loads (or stores) in one iteration of the loops
// `fixed` (which surround `stmt`), or nullopt if `stmt` never touches it that way. Fails
// naming `primitive` where an index cannot be bounded.
std::optional<Region> accessed_region(const loop::Stmt& stmt, const loop::BufferNode* buffer,
                                      Access access, const LoopScope& fixed,
                                      const std::string& primitive);

// Both ranges in one (step 4 above).
DimRange unite(const DimRange& a, const DimRange& b, const LoopScope& fixed);

// The constant bounds of a range over every value of the fixed loops.
loop::IntBound overall_bound(const DimRange& range, const LoopScope& fixed);

// True if, over every iteration of the fixed loops, the ranges together cover [0,
// extents[d]) in each dimension d, as a box. Proven by enumerating the values of the
// fixed loops each range's base uses; false (not proven) when two dimensions use one
// loop variable, a base uses a loop whose range is not constant, or there are too many
// values to enumerate.
bool covers(const Region& region, const std::vector<int64_t>& extents, const LoopScope& fixed);

// The block under new loops ax0, ax1, ... that run each iteration variable over its range
// (`ranges[k]` for the k-th, given in the fixed loops; its whole extent where nullopt): a
// range of one element needs no loop, and a range wider than the extent becomes the
// extent. The block's predicate is replaced by one that keeps each binding within
// [0, extent) where the range could leave it; callers check that the old predicate only
// guarded the domain.
loop::Stmt regenerate_nest(const loop::Block& block,
                           const std::vector<std::optional<DimRange>>& ranges,
                           const LoopScope& fixed);

}  // namespace minic::schedule
