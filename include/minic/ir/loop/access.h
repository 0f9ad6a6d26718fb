// Which buffers a statement reads and writes, at which indices, and which part of each
// buffer it touches under given loop bounds: the one access analysis that lowering, the
// schedule primitives, the dependence test and compact-buffers share.
//
// Course module 3 (docs/module3-loop-ir.md#2-walking-and-rewriting) and module 4
// (docs/module4-schedules.md#2-the-primitives). Three questions, one walk:
//
//   1. collect_accesses: every load and store of a statement, in program order, with its
//      buffer, its indices, the innermost block and the loops around it. Asked to, it
//      replaces each block's iteration variables by their bindings (through nested
//      blocks), so that the indices read in loop variables:
//
//        for i in 0..4 {                       collect_accesses(loop, {.bindings = true}):
//          block B(v = spatial(4) i) {           load  A[i * 2]   loops: i
//            B[v] = A[v * 2]                     store B[i]       loops: i
//
//   2. buffer_use / declared_regions: the buffers a statement reads and writes (what the
//      primitives' legality checks ask), and the regions a new block declares for its own
//      loads and stores (what lowering and decompose_reduction write into a block).
//
//   3. region_of: the part of a buffer the accesses touch in one iteration of some outer
//      ("fixed") loops while the loops inside them (the "relaxed" loops around each access)
//      run over their ranges: one range per dimension, base + [lo, hi], the base an
//      expression of the fixed loops. compute_at asks it of the loads under a loop of the
//      consumer, reverse_compute_at of the stores under a loop of the producer:
//
//        for i.0 in 0..4 {            a load B[i.0 * 32 + i.1, k] with i.0 fixed:
//          for i.1 in 0..32 {           dimension 0: i.0 * 32 + [0, 31]   (base i.0 * 32)
//            for k in 0..64 {           dimension 1: [0, 63]              (no base)
//
//      For each access of the buffer:
//        a. if the index is linear (a sum of constant multiples of variables), its terms in
//           fixed variables form the base and its terms in relaxed variables give [lo, hi]
//           by interval arithmetic, each term at its smallest and largest value;
//        b. otherwise the base is the index itself when it uses no relaxed variable, else
//           the base is empty and [lo, hi] is bound_of over every loop;
//        c. the ranges of several accesses unite: with the same base, [min lo, max hi];
//           else the constant bounds of both over the fixed loops' ranges.
//      The result is always a superset of what is touched (never smaller), which is what
//      the primitives need; a non-linear index gives a larger region, not a wrong one.
//
// Chapter: docs/module3-loop-ir.md#2-walking-and-rewriting
#pragma once

#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/stmt.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace minic::loop {

// --- 1. the accesses ---------------------------------------------------------------------------

enum class AccessKind : uint8_t { load, store };

// A loop between the statement collect_accesses walks and an access; its bounds are
// written like the access's indices (bindings replaced when asked).
struct LoopAround {
  const For* loop = nullptr;
  Expr min;
  Expr extent;
};

// One load or store.
struct Access {
  Buffer buffer;
  AccessKind kind = AccessKind::load;
  std::vector<Expr> indices;
  // The innermost block around the access inside the walked statement (the walked block
  // itself included); null outside blocks.
  const Block* block = nullptr;
  // The loops around the access inside the walked statement, outermost first.
  std::vector<LoopAround> loops;
};

struct AccessOptions {
  // Replace each block's iteration variables by their bindings (through nested blocks),
  // in indices and in loop bounds, so that both read in loop variables.
  bool bindings = false;
};

// Every load and store of `stmt` (or `block`, or `expr`) in program order: a store before
// the loads of its indices and value, a load before the loads in its indices. Loads in
// loop bounds, block bindings, regions and predicates count too.
std::vector<Access> collect_accesses(const Stmt& stmt, const AccessOptions& options = {});
std::vector<Access> collect_accesses(const Block& block, const AccessOptions& options = {});
std::vector<Access> collect_accesses(const Expr& expr);

// The accesses of `buffer` among `accesses`, of one kind (or both where nullopt).
std::vector<Access> accesses_of(const std::vector<Access>& accesses, const BufferNode* buffer,
                                std::optional<AccessKind> kind = std::nullopt);

// --- 2. buffers read and written, declared regions ---------------------------------------------

// The buffers a statement loads from or names in a block's read region (reads), and those
// it stores to or names in a write region (writes).
struct BufferUse {
  std::set<const BufferNode*> reads;
  std::set<const BufferNode*> writes;
  bool reads_buffer(const BufferNode* buffer) const { return reads.count(buffer) > 0; }
  bool writes_buffer(const BufferNode* buffer) const { return writes.count(buffer) > 0; }
  bool touches(const BufferNode* buffer) const {
    return reads_buffer(buffer) || writes_buffer(buffer);
  }
};
BufferUse buffer_use(const Stmt& stmt);
// One block alone: its own loads, stores and declared regions, not those of blocks
// nested in it.
BufferUse block_buffer_use(const Block& block);

// The buffers allocated inside `stmt` (Allocate statements and blocks' alloc_buffers).
std::set<const BufferNode*> allocated_buffers(const Stmt& stmt);

// A point region, buffer[i:+1, j:+1, ...], and the whole buffer, buffer[0:+d0, ...].
BufferRegion point_region(const Buffer& buffer, const std::vector<Expr>& indices);
BufferRegion whole_region(const Buffer& buffer);

// The regions a block declares for its loads (reads) and stores (writes) of `body`, one
// per buffer in the order first accessed, written in its iteration variables (ranging
// over `bounds`): per dimension, the one index every access of the buffer uses when it
// provably lies inside the buffer (a point), else the whole dimension.
struct DeclaredRegions {
  std::vector<BufferRegion> reads;
  std::vector<BufferRegion> writes;
};
DeclaredRegions declared_regions(const Stmt& body, const VarBounds& bounds);

// --- 3. the region under loop bounds -----------------------------------------------------------

// The fixed loop variables in order (outermost first) with their ranges.
struct LoopScope {
  std::vector<Expr> vars;
  VarBounds bounds;
  // For each variable: true if it is a loop with constant bounds (its values are exactly
  // its range); false for a loop with variable bounds or a block's iteration variable.
  std::vector<bool> exact;
};

// One dimension of a region: the elements [base + lo, base + hi], where `base` is an
// expression of fixed loop variables (null for none).
struct DimRange {
  Expr base;
  int64_t lo = 0;
  int64_t hi = 0;

  int64_t extent() const { return hi - lo + 1; }
  // base + lo, as an expression.
  Expr min() const;
};
using Region = std::vector<DimRange>;

// What region_of finds: the region, or (region nullopt) no access of that kind, or the
// reason an index or a loop's range cannot be bounded ("cannot bound the index i * i of
// buffer B").
struct RegionResult {
  std::optional<Region> region;
  std::optional<std::string> unbounded;
};

// The region of `buffer` that the accesses of `kind` touch in one iteration of the loops
// `fixed`, each access's own loops (Access::loops) relaxed: steps a-c above. The accesses
// must be collected with bindings replaced, inside the fixed loops.
RegionResult region_of(const std::vector<Access>& accesses, const BufferNode* buffer,
                       AccessKind kind, const LoopScope& fixed);

// Both ranges in one (step c above).
DimRange unite(const DimRange& a, const DimRange& b, const LoopScope& fixed);

// The constant bounds of a range over every value of the fixed loops.
IntBound overall_bound(const DimRange& range, const LoopScope& fixed);

// True if, over every iteration of the fixed loops, the ranges together cover [0,
// extents[d]) in each dimension d, as a box. Proven by enumerating the values of the
// fixed loops each range's base uses; false (not proven) when two dimensions use one
// loop variable, a base uses a loop whose range is not constant, or there are too many
// values to enumerate.
bool covers(const Region& region, const std::vector<int64_t>& extents, const LoopScope& fixed);

}  // namespace minic::loop
