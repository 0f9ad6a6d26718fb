// Exercise m4-min-max-rules: simplifier rules for the min and max of two sums that share a
// term. Course module 4.
//
// exercises/m4-min-max-rules/README.md gives the task; this file is where it is done. The
// rules below are registered already (the last line), so the loop pass `simplify` tries
// them after its own table (src/passes/loop/simplify_rules.cpp): as given there are none,
// `min(i * 8 + j, i * 8 + t)` stays as it is, and the exercise's tests fail.
//
//   min(i * 8 + j, i * 8 + t)   →   i * 8 + min(j, t)
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#include "minic/passes/loop/simplify_pattern.h"

namespace minic::loop::simplify_rules {
namespace {

std::vector<Rule> min_max_rules() {
  return {
      // One rule a line, as in the table: {Domain::index, pattern, replacement}.
  };
}

}  // namespace

MINIC_REGISTER_SIMPLIFY_RULES(min_max_rules);

}  // namespace minic::loop::simplify_rules
