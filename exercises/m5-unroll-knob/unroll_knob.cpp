// Exercise m5-unroll-knob: the knob "unroll". Course module 5.
//
// exercises/m5-unroll-knob/README.md gives the task; this file is where it is done. The
// knob is registered already (the last line), so every search space asks offer_unroll
// for its values: as given, it offers none, no block has the knob, and the exercise's
// tests fail.
//
// Chapter: docs/module5-autotuning.md#2-the-search-space
#include "minic/autotune/knob_registry.h"
#include "minic/schedule/block_roles.h"
#include "minic/support/error.h"

namespace minic::autotune {
namespace {

using schedule::Schedule;

// The knob's values for `block`, the default (1: not unrolled) first; none: no knob.
std::vector<std::vector<int64_t>> offer_unroll(Schedule sch, const std::string& block,
                                               const Target& target) {
  (void)sch;
  (void)block;
  (void)target;
  return {};
}

// Unrolls the block's loop by the factor `value[0]`.
void apply_unroll(Schedule& sch, const std::string& block, const std::vector<int64_t>& value,
                  const Target& target) {
  (void)sch;
  (void)block;
  (void)value;
  (void)target;
}

}  // namespace

MINIC_REGISTER_KNOB("unroll", offer_unroll, apply_unroll,
                    "exercise m5-unroll-knob: unroll the innermost serial loop by 1, 2, 4 or 8");

}  // namespace minic::autotune
