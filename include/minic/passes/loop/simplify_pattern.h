// Patterns over loop IR expressions and the simplifier's rules made of them: what `x + 0`,
// `floordiv(x * c1 + y, c1)` mean in src/passes/loop/simplify_rules.cpp, how a pattern
// matches an expression and how a replacement is built from a match, and how rules written
// outside that table join it. Course module 4.
//
// A pattern is a tree of operator nodes whose leaves are names or numbers: `x`, `y`, `z`
// match any expression and `c1`, `c2`, `c3` immediates only; a name used twice must match
// equal trees (pass_util::equal_exprs); a number matches an immediate of that value (for
// floats, of that value and sign: 0 does not match -0.0); `true_` and `false_` match the
// boolean immediates. The C++ operators and the functions floordiv, floormod, min, max
// and select build patterns, so a pattern is written as the expression it matches.
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#pragma once

#include "minic/ir/loop/analysis.h"

#include <array>
#include <functional>
#include <vector>

namespace minic::loop::simplify_rules {

inline constexpr int kSlotCount = 6;  // x, y, z, c1, c2, c3

struct Pattern {
  enum class Form : uint8_t { any, immediate, number, boolean, node };
  Form form = Form::number;
  int slot = 0;          // any, immediate: which name
  int64_t number = 0;    // number, boolean: the value
  ExprKind kind = ExprKind::IntImm;  // node: the operator
  std::vector<Pattern> operands;     // node: its operands

  // A number in a pattern: `x + 0`.
  Pattern(int64_t value) : number(value) {}  // NOLINT: implicit on purpose, for the table
  Pattern(Form form, int slot, int64_t number = 0) : form(form), slot(slot), number(number) {}
  Pattern(ExprKind kind, std::vector<Pattern> operands)
      : form(Form::node), kind(kind), operands(std::move(operands)) {}

  bool is_literal() const { return form == Form::number || form == Form::boolean; }
};

inline const Pattern x(Pattern::Form::any, 0);
inline const Pattern y(Pattern::Form::any, 1);
inline const Pattern z(Pattern::Form::any, 2);
inline const Pattern c1(Pattern::Form::immediate, 3);
inline const Pattern c2(Pattern::Form::immediate, 4);
inline const Pattern c3(Pattern::Form::immediate, 5);
inline const Pattern true_(Pattern::Form::boolean, 0, 1);
inline const Pattern false_(Pattern::Form::boolean, 0, 0);

inline Pattern operator+(Pattern a, Pattern b) { return {ExprKind::Add, {a, b}}; }
inline Pattern operator-(Pattern a, Pattern b) { return {ExprKind::Sub, {a, b}}; }
inline Pattern operator*(Pattern a, Pattern b) { return {ExprKind::Mul, {a, b}}; }
inline Pattern operator/(Pattern a, Pattern b) { return {ExprKind::Div, {a, b}}; }
inline Pattern operator%(Pattern a, Pattern b) { return {ExprKind::Mod, {a, b}}; }
inline Pattern operator==(Pattern a, Pattern b) { return {ExprKind::EQ, {a, b}}; }
inline Pattern operator!=(Pattern a, Pattern b) { return {ExprKind::NE, {a, b}}; }
inline Pattern operator<(Pattern a, Pattern b) { return {ExprKind::LT, {a, b}}; }
inline Pattern operator<=(Pattern a, Pattern b) { return {ExprKind::LE, {a, b}}; }
inline Pattern operator>(Pattern a, Pattern b) { return {ExprKind::GT, {a, b}}; }
inline Pattern operator>=(Pattern a, Pattern b) { return {ExprKind::GE, {a, b}}; }
inline Pattern operator&&(Pattern a, Pattern b) { return {ExprKind::And, {a, b}}; }
inline Pattern operator||(Pattern a, Pattern b) { return {ExprKind::Or, {a, b}}; }
inline Pattern operator!(Pattern a) { return {ExprKind::Not, {a}}; }
inline Pattern floordiv(Pattern a, Pattern b) { return {ExprKind::FloorDiv, {a, b}}; }
inline Pattern floormod(Pattern a, Pattern b) { return {ExprKind::FloorMod, {a, b}}; }
inline Pattern min(Pattern a, Pattern b) { return {ExprKind::Min, {a, b}}; }
inline Pattern max(Pattern a, Pattern b) { return {ExprKind::Max, {a, b}}; }
inline Pattern select(Pattern c, Pattern a, Pattern b) { return {ExprKind::Select, {c, a, b}}; }

// What a pattern matched: the expression of each name, and where.
struct Match {
  std::array<Expr, kSlotCount> slots;
  Expr root;
  const VarBounds* bounds = nullptr;

  const Expr& operator[](const Pattern& name) const { return slots[name.slot]; }
  int64_t value(const Pattern& constant) const {
    return as_const_int(slots[constant.slot]).value_or(0);
  }
  IntBound bound(const Pattern& name) const { return bound_of(slots[name.slot], *bounds); }
};

// Matches `pattern` against `expr`, recording what each name matched in `m` (whose root
// and bounds the caller sets). On failure `m` holds partial results: use a fresh one.
bool match(const Pattern& pattern, const Expr& expr, Match& m);

// The replacement `pattern` for a match. A number takes the type of an operand beside it
// that is not a number (for a select, the other value), or `type` at the root.
Expr build(const Pattern& pattern, const Match& m, DataType type);

// --- rules ------------------------------------------------------------------------------------

// To which types a rule applies, judged by the matched node's first operand (a select's
// values): index, scalar i64 (ring algebra and the bounds of the variables; index
// arithmetic does not overflow); logic, scalar bool; exact, any type, floats included, so
// the rule must hold exactly in IEEE arithmetic.
enum class Domain : uint8_t { index, logic, exact };

// A condition on what a pattern matched (simplify_rules.cpp has positive(c1),
// in_range(x, c1), at_most(x, y), ...).
using Condition = std::function<bool(const Match&)>;

// `before` rewritten to `after` where its domain holds and, if it has one, its condition.
struct Rule {
  Domain domain;
  Pattern before;
  Pattern after;
  Condition when = nullptr;
};

// What MINIC_REGISTER_SIMPLIFY_RULES makes: an object that adds the rules `rules()`
// returns to the simplifier when it is built. They are tried after the table's, in the
// order they were registered, so a rule of the table that matches first wins.
struct RegisterSimplifyRules {
  explicit RegisterSimplifyRules(std::vector<Rule> (*rules)());
};

// Every registered rule, in order.
const std::vector<Rule>& registered_rules();

}  // namespace minic::loop::simplify_rules

#define MINIC_SIMPLIFY_RULES_CONCAT_INNER(a, b) a##b
#define MINIC_SIMPLIFY_RULES_CONCAT(a, b) MINIC_SIMPLIFY_RULES_CONCAT_INNER(a, b)

// Registers the rules the function `rules` (std::vector<Rule>()) returns, from any file
// linked into minic, as an exercise's file does (exercises/m4-min-max-rules).
#define MINIC_REGISTER_SIMPLIFY_RULES(rules)                                   \
  static const ::minic::loop::simplify_rules::RegisterSimplifyRules            \
      MINIC_SIMPLIFY_RULES_CONCAT(minic_simplify_rules_, __LINE__)(rules)
