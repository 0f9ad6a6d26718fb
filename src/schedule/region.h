// Regions for the block primitives, in the terms of schedules: the scope of the loops on a
// path, the region a statement touches under them, and the loop nest that runs a block
// over a region. Private to src/schedule.
//
// Course module 4 (docs/module4-schedules.md#2-the-primitives). compute_at asks "which
// elements of B do the consumers under loop i.0 read while i.0 has one value?";
// reverse_compute_at asks the same of the elements a producer writes. The analysis that
// answers is the loop IR's access analysis (include/minic/ir/loop/access.h: region_of,
// one range per dimension written in the outer loop variables, always a superset); this
// header adds what only the primitives need: the fixed loops of a path, a refusal naming
// the primitive where a region has no bound, and regenerate_nest.
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#pragma once

#include "minic/ir/loop/access.h"
#include "minic/ir/loop/stmt.h"

#include <optional>
#include <string>
#include <vector>

namespace minic::schedule {

using loop::AccessKind;
using loop::covers;
using loop::DimRange;
using loop::LoopScope;
using loop::overall_bound;
using loop::Region;
using loop::unite;

// The For loops of a path (from block_path or loop_path), outermost first, with their
// ranges computed from their bounds (each in terms of the loops above it), and the
// iteration variables of the blocks the path passes through (not its last). Fails naming
// `primitive` if a loop's range cannot be bounded.
LoopScope scope_of_path(const std::vector<loop::Stmt>& path, const std::string& primitive);

// The threadIdx loops of `path` taken out of `fixed` (its scope_of_path) and returned as
// loops to relax around every access: the region of a shared buffer covers all the
// threads of a block, which share it (TVM's rule too), so under a threadIdx loop it is
// the block's tile, not one thread's part of it.
std::vector<loop::LoopAround> take_thread_loops(const std::vector<loop::Stmt>& path,
                                                LoopScope& fixed);

// The region of `buffer` that `stmt` loads (or stores) in one iteration of the loops
// `fixed` (which surround `stmt`), or nullopt if `stmt` never touches it that way:
// loop::region_of over the accesses of `stmt`, the loops `around` (outside `stmt`, not
// in `fixed`) relaxed too. Fails naming `primitive` where an index cannot be bounded.
std::optional<Region> accessed_region(const loop::Stmt& stmt, const loop::BufferNode* buffer,
                                      AccessKind kind, const LoopScope& fixed,
                                      const std::string& primitive,
                                      const std::vector<loop::LoopAround>& around = {});

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
