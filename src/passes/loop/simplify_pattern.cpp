// Matching patterns against expressions, building replacements, and the rules registered
// from outside the table. Course module 4 (patterns are described in
// include/minic/passes/loop/simplify_pattern.h).
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#include "minic/passes/loop/simplify_pattern.h"

#include "pass_util.h"

#include <cmath>

namespace minic::loop::simplify_rules {
namespace {

bool bind(int slot, const Expr& expr, Match& m) {
  if (!m.slots[slot]) {
    m.slots[slot] = expr;
    return true;
  }
  return pass_util::equal_exprs(m.slots[slot], expr);
}

Expr literal(const Pattern& pattern, DataType type) {
  if (pattern.form == Pattern::Form::boolean) {
    return IntImm::make(pattern.number, DataType::boolean());
  }
  if (is_float(type.dtype)) return FloatImm::make(static_cast<double>(pattern.number), type);
  return IntImm::make(pattern.number, type);
}

}  // namespace

bool match(const Pattern& pattern, const Expr& expr, Match& m) {
  switch (pattern.form) {
    case Pattern::Form::any: return bind(pattern.slot, expr, m);
    case Pattern::Form::immediate:
      return (expr.as<IntImm>() || expr.as<FloatImm>()) && bind(pattern.slot, expr, m);
    case Pattern::Form::number: {
      if (const FloatImm* imm = expr.as<FloatImm>()) {
        double value = static_cast<double>(pattern.number);
        return imm->value == value && std::signbit(imm->value) == std::signbit(value);
      }
      const IntImm* imm = expr.as<IntImm>();
      return imm && expr.type().dtype != DType::boolean && imm->value == pattern.number;
    }
    case Pattern::Form::boolean: {
      const IntImm* imm = expr.as<IntImm>();
      return imm && expr.type() == DataType::boolean() && imm->value == pattern.number;
    }
    case Pattern::Form::node: {
      if (expr.kind() != pattern.kind) return false;
      for (size_t i = 0; i < pattern.operands.size(); ++i) {
        if (!match(pattern.operands[i], pass_util::operand_of(expr, i), m)) return false;
      }
      return true;
    }
  }
  return false;
}

Expr build(const Pattern& pattern, const Match& m, DataType type) {
  if (pattern.is_literal()) return literal(pattern, type);
  if (pattern.form != Pattern::Form::node) return m[pattern];
  std::vector<Expr> operands(pattern.operands.size());
  DataType beside = type;
  size_t first_value = pattern.kind == ExprKind::Select ? 1 : 0;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (pattern.operands[i].is_literal()) continue;
    operands[i] = build(pattern.operands[i], m, type);
    if (i >= first_value) beside = operands[i].type();
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!operands[i]) operands[i] = literal(pattern.operands[i], beside);
  }
  return pass_util::make_operator(pattern.kind, operands);
}

// --- registered rules -----------------------------------------------------------------------

namespace {
// Registrations run while static objects are built, before main: the list of functions is
// built on first use, whichever file registers first, and the rules are made once, when
// the simplifier first asks for them.
std::vector<std::vector<Rule> (*)()>& rule_sources() {
  static std::vector<std::vector<Rule> (*)()> sources;
  return sources;
}
}  // namespace

RegisterSimplifyRules::RegisterSimplifyRules(std::vector<Rule> (*rules)()) {
  rule_sources().push_back(rules);
}

const std::vector<Rule>& registered_rules() {
  static const std::vector<Rule> rules = [] {
    std::vector<Rule> all;
    for (auto source : rule_sources()) {
      std::vector<Rule> some = source();
      all.insert(all.end(), some.begin(), some.end());
    }
    return all;
  }();
  return rules;
}

}  // namespace minic::loop::simplify_rules
