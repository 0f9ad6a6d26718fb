// Exercise m5-unroll-knob, solved: the knob "unroll". Course module 5.
//
// For each block a rule of the search space schedules, the knob chooses how far to unroll
// one loop: the block's innermost loop, or the one just outside it when the innermost is
// vectorised; serial, of a constant extent above 1. Its values are 1 (the default: not
// unrolled) and the factors 2, 4 and 8 that divide the loop's extent. A factor f splits
// the loop by f and unrolls the inner part.
//
// Chapter: docs/module5-autotuning.md#2-the-search-space
#include "minic/autotune/knob_registry.h"
#include "minic/schedule/block_roles.h"
#include "minic/support/error.h"

#include <optional>

namespace minic::autotune {
namespace {

using schedule::LoopRef;
using schedule::Schedule;

// The loop the knob unrolls, or none.
std::optional<LoopRef> loop_to_unroll(Schedule& sch, const std::string& block) {
  std::vector<LoopRef> loops = sch.get_loops(sch.get_block(block));
  if (loops.empty()) return std::nullopt;
  size_t at = loops.size() - 1;
  if (schedule::kind_of(sch, loops[at]) == loop::ForKind::vectorized) {
    if (at == 0) return std::nullopt;
    --at;
  }
  if (schedule::kind_of(sch, loops[at]) != loop::ForKind::serial) return std::nullopt;
  if (schedule::extent_of(sch, loops[at]) < 2) return std::nullopt;
  return loops[at];
}

std::vector<std::vector<int64_t>> offer_unroll(Schedule sch, const std::string& block,
                                               const Target&) {
  std::optional<LoopRef> loop = loop_to_unroll(sch, block);
  if (!loop) return {};
  const int64_t extent = schedule::extent_of(sch, *loop);
  std::vector<std::vector<int64_t>> values = {{1}};
  for (int64_t factor : {2, 4, 8}) {
    if (extent % factor == 0) values.push_back({factor});
  }
  return values;
}

void apply_unroll(Schedule& sch, const std::string& block, const std::vector<int64_t>& value,
                  const Target&) {
  const int64_t factor = value.at(0);
  if (factor == 1) return;
  std::optional<LoopRef> loop = loop_to_unroll(sch, block);
  if (!loop) fail("unroll: block {} has no loop the knob unrolls", block);
  std::vector<LoopRef> parts = sch.split(*loop, {-1, factor});
  sch.unroll(parts[1]);
}

}  // namespace

MINIC_REGISTER_KNOB("unroll", offer_unroll, apply_unroll,
                    "exercise m5-unroll-knob: unroll the innermost serial loop by 1, 2, 4 or 8");

}  // namespace minic::autotune
