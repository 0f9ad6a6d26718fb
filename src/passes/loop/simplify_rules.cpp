// The simplifier's rule table: algebra written one rule a line. Course module 4.
//
// A rule reads like the algebra it states:
//
//   {index, (x * c1) * c2,  x * (c1 * c2)},
//   {index, floormod(x, c1), x,  positive(c1) && in_range(x, c1)},
//
// that is: a domain, a pattern, its replacement, and optionally a condition. Patterns are
// written as the expressions they match (include/minic/passes/loop/simplify_pattern.h):
// `x`, `y`, `z` match any expression and `c1`, `c2`, `c3` immediates only; a name used
// twice must match equal trees; a number matches an immediate of that value (for floats,
// of that value and sign); `true_` and `false_` match the boolean immediates. In a
// replacement, the names stand for what they matched and a number becomes an immediate of
// the type of the operand beside it. A replacement may contain operators on immediates,
// `c1 * c2`: the simplifier folds them after the rewrite (simplify_fold.cpp), since it
// simplifies every replacement again.
//
// The domain says to which types a rule applies, judged by the matched node's first operand
// (the value operands of a select):
//   - index: scalar i64, the type of loop and index arithmetic. These rules use ring
//     algebra and the bounds of the variables, and assume index arithmetic does not
//     overflow.
//   - logic: scalar bool.
//   - exact: any type, floats included, so the rule must hold exactly in IEEE arithmetic,
//     NaN, infinities and the sign of zero included (x * 1 → x holds; x + 0 → x does not
//     for x = -0.0, and x * 0 → 0 does not for NaN).
//
// Conditions ask about the matched immediates (positive(c1), divides(c2, c1)) or about the
// range of a matched expression under the bounds of the variables (in_range(x, c1): 0 <= x
// < c1; at_most(x, y): x <= y whatever the variables are). Ranges come from bound_of
// (minic/ir/loop/analysis.h); a difference x - y is simplified before its range is taken,
// so that `i < i + 1` is decided although bound_of(i) knows nothing of i.
//
// One rewrite is code, not a line of the table: split_by_divisor, a floordiv or floormod of
// a sum whose terms come in any order (the table's patterns fix the shape of a sum), tried
// after the table.
//
// Rules are tried in order and the first that matches wins, so the specific come before the
// general (`(x + c1) + c2` before `(x + c1) + y`). Every rule makes the expression smaller
// or moves immediates right and outward, so rewriting ends; the walk in simplify.cpp also
// stops a node after a fixed number of rewrites, as a second guarantee.
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#include "simplify_rules.h"

#include "pass_util.h"
#include "minic/passes/loop/simplify.h"
#include "minic/passes/loop/simplify_pattern.h"

#include <algorithm>
#include <array>
#include <functional>
#include <numeric>

namespace minic::loop::simplify_rules {
namespace {

// --- conditions -----------------------------------------------------------------------------

Condition operator&&(Condition a, Condition b) {
  return [a, b](const Match& m) { return a(m) && b(m); };
}

Condition positive(Pattern c) {
  return [c](const Match& m) { return m.value(c) > 0; };
}

// c < 0, and -c is an i64 too.
Condition negative(Pattern c) {
  return [c](const Match& m) { return m.value(c) < 0 && m.value(c) != IntBound::kNegInf; };
}

// d divides n (d != 0).
Condition divides(Pattern d, Pattern n) {
  return [d, n](const Match& m) { return m.value(d) != 0 && m.value(n) % m.value(d) == 0; };
}

// p == a * b: a number's digits put back together (floordiv(x, 17) * 68 + floormod(x, 17) * 4
// is x * 4).
Condition product_of(Pattern p, Pattern a, Pattern b) {
  return [p, a, b](const Match& m) { return m.value(p) == m.value(a) * m.value(b); };
}

Condition non_negative(Pattern e) {
  return [e](const Match& m) { return m.bound(e).min >= 0; };
}

// 0 <= e < c for every value of the variables.
Condition in_range(Pattern e, Pattern c) {
  return [e, c](const Match& m) {
    IntBound range = m.bound(e);
    return range.min >= 0 && range.max < m.value(c);
  };
}

// floordiv(e, c) is one value for every value of the variables: e stays within one run
// of c integers, [q * c, q * c + c).
Condition one_quotient(Pattern e, Pattern c) {
  return [e, c](const Match& m) {
    IntBound range = m.bound(e);
    const int64_t divisor = m.value(c);
    return range.is_bounded() && floor_div(range.min, divisor) == floor_div(range.max, divisor);
  };
}

// True if `e` is a multiple of d for every value of its variables: an immediate multiple,
// a product with such a factor, a sum or difference of such.
bool is_multiple(const Expr& e, int64_t d) {
  if (std::optional<int64_t> value = as_const_int(e)) return *value % d == 0;
  if (const Mul* mul = e.as<Mul>()) return is_multiple(mul->a, d) || is_multiple(mul->b, d);
  if (const Add* add = e.as<Add>()) return is_multiple(add->a, d) && is_multiple(add->b, d);
  if (const Sub* sub = e.as<Sub>()) return is_multiple(sub->a, d) && is_multiple(sub->b, d);
  return false;
}

// 0 <= a + b < c for every value of the variables.
Condition sum_in_range(Pattern a, Pattern b, Pattern c) {
  return [a, b, c](const Match& m) {
    IntBound range = bound_of(Add::make(m[a], m[b]), *m.bounds);
    return range.min >= 0 && range.max < m.value(c);
  };
}

Condition multiple_of(Pattern e, Pattern c) {
  return [e, c](const Match& m) { return m.value(c) > 0 && is_multiple(m[e], m.value(c)); };
}

// True if `sum` is `term`, or a sum (a + b, a - b) whose first operand, or a sum whose
// second operand, holds it added: (i + j) + k holds i, j and k; i - j holds i.
bool holds_term(const Expr& sum, const Expr& term) {
  if (pass_util::equal_exprs(sum, term)) return true;
  if (const Add* add = sum.as<Add>()) return holds_term(add->a, term) || holds_term(add->b, term);
  if (const Sub* sub = sum.as<Sub>()) return holds_term(sub->a, term);
  return false;
}

Condition holds(Pattern sum, Pattern term) {
  return [sum, term](const Match& m) { return holds_term(m[sum], m[term]); };
}

// The range of a - b: from their ranges, narrowed by that of their simplified difference
// (which sees that i - i is 0).
IntBound difference(const Expr& a, const Expr& b, const VarBounds& bounds) {
  IntBound plain = bound_of(Sub::make(a, b), bounds);
  if (plain.is_single()) return plain;
  IntBound simplified = bound_of(simplify_expr(Sub::make(a, b), bounds), bounds);
  return {std::max(plain.min, simplified.min), std::min(plain.max, simplified.max)};
}

// a <= b for every value of the variables.
Condition at_most(Pattern a, Pattern b) {
  return [a, b](const Match& m) { return difference(m[a], m[b], *m.bounds).max <= 0; };
}

// Whether the matched comparison (the root) holds for every value of the variables, for
// none, or neither; from the range of its left side minus its right side.
std::optional<bool> decide(const Match& m) {
  std::vector<Expr> sides = pass_util::operands_of(m.root);
  IntBound d = difference(sides[0], sides[1], *m.bounds);
  auto answer = [](bool always, bool never) {
    return always ? std::optional(true) : never ? std::optional(false) : std::nullopt;
  };
  switch (m.root.kind()) {
    case ExprKind::LT: return answer(d.max < 0, d.min >= 0);
    case ExprKind::LE: return answer(d.max <= 0, d.min > 0);
    case ExprKind::GT: return answer(d.min > 0, d.max <= 0);
    case ExprKind::GE: return answer(d.min >= 0, d.max < 0);
    case ExprKind::EQ: return answer(d.is_single() && d.min == 0, d.min > 0 || d.max < 0);
    case ExprKind::NE: return answer(d.min > 0 || d.max < 0, d.is_single() && d.min == 0);
    default: return std::nullopt;
  }
}

const Condition always = [](const Match& m) { return decide(m) == std::optional(true); };
const Condition never = [](const Match& m) { return decide(m) == std::optional(false); };

// The operands of the comparison under a Not are i64 (NaN makes !(a < b) differ from
// b <= a for floats).
const Condition integers = [](const Match& m) {
  return m[x].type() == DataType::int64();
};

// --- the table ------------------------------------------------------------------------------

using enum Domain;

// size: table (one rule a line; scripts/size_report.py exempts it)
const std::vector<Rule>& rule_table() {
  static const std::vector<Rule> rules = {
      // Immediates to the right (the rules below look for them there).
      {exact, c1 + x, x + c1},
      {exact, c1 * x, x * c1},
      {index, min(c1, x), min(x, c1)},
      {index, max(c1, x), max(x, c1)},
      {exact, c1 == x, x == c1},
      {exact, c1 != x, x != c1},
      {exact, c1 < x, x > c1},
      {exact, c1 <= x, x >= c1},
      {exact, c1 > x, x < c1},
      {exact, c1 >= x, x <= c1},

      // Identities.
      {index, x + 0, x},
      {exact, x - 0, x},
      {exact, x * 1, x},
      {index, x * 0, 0},
      {exact, x / 1, x},
      {index, x % 1, 0},
      {index, floordiv(x, 1), x},
      {index, floormod(x, 1), 0},
      {index, x - x, 0},

      // Immediates gathered and moved outward: (i + 1) + j → (i + j) + 1.
      {index, (x + c1) + c2, x + (c1 + c2)},
      {index, (x - c1) + c2, x + (c2 - c1)},
      {index, (x + c1) - c2, x + (c1 - c2)},
      {index, (x - c1) - c2, x - (c1 + c2)},
      {index, x + c1, x - (0 - c1), negative(c1)},
      {index, x - c1, x + (0 - c1), negative(c1)},
      {index, (x + c1) + y, (x + y) + c1},
      {index, (x - c1) + y, (x + y) - c1},
      {index, x + (y + c1), (x + y) + c1},
      {index, x + (y - c1), (x + y) - c1},
      {index, (x + c1) - y, (x - y) + c1},
      {index, (x - c1) - y, (x - y) - c1},
      {index, x - (y + c1), (x - y) - c1},
      {index, x - (y - c1), (x - y) + c1},
      {index, x + (y + z), (x + y) + z},
      {index, (x * c1) * c2, x * (c1 * c2)},
      {index, (x * c1) * y, (x * y) * c1},
      {index, x * (y * c1), (x * y) * c1},
      {index, (x + c1) * c2, x * c2 + c1 * c2},
      {index, (x - c1) * c2, x * c2 - c1 * c2},
      {index, (x + y) * c1, x * c1 + y * c1},
      {index, (x - y) * c1, x * c1 - y * c1},

      // Like terms.
      {index, x * c1 + x * c2, x * (c1 + c2)},
      {index, x * c1 - x * c2, x * (c1 - c2)},
      {index, x * c1 + x, x * (c1 + 1)},
      {index, x + x * c1, x * (c1 + 1)},
      {index, x * c1 - x, x * (c1 - 1)},
      {index, x + x, x * 2},
      {index, (x + y) - x, y},
      {index, (x + y) - y, x},
      {index, (x - y) + y, x},
      {index, x - (x + y), 0 - y},
      {index, (x + y) - (x + z), y - z},
      {index, (x + y) - (z + y), x - z},
      {index, (x + y) - z, (x - z) + y, holds(x, z)},  // (i + j + k) - i → j + k
      {index, (x + y) - z, x + (y - z), holds(y, z)},

      // Division and remainder. Truncating ones of a value >= 0 round like floor ones.
      {index, x / c1, floordiv(x, c1), positive(c1) && non_negative(x)},
      {index, x % c1, floormod(x, c1), positive(c1) && non_negative(x)},
      {index, floordiv(x * c1, c2), x * (c1 / c2), positive(c2) && divides(c2, c1)},
      {index, floordiv(x * c1, c2), floordiv(x, c2 / c1), positive(c1) && divides(c1, c2)},
      {index, floordiv(x + y, c1), floordiv(x, c1) + floordiv(y, c1), multiple_of(x, c1)},
      {index, floordiv(x + y, c1), floordiv(x, c1) + floordiv(y, c1), multiple_of(y, c1)},
      {index, floordiv((x + y) + z, c1), floordiv(x, c1) + floordiv(y + z, c1),
       multiple_of(x, c1)},  // a flattened index: (i * 3136 + j * 56) + k
      // A whole number of c1-sized steps plus less than one step, over c2 = n * c1 steps:
      // (i * 3136 + r) / 12544 is i / 4 while 0 <= r < 3136.
      {index, floordiv(x * c1 + y, c2), floordiv(x, c2 / c1),
       positive(c1) && divides(c1, c2) && in_range(y, c1)},
      {index, floordiv((x * c1 + y) + z, c2), floordiv(x, c2 / c1),
       positive(c1) && divides(c1, c2) && sum_in_range(y, z, c1)},
      {index, floordiv(floordiv(x, c1), c2), floordiv(x, c1 * c2), positive(c1) && positive(c2)},
      {index, floordiv(x, c1), 0, positive(c1) && in_range(x, c1)},
      {index, floormod(x, c1), 0, multiple_of(x, c1)},
      {index, floormod(x + y, c1), floormod(y, c1), multiple_of(x, c1)},
      {index, floormod(x + y, c1), floormod(x, c1), multiple_of(y, c1)},
      {index, floormod((x + y) + z, c1), floormod(y + z, c1), multiple_of(x, c1)},
      {index, floormod(x * c1 + y, c2), floormod(x, c2 / c1) * c1 + y,
       positive(c1) && divides(c1, c2) && in_range(y, c1)},
      {index, floormod((x * c1 + y) + z, c2), floormod(x, c2 / c1) * c1 + (y + z),
       positive(c1) && divides(c1, c2) && sum_in_range(y, z, c1)},
      {index, floormod(floormod(x, c1), c2), floormod(x, c2), positive(c2) && divides(c2, c1)},
      {index, floormod(x, c1), x, positive(c1) && in_range(x, c1)},
      {index, floormod(x, c1), x - floordiv(x, c1) * c1, positive(c1) && one_quotient(x, c1)},
      {index, floordiv(x, c1) * c1 + floormod(x, c1), x, positive(c1)},
      {index, floormod(x, c1) + floordiv(x, c1) * c1, x, positive(c1)},
      {index, (y + floordiv(x, c1) * c1) + floormod(x, c1), y + x, positive(c1)},
      {index, (y + floormod(x, c1)) + floordiv(x, c1) * c1, y + x, positive(c1)},
      {index, floordiv(x, c1) * c2 + floormod(x, c1) * c3, x * c3,
       positive(c1) && product_of(c2, c1, c3)},
      {index, floordiv(x, c1) * c2 + (floormod(x, c1) * c3 + y), x * c3 + y,
       positive(c1) && product_of(c2, c1, c3)},
      {index, (y + floordiv(x, c1) * c2) + floormod(x, c1) * c3, y + x * c3,
       positive(c1) && product_of(c2, c1, c3)},

      // Min and max.
      {exact, min(x, x), x},
      {exact, max(x, x), x},
      {index, min(min(x, c1), c2), min(x, min(c1, c2))},
      {index, max(max(x, c1), c2), max(x, max(c1, c2))},
      {index, min(x, y), x, at_most(x, y)},
      {index, min(x, y), y, at_most(y, x)},
      {index, max(x, y), y, at_most(x, y)},
      {index, max(x, y), x, at_most(y, x)},

      // Comparisons the bounds decide, and immediates moved to one side.
      {index, x < y, true_, always},
      {index, x < y, false_, never},
      {index, x <= y, true_, always},
      {index, x <= y, false_, never},
      {index, x > y, true_, always},
      {index, x > y, false_, never},
      {index, x >= y, true_, always},
      {index, x >= y, false_, never},
      {index, x == y, true_, always},
      {index, x == y, false_, never},
      {index, x != y, true_, always},
      {index, x != y, false_, never},
      {index, x + c1 < c2, x < c2 - c1},
      {index, x + c1 <= c2, x <= c2 - c1},
      {index, x + c1 > c2, x > c2 - c1},
      {index, x + c1 >= c2, x >= c2 - c1},
      {index, x + c1 == c2, x == c2 - c1},
      {index, x + c1 != c2, x != c2 - c1},
      {index, x - c1 < c2, x < c2 + c1},
      {index, x - c1 <= c2, x <= c2 + c1},
      {index, x - c1 > c2, x > c2 + c1},
      {index, x - c1 >= c2, x >= c2 + c1},
      {index, x - c1 == c2, x == c2 + c1},
      {index, x - c1 != c2, x != c2 + c1},

      // Logic.
      {logic, x && true_, x},
      {logic, x && false_, false_},
      {logic, true_ && x, x},
      {logic, false_ && x, false_},
      {logic, x || true_, true_},
      {logic, x || false_, x},
      {logic, true_ || x, true_},
      {logic, false_ || x, x},
      {logic, x && x, x},
      {logic, x || x, x},
      {logic, !!x, x},
      {logic, !(x < y), y <= x, integers},
      {logic, !(x <= y), y < x, integers},
      {logic, !(x > y), x <= y, integers},
      {logic, !(x >= y), x < y, integers},
      {logic, !(x == y), x != y, integers},
      {logic, !(x != y), x == y, integers},

      // Selects.
      {exact, select(true_, x, y), x},
      {exact, select(false_, x, y), y},
      {exact, select(z, x, x), x},
  };
  return rules;
}

// The rules by the kind of their pattern's root, so a node tries only the rules that can
// match it: the table's, then those registered from elsewhere (simplify_pattern.h).
const std::vector<const Rule*>& rules_for(ExprKind kind) {
  static const auto by_kind = [] {
    std::vector<std::vector<const Rule*>> table(static_cast<size_t>(ExprKind::Broadcast) + 1);
    for (const auto* rules : {&rule_table(), &registered_rules()}) {
      for (const Rule& rule : *rules) {
        table[static_cast<size_t>(rule.before.kind)].push_back(&rule);
      }
    }
    return table;
  }();
  return by_kind[static_cast<size_t>(kind)];
}

// --- matching and building ------------------------------------------------------------------

bool in_domain(Domain domain, const Expr& root) {
  // A Select's domain is that of its values; every other operator's, its first operand's.
  DataType type = pass_util::operand_of(root, root.kind() == ExprKind::Select ? 1 : 0).type();
  switch (domain) {
    case index: return type == DataType::int64();
    case logic: return type == DataType::boolean();
    case exact: return true;
  }
  return false;
}

// The terms of a sum, in order: (a + b) + c gives a, b, c.
void add_terms(const Expr& expr, std::vector<Expr>& terms) {
  if (const Add* add = expr.as<Add>()) {
    add_terms(add->a, terms);
    add_terms(add->b, terms);
  } else {
    terms.push_back(expr);
  }
}

// The constant factor of a term: k of x * k, the value of an immediate, else 1.
int64_t factor_of(const Expr& term) {
  if (std::optional<int64_t> value = as_const_int(term)) return *value;
  if (const Mul* mul = term.as<Mul>()) {
    if (std::optional<int64_t> k = as_const_int(mul->b)) return *k;
  }
  return 1;
}

// term / d, for a term whose factor d divides.
Expr divided(const Expr& term, int64_t d) {
  if (std::optional<int64_t> value = as_const_int(term)) return IntImm::make(*value / d);
  const Mul* mul = term.as<Mul>();
  int64_t k = *as_const_int(mul->b) / d;
  return k == 1 ? mul->a : Mul::make(mul->a, IntImm::make(k));
}

Expr sum_of(const std::vector<Expr>& terms) {
  Expr sum = terms.front();
  for (size_t t = 1; t < terms.size(); ++t) sum = Add::make(sum, terms[t]);
  return sum;
}

// floordiv(s, c) and floormod(s, c) of a sum s, whatever the order of its terms: if the
// terms other than a remainder r with 0 <= r < d are multiples of a d that divides c,
//   floordiv(s, c) = floordiv(q, c / d)   and   floormod(s, c) = floormod(q, c / d) * d + r
// with q = (s - r) / d. A flattened index split back into its parts does this:
// floordiv(i * 50176 + l * 3136 + j * 56 + k, 12544) = floordiv(i * 16 + l, 4), for
// j * 56 + k < 3136. The table's rules match sums of one shape; this takes any order.
Expr split_by_divisor(const Expr& expr, const VarBounds& bounds) {
  const bool is_div = expr.kind() == ExprKind::FloorDiv;
  if (expr.type() != DataType::int64() || (!is_div && expr.kind() != ExprKind::FloorMod)) {
    return {};
  }
  std::vector<Expr> operands = pass_util::operands_of(expr);
  std::optional<int64_t> c = as_const_int(operands[1]);
  std::vector<Expr> terms;
  add_terms(operands[0], terms);
  if (!c || *c <= 1 || terms.size() < 2) return {};
  // Candidate steps d, largest first: the common part of c and each term's factor.
  std::vector<int64_t> steps;
  for (const Expr& term : terms) {
    int64_t d = std::gcd(factor_of(term), *c);
    if (d > 1) steps.push_back(d);
  }
  std::sort(steps.rbegin(), steps.rend());
  for (int64_t d : steps) {
    std::vector<Expr> whole;
    std::vector<Expr> rest;
    for (const Expr& term : terms) (factor_of(term) % d == 0 ? whole : rest).push_back(term);
    if (whole.empty()) continue;
    if (!rest.empty()) {
      IntBound range = bound_of(sum_of(rest), bounds);
      if (range.min < 0 || range.max >= d) continue;
    }
    std::vector<Expr> quotient_terms;
    for (const Expr& term : whole) quotient_terms.push_back(divided(term, d));
    Expr quotient = sum_of(quotient_terms);
    Expr steps_per_c = IntImm::make(*c / d);
    if (is_div) return *c == d ? quotient : FloorDiv::make(quotient, steps_per_c);
    Expr high = Mul::make(FloorMod::make(quotient, steps_per_c), IntImm::make(d));
    return rest.empty() ? high : Add::make(high, sum_of(rest));
  }
  return {};
}

}  // namespace

Expr rewrite_root(const Expr& expr, const VarBounds& bounds) {
  if (Expr folded = fold_constant(expr)) return folded;
  if (expr.type() == DataType::int64() && !expr.as<IntImm>()) {
    IntBound range = bound_of(expr, bounds);
    if (range.is_single()) return IntImm::make(range.min);
  }
  // One Match for every rule tried, its slots emptied before each: a node tries dozens of
  // rules, and a Match made for each would copy the root every time.
  Match m;
  m.root = expr;
  m.bounds = &bounds;
  for (const Rule* rule : rules_for(expr.kind())) {
    if (!in_domain(rule->domain, expr)) continue;
    m.slots.fill(Expr());
    if (!match(rule->before, expr, m)) continue;
    if (rule->when && !rule->when(m)) continue;
    return build(rule->after, m, expr.type());
  }
  return split_by_divisor(expr, bounds);
}

}  // namespace minic::loop::simplify_rules
