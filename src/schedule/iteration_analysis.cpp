// The dependence test of schedule primitives: can a loop's iterations run at once, or in
// another order? Course module 4. The method is described in iteration_analysis.h.
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#include "iteration_analysis.h"

#include "loop_tree.h"
#include "minic/ir/loop/access.h"
#include "minic/ir/loop/analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <unordered_set>

namespace minic::schedule {
namespace {

using loop::Block;
using loop::Expr;
using loop::For;
using loop::IntBound;
using loop::Stmt;
using loop::Var;

using loop::Access;

// The values of a loop's variable, from the ranges of the loops around it.
IntBound loop_range(const Expr& min_expr, const Expr& extent_expr, const loop::VarBounds& bounds) {
  IntBound min = loop::bound_of(min_expr, bounds);
  IntBound extent = loop::bound_of(extent_expr, bounds);
  if (!min.is_bounded() || !extent.is_bounded()) return IntBound::everything();
  return {min.min, min.max + std::max<int64_t>(extent.max - 1, 0)};
}

// Adds the ranges of the loops inside the loop (around some access) to `bounds`, outer
// loops first, and returns their variables. A variable reused by sibling loops gets a
// range that covers both.
std::unordered_set<const Var*> add_inner_ranges(const std::vector<Access>& accesses,
                                                loop::VarBounds& bounds) {
  std::unordered_set<const For*> seen;
  std::unordered_set<const Var*> inner_vars;
  for (const Access& access : accesses) {
    for (const loop::LoopAround& around : access.loops) {
      if (!seen.insert(around.loop).second) continue;
      const Var* var = around.loop->var.as<Var>();
      IntBound range = loop_range(around.min, around.extent, bounds);
      auto [it, inserted] = bounds.emplace(var, range);
      if (!inserted) {
        it->second = {std::min(it->second.min, range.min), std::max(it->second.max, range.max)};
      }
      inner_vars.insert(var);
    }
  }
  return inner_vars;
}

// --- linear forms ---------------------------------------------------------------------------

// Structural equality of index expressions (variables by identity).
bool same_value(const Expr& a, const Expr& b);

template <typename Node>
bool same_operands(const Expr& a, const Expr& b) {
  const Node* x = a.as<Node>();
  const Node* y = b.as<Node>();
  return x && y && same_value(x->a, y->a) && same_value(x->b, y->b);
}

bool same_value(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a || !b || a.kind() != b.kind() || !(a.type() == b.type())) return false;
  switch (a.kind()) {
    case loop::ExprKind::IntImm:
      return a.as<loop::IntImm>()->value == b.as<loop::IntImm>()->value;
    case loop::ExprKind::Add: return same_operands<loop::Add>(a, b);
    case loop::ExprKind::Sub: return same_operands<loop::Sub>(a, b);
    case loop::ExprKind::Mul: return same_operands<loop::Mul>(a, b);
    case loop::ExprKind::FloorDiv: return same_operands<loop::FloorDiv>(a, b);
    case loop::ExprKind::FloorMod: return same_operands<loop::FloorMod>(a, b);
    case loop::ExprKind::Min: return same_operands<loop::Min>(a, b);
    case loop::ExprKind::Max: return same_operands<loop::Max>(a, b);
    default: return false;
  }
}

// constant + sum of coefficient * term, each term a variable or a non-linear expression.
struct LinearForm {
  __int128 constant = 0;
  std::vector<std::pair<Expr, __int128>> terms;
};

void add_term(LinearForm& form, const Expr& term, __int128 coefficient) {
  for (auto& [existing, existing_coefficient] : form.terms) {
    if (same_value(existing, term)) {
      existing_coefficient += coefficient;
      return;
    }
  }
  form.terms.emplace_back(term, coefficient);
}

void accumulate(LinearForm& form, const Expr& expr, __int128 scale) {
  if (auto value = loop::as_const_int(expr)) {
    form.constant += scale * *value;
  } else if (const auto* add = expr.as<loop::Add>()) {
    accumulate(form, add->a, scale);
    accumulate(form, add->b, scale);
  } else if (const auto* sub = expr.as<loop::Sub>()) {
    accumulate(form, sub->a, scale);
    accumulate(form, sub->b, -scale);
  } else if (const auto* mul = expr.as<loop::Mul>(); mul && loop::as_const_int(mul->b)) {
    accumulate(form, mul->a, scale * *loop::as_const_int(mul->b));
  } else if (mul && loop::as_const_int(mul->a)) {
    accumulate(form, mul->b, scale * *loop::as_const_int(mul->a));
  } else {
    add_term(form, expr, scale);
  }
}

// The digit a term extracts: floordiv(x, m) is {x, m, none}, floormod(floordiv(x, m), n)
// is {x, m, n}; `ok` false for anything else.
struct Digit {
  bool ok = false;
  Expr x;
  int64_t divisor = 0;
  int64_t modulus = 0;  // 0: no modulus
};

Digit high_digit(const Expr& term) {
  const Expr* divided = &term;
  int64_t modulus = 0;
  if (const auto* mod = term.as<loop::FloorMod>()) {
    auto value = loop::as_const_int(mod->b);
    if (!value || *value <= 0) return {};
    modulus = *value;
    divided = &mod->a;
  }
  const auto* div = divided->as<loop::FloorDiv>();
  auto divisor = div ? loop::as_const_int(div->b) : std::nullopt;
  if (!divisor || *divisor <= 0) return {};
  return {true, div->a, *divisor, modulus};
}

// Replaces one pair a * high + b * floormod(x, m) (a == b * m) by b * x, or by
// b * floormod(x, n * m) for a high digit floormod(floordiv(x, m), n). False if none.
bool fold_one_digit(LinearForm& form) {
  for (size_t h = 0; h < form.terms.size(); ++h) {
    Digit digit = high_digit(form.terms[h].first);
    if (!digit.ok) continue;
    for (size_t l = 0; l < form.terms.size(); ++l) {
      const auto* low = form.terms[l].first.as<loop::FloorMod>();
      if (!low || loop::as_const_int(low->b) != digit.divisor || !same_value(low->a, digit.x) ||
          form.terms[h].second != form.terms[l].second * digit.divisor) {
        continue;
      }
      __int128 coefficient = form.terms[l].second;
      form.terms.erase(form.terms.begin() + static_cast<long>(std::max(h, l)));
      form.terms.erase(form.terms.begin() + static_cast<long>(std::min(h, l)));
      if (digit.modulus == 0) {
        accumulate(form, digit.x, coefficient);
      } else {
        Expr span = loop::IntImm::make(digit.modulus * digit.divisor);
        add_term(form, loop::FloorMod::make(digit.x, span), coefficient);
      }
      return true;
    }
  }
  return false;
}

// True for expressions of variables and constants only (no loads, no calls).
bool is_index_arithmetic(const Expr& expr);

template <typename Node>
bool operands_are_index_arithmetic(const Expr& expr) {
  const Node* node = expr.as<Node>();
  return node && is_index_arithmetic(node->a) && is_index_arithmetic(node->b);
}

bool is_index_arithmetic(const Expr& expr) {
  return expr.as<Var>() || loop::as_const_int(expr) ||
         operands_are_index_arithmetic<loop::Add>(expr) ||
         operands_are_index_arithmetic<loop::Sub>(expr) ||
         operands_are_index_arithmetic<loop::Mul>(expr) ||
         operands_are_index_arithmetic<loop::FloorDiv>(expr) ||
         operands_are_index_arithmetic<loop::FloorMod>(expr);
}

// --- the test -------------------------------------------------------------------------------

// An access's element offset as  loop_coefficient * L + outer + inner, where the inner
// part lies in [inner_min, inner_max]; `ok` false if the offset does not fit this form.
struct SplitOffset {
  bool ok = false;
  __int128 loop_coefficient = 0;
  LinearForm outer;
  __int128 inner_min = 0;
  __int128 inner_max = 0;
};

// The sum of weight * index over `weighted`, split by the loop.
SplitOffset split_offset(const std::vector<std::pair<Expr, __int128>>& weighted,
                         const Var* loop_var, const std::unordered_set<const Var*>& inner_vars,
                         const loop::VarBounds& bounds) {
  LinearForm form;
  for (const auto& [index, weight] : weighted) accumulate(form, index, weight);
  while (fold_one_digit(form)) {
  }
  SplitOffset result;
  result.inner_min = form.constant;
  result.inner_max = form.constant;
  auto is_inner = [&](const Var* var) { return inner_vars.count(var) > 0; };
  for (const auto& [term, coefficient] : form.terms) {
    if (coefficient == 0) continue;
    if (term.as<Var>() == loop_var) {
      result.loop_coefficient += coefficient;
      continue;
    }
    if (!is_index_arithmetic(term) || loop::uses_var(term, loop_var)) return {};
    if (!loop::uses_any_var(term, is_inner)) {
      add_term(result.outer, term, coefficient);
      continue;
    }
    IntBound range = loop::bound_of(term, bounds);
    if (!range.is_bounded()) return {};
    result.inner_min += coefficient * (coefficient > 0 ? range.min : range.max);
    result.inner_max += coefficient * (coefficient > 0 ? range.max : range.min);
  }
  result.ok = true;
  return result;
}

// The ways to look at one access: the row-major offset of each run of neighbouring
// indices within the block of elements they span, the whole offset first and each index
// alone among them. Two accesses whose offsets in one such run differ touch different
// elements; a run is needed where an index was split across two (the offset of
// [floordiv(x, 56), floormod(x, 56)] in a 56-wide row is x).
std::vector<SplitOffset> split_access(const Access& access, const Var* loop_var,
                                      const std::unordered_set<const Var*>& inner_vars,
                                      const loop::VarBounds& bounds) {
  const std::vector<int64_t>& shape = access.buffer->shape;
  std::vector<SplitOffset> views;
  const size_t rank = access.indices.size();
  if (rank != shape.size() && rank != 1) return views;
  for (size_t length = rank; length > 0; --length) {
    for (size_t first = 0; first + length <= rank; ++first) {
      std::vector<std::pair<Expr, __int128>> weighted;
      __int128 stride = 1;
      for (size_t d = first + length; d-- > first;) {
        weighted.emplace_back(access.indices[d], stride);
        stride *= shape[d];
      }
      views.push_back(split_offset(weighted, loop_var, inner_vars, bounds));
    }
  }
  return views;
}

bool same_form(const LinearForm& a, const LinearForm& b) {
  auto nonzero = [](const LinearForm& form) {
    return std::count_if(form.terms.begin(), form.terms.end(),
                         [](const auto& term) { return term.second != 0; });
  };
  if (nonzero(a) != nonzero(b)) return false;
  for (const auto& [term, coefficient] : a.terms) {
    if (coefficient == 0) continue;
    bool found = std::any_of(b.terms.begin(), b.terms.end(), [&](const auto& other) {
      return other.second == coefficient && same_value(other.first, term);
    });
    if (!found) return false;
  }
  return true;
}

// True if `a` in one iteration of the loop and `b` in another never touch one element.
bool separated(const SplitOffset& a, const SplitOffset& b) {
  if (!a.ok || !b.ok || a.loop_coefficient != b.loop_coefficient) return false;
  if (a.loop_coefficient == 0 || !same_form(a.outer, b.outer)) return false;
  __int128 step = a.loop_coefficient > 0 ? a.loop_coefficient : -a.loop_coefficient;
  return step > std::max(a.inner_max - b.inner_min, b.inner_max - a.inner_min);
}

// True if one of the views separates the two accesses (views of the same kind compared).
bool separated(const std::vector<SplitOffset>& a, const std::vector<SplitOffset>& b) {
  if (a.size() != b.size()) return false;
  for (size_t view = 0; view < a.size(); ++view) {
    if (separated(a[view], b[view])) return true;
  }
  return false;
}

bool is_store(const Access& access) { return access.kind == loop::AccessKind::store; }

std::string describe(const Access& access) {
  std::string who = access.block ? "block " + access.block->name : "a statement outside blocks";
  return who + (is_store(access) ? " writes " : " reads ") + access.buffer->name;
}

bool is_private(const Access& access, const std::set<const loop::BufferNode*>& allocated_inside,
                const IndependenceOptions& options) {
  const auto& scopes = options.private_scopes;
  return allocated_inside.count(access.buffer.get()) > 0 ||
         std::find(scopes.begin(), scopes.end(), access.buffer->scope) != scopes.end();
}

}  // namespace

std::string find_dependence(const std::vector<Stmt>& path, const IndependenceOptions& options) {
  const For* loop = path.back().as<For>();
  const Var* loop_var = loop->var.as<Var>();
  // The ranges of the loops (and iteration variables) around the loop and of the loop.
  loop::VarBounds bounds;
  for (const Stmt& stmt : path) {
    if (const For* node = stmt.as<For>()) {
      bounds[node->var.as<Var>()] = loop_range(node->min, node->extent, bounds);
    } else if (const Block* block = stmt.as<Block>()) {
      for (const loop::IterVar& iter : block->iter_vars) {
        bounds[iter.var.as<Var>()] = {0, std::max<int64_t>(iter.extent - 1, 0)};
      }
    }
  }
  if (loop::calls(loop->body, "barrier")) return "the loop holds a barrier";
  std::vector<Access> accesses = loop::collect_accesses(loop->body, {.bindings = true});
  std::unordered_set<const Var*> inner_vars = add_inner_ranges(accesses, bounds);
  std::set<const loop::BufferNode*> allocated_inside = loop::allocated_buffers(loop->body);
  std::vector<std::vector<SplitOffset>> offsets;
  for (const Access& access : accesses) {
    offsets.push_back(split_access(access, loop_var, inner_vars, bounds));
  }
  for (size_t i = 0; i < accesses.size(); ++i) {
    const Access& a = accesses[i];
    if (is_private(a, allocated_inside, options)) continue;
    for (size_t j = i; j < accesses.size(); ++j) {
      const Access& b = accesses[j];
      if (a.buffer != b.buffer || (!is_store(a) && !is_store(b))) continue;
      if (options.trust_blocks && a.block && a.block == b.block) continue;
      if (separated(offsets[i], offsets[j])) continue;
      if (i == j) return describe(a) + " in more than one iteration";
      return describe(a) + " and " + describe(b);
    }
  }
  return "";
}

std::string find_reduction_use(const For& loop) {
  // Iteration variables that depend on the loop, through nested blocks too.
  std::unordered_set<const Var*> dependent = {loop.var.as<Var>()};
  auto is_dependent = [&](const Var* var) { return dependent.count(var) > 0; };
  for (const Block* block : collect_blocks(loop.body)) {
    for (const loop::IterVar& iter : block->iter_vars) {
      if (!loop::uses_any_var(iter.binding, is_dependent)) continue;
      if (iter.kind == loop::IterKind::reduce) {
        return fmt::format("block {}, whose reduction variable {} is bound to {}", block->name,
                           iter.var.as<Var>()->name, loop.var.as<Var>()->name);
      }
      dependent.insert(iter.var.as<Var>());
    }
  }
  return "";
}

}  // namespace minic::schedule
