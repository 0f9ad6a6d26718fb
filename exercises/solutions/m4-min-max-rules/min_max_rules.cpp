// Exercise m4-min-max-rules, solved: simplifier rules for the min and max of two sums that
// share a term. Course module 4.
//
// A term both operands add comes out of the min or max; a term both subtract comes out
// too, but from the other side of the subtraction the order turns round:
//   min(a - b, a - c) = a - max(b, c).
// Index arithmetic only (the index domain): i64, where + and - are exact and do not overflow.
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#include "minic/passes/loop/simplify_pattern.h"

namespace minic::loop::simplify_rules {
namespace {

std::vector<Rule> min_max_rules() {
  return {
      {Domain::index, min(x + y, x + z), x + min(y, z)},
      {Domain::index, max(x + y, x + z), x + max(y, z)},
      {Domain::index, min(x + y, z + y), min(x, z) + y},
      {Domain::index, max(x + y, z + y), max(x, z) + y},
      {Domain::index, min(x - y, x - z), x - max(y, z)},
      {Domain::index, max(x - y, x - z), x - min(y, z)},
      {Domain::index, min(x - y, z - y), min(x, z) - y},
      {Domain::index, max(x - y, z - y), max(x, z) - y},
  };
}

}  // namespace

MINIC_REGISTER_SIMPLIFY_RULES(min_max_rules);

}  // namespace minic::loop::simplify_rules
