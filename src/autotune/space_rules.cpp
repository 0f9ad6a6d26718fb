// The rules of the search space (space_rules.h): the knob helpers, the reduction and
// elementwise rules, and the walk over one block. Course module 5. The gemm-like rule is
// in space_gemm.cpp.
//
// Each rule has two halves that must agree: its knobs (the values a block may take,
// computed from its loop extents) and its schedule (the primitives a point's values give).
// block_space builds the knobs and the default values -- the default rule's sizes -- and
// schedules the block with those values, so that the blocks after it see what
// default_cpu_schedule would give them. The schedules follow cpu_default.cpp primitive
// for primitive: with the default values, a block's trace is the default rule's.
//
// Chapter: docs/module5-autotuning.md#2-the-search-space
#include "space_rules.h"

#include "minic/autotune/knob_registry.h"
#include "minic/support/error.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace minic::autotune {

using schedule::BlockRef;
using schedule::LoopRef;
using schedule::LoopRoles;
using schedule::Schedule;

namespace {

constexpr uint64_t kThinningSeed = 7;  // for thinning long lists of choices

// Keeps at most kMaxKnobChoices of `choices`, `keep` among them, in their order. Which
// ones is random but fixed: the same extents always give the same list.
Choices thinned(Choices choices, const std::vector<int64_t>& keep) {
  if (choices.size() <= kMaxKnobChoices) return choices;
  std::vector<size_t> order(choices.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(kThinningSeed);
  std::shuffle(order.begin(), order.end(), rng);
  order.resize(kMaxKnobChoices);
  size_t keep_index = std::find(choices.begin(), choices.end(), keep) - choices.begin();
  if (std::find(order.begin(), order.end(), keep_index) == order.end()) order.back() = keep_index;
  std::sort(order.begin(), order.end());
  Choices kept;
  for (size_t index : order) kept.push_back(choices[index]);
  return kept;
}

}  // namespace

std::string knob_name(const std::string& block, const char* knob) { return block + "." + knob; }

bool has_knob(const Decisions& point, const std::string& block, const char* knob) {
  return point.count(knob_name(block, knob)) != 0;
}

const std::vector<int64_t>& value_of(const Decisions& point, const std::string& block,
                                     const char* knob) {
  auto found = point.find(knob_name(block, knob));
  if (found == point.end()) fail("the point has no value for knob {}", knob_name(block, knob));
  return found->second;
}

void add_knob(BlockSpace& space, const std::string& block, const char* knob, Choices choices,
              std::vector<int64_t> default_value) {
  choices = thinned(std::move(choices), default_value);
  MINIC_CHECK(std::find(choices.begin(), choices.end(), default_value) != choices.end());
  space.knobs.push_back({knob_name(block, knob), std::move(choices)});
  space.default_values[knob_name(block, knob)] = std::move(default_value);
}

Choices yes_no(bool offered) { return offered ? Choices{{0}, {1}} : Choices{{0}}; }

// --- registered knobs (knob_registry.h) ------------------------------------------------------

namespace {
// Registrations run while static objects are built, before main: the list is built on
// first use, whichever file registers first.
std::vector<KnobRule>& knob_list() {
  static std::vector<KnobRule> knobs;
  return knobs;
}
}  // namespace

RegisterKnob::RegisterKnob(KnobRule rule) {
  for (const KnobRule& knob : knob_list()) {
    if (knob.name == rule.name) internal_fail("the knob '{}' is registered twice", rule.name);
  }
  knob_list().push_back(std::move(rule));
}

const std::vector<KnobRule>& registered_knobs() { return knob_list(); }

namespace {

// --- reductions and elementwise blocks ------------------------------------------------------
// (the rules themselves are schedule_reduction and schedule_elementwise, block_roles.h)

// rows: the row reduction rule (1) or the plain one (0), where the row rule applies; the
// default takes it wherever it applies, as cpu_default.cpp does.
BlockSpace reduction_space(Schedule& sch, const BlockRef& block, const std::string& name,
                           const LoopRoles& roles, const Target& target) {
  // Moving a loop of one iteration changes nothing: no knob then.
  bool has_spatial =
      !roles.spatial.empty() && schedule::extent_of(sch, roles.spatial.back()) > 1;
  int64_t total_work = schedule::product(sch, roles.spatial) * schedule::product(sch, roles.reduce);
  bool inner = has_spatial &&
               schedule::extent_of(sch, roles.spatial.back()) >= schedule::vector_lanes(target);
  bool enough_work = total_work >= schedule::kParallelMinWork;
  std::optional<LoopRef> along = schedule::loop_along_input(sch, block, sch.get_loops(block));
  bool rows = false;
  if (along && sch.loop_var(along->var).same_as(sch.loop_var(roles.reduce.back().var))) {
    Schedule attempt = sch;
    try {
      schedule::schedule_row_reduction(attempt, block, roles, schedule::vector_lanes(target),
                                       enough_work);
      rows = true;
    } catch (const InternalError&) {
      throw;  // a bug, not a refusal
    } catch (const Error&) {
      // The row rule does not fit: the plain one only.
    }
  }
  BlockSpace space;
  add_knob(space, name, "rows", yes_no(rows), {rows ? 1 : 0});
  add_knob(space, name, "inner", yes_no(has_spatial), {inner ? 1 : 0});
  add_knob(space, name, "parallel", yes_no(enough_work), {enough_work ? 1 : 0});
  if (rows) {
    schedule::schedule_row_reduction(sch, block, roles, schedule::vector_lanes(target),
                                     enough_work);
  } else {
    schedule::schedule_reduction(sch, block, roles, inner, schedule::vector_lanes(target),
                                 enough_work);
  }
  return space;
}

// The blocked convolution rule's register tile and form, [T, U, chunk] (block_roles.h):
// every tile that fits the registers, in the tile form (chunk 0) and, where the output
// plane is small, the plane form too; the default rule's choice by default. Nullopt for a
// block the rule does not take.
std::optional<BlockSpace> blocked_conv_space(Schedule& sch, const BlockRef& block,
                                             const std::string& name, const LoopRoles& roles,
                                             const Target& target) {
  std::vector<schedule::ConvTile> tiles;
  schedule::ConvTile tile;
  try {
    tiles = schedule::blocked_conv_tiles(sch, block, roles, target);
    tile = schedule::blocked_conv_tile(sch, block, roles, target);
  } catch (const InternalError&) {
    throw;  // a bug, not a refusal
  } catch (const Error&) {
    return std::nullopt;
  }
  Choices choices;
  for (const schedule::ConvTile& t : tiles) choices.push_back({t.positions, t.channels, t.chunk});
  BlockSpace space;
  add_knob(space, name, "conv_tile", std::move(choices),
           {tile.positions, tile.channels, tile.chunk});
  schedule::schedule_blocked_conv(sch, block, roles, target, tile);
  return space;
}

// The vector knob: no split, or one, two or four vectors (16, 32, 64 lanes with AVX-512).
// One vector also where the extent is not a multiple of it (the last one shorter).
// transposed (only where the block reads across its nest, transposed_read): with one
// vector, the transposed copy rule (1, the default's) or the elementwise one (0).
BlockSpace elementwise_space(Schedule& sch, const BlockRef& block, const std::string& name,
                             const LoopRoles& block_roles, const Target& target) {
  if (block_roles.spatial.empty()) return {};
  const int64_t lanes = schedule::vector_lanes(target);
  // The default rule's form: a transposed copy, or short rows fused first (no knob).
  const schedule::SpatialForm form = schedule::spatial_form(sch, block, block_roles, lanes);
  const LoopRoles& roles = form.roles;
  int64_t extent = schedule::extent_of(sch, roles.spatial.back());
  // Whole vectors, or one vector with a shorter last one (as the default rule splits).
  Choices vectors = {{1}};
  for (int64_t tile : {lanes, 2 * lanes, 4 * lanes}) {
    if (extent > 0 && (extent % tile == 0 || (tile == lanes && extent > lanes))) {
      vectors.push_back({tile});
    }
  }
  int64_t vector = extent >= lanes ? lanes : 1;
  bool enough_work = schedule::product(sch, roles.spatial) >= schedule::kParallelMinWork;
  BlockSpace space;
  add_knob(space, name, "vector", vectors, {vector});
  add_knob(space, name, "parallel", yes_no(enough_work), {enough_work ? 1 : 0});
  if (form.transposed) {
    add_knob(space, name, "transposed", yes_no(true), {1});
    schedule::schedule_transposed_copy(sch, roles, *form.transposed, lanes, enough_work);
  } else {
    schedule::schedule_elementwise(sch, roles, vector, enough_work);
  }
  return space;
}

}  // namespace

BlockSpace block_space(Schedule& sch, const std::string& name, const Target& target) {
  Schedule attempt = sch;
  try {
    BlockRef block = attempt.get_block(name);
    std::vector<LoopRef> loops = attempt.get_loops(block);
    LoopRoles roles = schedule::loop_roles(attempt, block, loops);
    if (roles.mixed || loops.empty()) return {};
    std::optional<BlockSpace> space = blocked_conv_space(attempt, block, name, roles, target);
    if (!space) space = gemm_space(attempt, block, name, roles, target);
    if (!space) {
      space = roles.reduce.empty() ? elementwise_space(attempt, block, name, roles, target)
                                   : reduction_space(attempt, block, name, roles, target);
    }
    // The registered knobs, offered the block as its rule left it. Their defaults change
    // nothing, so the schedule stays the default one.
    for (const KnobRule& knob : registered_knobs()) {
      Choices choices = knob.offer(attempt, name, target);
      if (choices.size() < 2) continue;
      std::vector<int64_t> first = choices.front();
      add_knob(*space, name, knob.name.c_str(), std::move(choices), std::move(first));
    }
    sch = std::move(attempt);
    return *space;
  } catch (const InternalError&) {
    throw;  // a bug, not a refusal
  } catch (const Error&) {
    return {};  // the default rule is refused: the block keeps its loops and has no knobs
  }
}

void apply_block_rule(Schedule& sch, const std::string& name, const Decisions& point,
                      const Target& target) {
  Schedule attempt = sch;
  try {
    BlockRef block = attempt.get_block(name);
    LoopRoles roles = schedule::loop_roles(attempt, block, attempt.get_loops(block));
    if (roles.mixed) return;
    if (has_knob(point, name, "conv_tile")) {
      const std::vector<int64_t>& tile = value_of(point, name, "conv_tile");
      schedule::schedule_blocked_conv(attempt, block, roles, target,
                                      {tile.at(0), tile.at(1), tile.size() > 2 ? tile.at(2) : 0});
    } else if (has_knob(point, name, "tile_j")) {
      schedule_gemm_point(attempt, block, roles, name, point);
    } else if (has_knob(point, name, "inner")) {
      bool inner = value_of(point, name, "inner").at(0) == 1;
      bool parallel = value_of(point, name, "parallel").at(0) == 1;
      if (value_of(point, name, "rows").at(0) == 1) {
        schedule::schedule_row_reduction(attempt, block, roles, schedule::vector_lanes(target),
                                         parallel);
      } else {
        schedule::schedule_reduction(attempt, block, roles, inner,
                                     schedule::vector_lanes(target), parallel);
      }
    } else if (has_knob(point, name, "vector")) {
      int64_t vector = value_of(point, name, "vector").at(0);
      bool parallel = value_of(point, name, "parallel").at(0) == 1;
      const int64_t lanes = schedule::vector_lanes(target);
      const schedule::SpatialForm form = schedule::spatial_form(attempt, block, roles, lanes);
      if (form.transposed && has_knob(point, name, "transposed") &&
          value_of(point, name, "transposed").at(0) == 1 && vector == lanes) {
        schedule::schedule_transposed_copy(attempt, form.roles, *form.transposed, lanes,
                                           parallel);
      } else {
        schedule::schedule_elementwise(attempt, form.roles, vector, parallel);
      }
    } else {
      return;
    }
    for (const KnobRule& knob : registered_knobs()) {
      if (has_knob(point, name, knob.name.c_str())) {
        knob.apply(attempt, name, value_of(point, name, knob.name.c_str()), target);
      }
    }
    sch = std::move(attempt);
  } catch (const InternalError&) {
    throw;  // a bug, not a refusal
  } catch (const Error&) {
    // The primitives refuse these values for this block: it keeps the loops it had.
  }
}

std::string constraint_violation(const std::vector<Knob>& knobs, const Decisions& point,
                                 const Target& target) {
  const std::string suffix = ".tile_j";
  for (const Knob& knob : knobs) {
    if (!knob.name.ends_with(suffix)) continue;
    std::string block = knob.name.substr(0, knob.name.size() - suffix.size());
    std::string reason = gemm_violation(knobs, block, point, target);
    if (!reason.empty()) return reason;
  }
  return "";
}

}  // namespace minic::autotune
