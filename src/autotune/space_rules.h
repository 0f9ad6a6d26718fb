// The rules of the search space, one per kind of block: which knobs a block has, and the
// schedule a point's values give it. Private to src/autotune: search_space.cpp uses it;
// space_rules.cpp holds the reduction and elementwise rules, space_gemm.cpp the gemm-like.
//
// Course module 5. Each rule is the default CPU rule of its kind
// (src/schedule/rules/cpu_default.cpp) with its fixed sizes turned into knobs, so that the
// default schedule is one point of the space. As the default rules, the knobs' values
// are the target's: vector tiles in its f32 lanes, register tiles that fit its vector
// registers (include/minic/schedule/block_roles.h).
//
//   gemm-like     BLOCK.tile_j, tile_i, tile_k, order, pack, parallel
//   reduction     BLOCK.inner, parallel
//   elementwise   BLOCK.vector, parallel
//
// A block's kind is the one the default rules give it; a block they leave alone (its
// loops feed both kinds of variable, or the default rule is refused) has no knobs. The
// kind of a block in a point is read off its knob names ("C.tile_j": gemm-like).
//
// The gemm-like rule, for C[i, j] += A[i, k] * B[k, j] with tile_j = [j0, j1, j2],
// tile_i = [i0, i1, i2], tile_k = [k0, k1] and order 0 (order 1 swaps j0/i0 and j1/i1):
//
//   [other spatial loops]  j0  i0  j1  i1      (a middle factor of 1 is not split off)
//     copy of the local tile back to C         (cache_write; reverse_compute_at at i1)
//     k0  [other reduction loops]  k1          (k1 unrolled when at most 8)
//       i2 (unrolled)  j2 (vectorised)         the mr x nr register tile
//
// with the init decomposed before k0, B's panel packed under j0 (pack = 1) and one outer
// loop parallel (parallel = its position among [other spatial loops, j0, i0], or -1; not
// a loop around j0 when B is packed there).
//
// Chapter: docs/module5-autotuning.md#2-the-search-space
#pragma once

#include "minic/autotune/search_space.h"
#include "minic/schedule/block_roles.h"
#include "minic/schedule/schedule.h"
#include "minic/target/target.h"

#include <optional>
#include <string>
#include <vector>

namespace minic::autotune {

// The most values one knob offers: longer lists are thinned at random, with a fixed seed.
inline constexpr size_t kMaxKnobChoices = 200;

using Choices = std::vector<std::vector<int64_t>>;

// One block's part of the space: its knobs, and the values the default rule uses.
struct BlockSpace {
  std::vector<Knob> knobs;
  Decisions default_values;
};

// The knobs of block `name` in `sch`, the schedule as the rules of the blocks before it
// left it; applies the default rule for the block to `sch`, as default_cpu_schedule does.
BlockSpace block_space(schedule::Schedule& sch, const std::string& name, const Target& target);

// Applies the rule of block `name` with the values `point` gives its knobs. A block with
// no knobs in `point`, or whose primitives refuse the values, is left as it is.
void apply_block_rule(schedule::Schedule& sch, const std::string& name, const Decisions& point,
                      const Target& target);

// The reason `point`, which has a value of its choices for every knob of `knobs`, breaks a
// constraint between knobs, naming the block; empty if it breaks none. The constraints
// of a gemm-like block: its register tile's accumulators fit in the target's
// accumulator_registers (24 of AVX-512's 32), and a packed panel is not written by
// several threads (no parallel loop around j0).
std::string constraint_violation(const std::vector<Knob>& knobs, const Decisions& point,
                                 const Target& target);

// --- shared by the rules (space_rules.cpp) ----------------------------------------------------

// "C.tile_j": the knob `knob` of block `block`.
std::string knob_name(const std::string& block, const char* knob);
bool has_knob(const Decisions& point, const std::string& block, const char* knob);
// The point's value of the block's knob; Error if it has none.
const std::vector<int64_t>& value_of(const Decisions& point, const std::string& block,
                                     const char* knob);
// Adds the knob (its choices thinned to kMaxKnobChoices, keeping the default value).
void add_knob(BlockSpace& space, const std::string& block, const char* knob, Choices choices,
              std::vector<int64_t> default_value);
// {0, 1} where a yes/no knob is offered, else {0}.
Choices yes_no(bool offered);

// --- the gemm-like rule (space_gemm.cpp) ------------------------------------------------------

// The knobs of a gemm-like block and the default rule's values; nullopt where the default
// rule does not tile it (the block is then a plain reduction). On success `sch` holds the
// block scheduled with the default values.
std::optional<BlockSpace> gemm_space(schedule::Schedule& sch, const schedule::BlockRef& block,
                                     const std::string& name, const schedule::LoopRoles& roles,
                                     const Target& target);
// The gemm-like rule with the point's values for block `name`; Error where a primitive
// refuses them.
void schedule_gemm_point(schedule::Schedule& sch, const schedule::BlockRef& block,
                         const schedule::LoopRoles& roles, const std::string& name,
                         const Decisions& point);
// The constraint the block's values break (constraint_violation), or empty.
std::string gemm_violation(const std::vector<Knob>& knobs, const std::string& block,
                           const Decisions& point, const Target& target);

}  // namespace minic::autotune
