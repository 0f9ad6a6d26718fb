// The region of a buffer that accesses touch per iteration of some outer loops, and
// whether regions cover a domain. Course module 4. The algorithm is described in access.h.
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#include "minic/ir/loop/access.h"

#include "minic/ir/loop/printer.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

namespace minic::loop {
namespace {

std::unordered_set<const Var*> vars_of(const Expr& expr) {
  std::unordered_set<const Var*> vars;
  uses_any_var(expr, [&vars](const Var* var) {
    vars.insert(var);
    return false;
  });
  return vars;
}

// The range of one access's indices (steps a and b of access.h), or why there is none.
class AccessRelaxer {
 public:
  AccessRelaxer(const Access& access, const LoopScope& fixed) : access_(access), fixed_(fixed) {}

  std::optional<Region> region() {
    for (const LoopAround& around : access_.loops) {
      VarBounds all = every_bound();
      IntBound min = bound_of(around.min, all);
      IntBound extent = bound_of(around.extent, all);
      const Var* var = around.loop->var.as<Var>();
      if (!min.is_bounded() || !extent.is_bounded()) {
        unbounded = fmt::format("the range of loop {} cannot be bounded", var->name);
        return std::nullopt;
      }
      relaxed_[var] = IntBound{min.min, min.max + std::max<int64_t>(extent.max, 1) - 1};
    }
    Region result;
    for (const Expr& index : access_.indices) result.push_back(relax(index));
    if (unbounded) return std::nullopt;
    return result;
  }

  std::optional<std::string> unbounded;

 private:
  VarBounds every_bound() const {
    VarBounds all = fixed_.bounds;
    for (const auto& [var, bound] : relaxed_) all[var] = bound;
    return all;
  }

  DimRange relax(const Expr& index) {
    if (const auto* ramp = index.as<Ramp>()) {
      DimRange range = relax(ramp->base);
      std::optional<int64_t> stride = as_const_int(ramp->stride);
      if (!stride) return cannot_bound(index);
      int64_t span = *stride * (ramp->lanes - 1);
      (span >= 0 ? range.hi : range.lo) += span;
      return range;
    }
    if (const auto* broadcast = index.as<Broadcast>()) return relax(broadcast->value);
    if (std::optional<Linear> linear = linearize(index)) return relax_linear(*linear, index);
    bool relaxed = uses_any_var(index, [this](const Var* var) { return relaxed_.count(var) > 0; });
    if (!relaxed) return DimRange{index, 0, 0};
    if (std::optional<DimRange> range = relax_compound(index)) return *range;
    IntBound bound = bound_of(index, every_bound());
    if (!bound.is_bounded()) return cannot_bound(index);
    return DimRange{Expr(), bound.min, bound.max};
  }

  DimRange relax_linear(const Linear& linear, const Expr& index) {
    DimRange range{Expr(), linear.constant, linear.constant};
    for (const auto& [var, coefficient] : linear.terms) {
      const Var* node = var.as<Var>();
      if (fixed_.bounds.count(node) || coefficient == 0) continue;
      auto it = relaxed_.find(node);
      if (it == relaxed_.end()) return cannot_bound(index);
      range.lo += coefficient * (coefficient > 0 ? it->second.min : it->second.max);
      range.hi += coefficient * (coefficient > 0 ? it->second.max : it->second.min);
    }
    // The base lists the fixed variables in loop order, so equal bases print equally.
    for (const Expr& var : fixed_.vars) {
      for (const auto& [term, coefficient] : linear.terms) {
        if (!term.same_as(var) || coefficient == 0) continue;
        Expr product = coefficient == 1 ? var : var * coefficient;
        range.base = range.base ? range.base + product : product;
      }
    }
    return range;
  }

  // A sum, difference or product by an immediate of parts relaxed in turn, or a floordiv
  // by an immediate k of a linear index whose fixed variables' coefficients k divides:
  // floordiv(4 * i + j, 4) with i fixed and j in [0, 3] is i + [0, 0], one element where
  // bounding the whole quotient would give every row. nullopt where none of these fits.
  std::optional<DimRange> relax_compound(const Expr& index) {
    auto sum = [](const DimRange& a, const DimRange& b, int64_t sign) {
      Expr b_base = b.base && sign < 0 ? b.base * int64_t{-1} : b.base;
      Expr base = a.base && b_base ? a.base + b_base : a.base ? a.base : b_base;
      return sign > 0 ? DimRange{base, a.lo + b.lo, a.hi + b.hi}
                      : DimRange{base, a.lo - b.hi, a.hi - b.lo};
    };
    if (const auto* add = index.as<Add>()) return sum(relax(add->a), relax(add->b), 1);
    if (const auto* sub = index.as<Sub>()) return sum(relax(sub->a), relax(sub->b), -1);
    if (const auto* mul = index.as<Mul>()) {
      std::optional<int64_t> scale = as_const_int(mul->b);
      if (!scale) return std::nullopt;
      DimRange range = relax(mul->a);
      if (range.base) range.base = range.base * *scale;
      const int64_t lo = range.lo * *scale;
      const int64_t hi = range.hi * *scale;
      return DimRange{range.base, std::min(lo, hi), std::max(lo, hi)};
    }
    const auto* div = index.as<FloorDiv>();
    std::optional<int64_t> k = div ? as_const_int(div->b) : std::nullopt;
    std::optional<Linear> linear = k && *k > 0 ? linearize(div->a) : std::nullopt;
    if (!linear) return std::nullopt;
    // The fixed variables' terms, divided by k, are the base; the rest is relaxed as a
    // linear index of its own and divided after.
    Expr base;
    Linear rest;
    rest.constant = linear->constant;
    for (const auto& [var, coefficient] : linear->terms) {
      if (!fixed_.bounds.count(var.as<Var>())) {
        rest.add_term(var, coefficient);
        continue;
      }
      if (coefficient % *k != 0) return std::nullopt;
      Expr term = coefficient == *k ? var : var * (coefficient / *k);
      base = base ? base + term : term;
    }
    DimRange range = relax_linear(rest, index);
    return DimRange{base, floor_div(range.lo, *k), floor_div(range.hi, *k)};
  }

  // Records the first index that has no bound; the range returned is not used.
  DimRange cannot_bound(const Expr& index) {
    if (!unbounded) {
      unbounded = fmt::format("cannot bound the index {} of buffer {}", print_expr(index),
                              access_.buffer->name);
    }
    return DimRange{};
  }

  const Access& access_;
  const LoopScope& fixed_;
  VarBounds relaxed_;
};

int64_t add_saturating(int64_t a, int64_t b) {
  if (a == IntBound::kNegInf || a == IntBound::kPosInf) return a;
  return a + b;
}

// The values of the fixed variables a dimension's base uses, with their ranges; nullopt
// when covers() cannot enumerate them (see covers in access.h).
std::optional<std::vector<std::pair<const Var*, IntBound>>> base_vars(
    const DimRange& range, const LoopScope& fixed, std::unordered_set<const Var*>& used) {
  std::vector<std::pair<const Var*, IntBound>> vars;
  for (size_t i = 0; i < fixed.vars.size(); ++i) {
    const Var* var = fixed.vars[i].as<Var>();
    if (!range.base || !uses_var(range.base, var)) continue;
    if (!fixed.exact[i] || !used.insert(var).second) return std::nullopt;
    vars.emplace_back(var, fixed.bounds.at(var));
  }
  if (range.base && vars_of(range.base).size() != vars.size()) return std::nullopt;
  return vars;
}

// True if the values of `range` over every combination of `vars` cover [0, extent).
bool covers_dim(const DimRange& range, int64_t extent,
                const std::vector<std::pair<const Var*, IntBound>>& vars) {
  constexpr int64_t kMaxPoints = int64_t{1} << 20;
  int64_t points = 1;
  for (const auto& [var, bound] : vars) {
    points *= bound.max - bound.min + 1;
    if (points > kMaxPoints) return false;
  }
  // Mark what each combination of values covers, as +1/-1 at the ends of its range.
  std::vector<int64_t> marks(static_cast<size_t>(extent) + 1, 0);
  VarBounds values;
  for (int64_t point = 0; point < points; ++point) {
    int64_t rest = point;
    for (const auto& [var, bound] : vars) {
      int64_t size = bound.max - bound.min + 1;
      values[var] = IntBound::single(bound.min + rest % size);
      rest /= size;
    }
    IntBound base = range.base ? bound_of(range.base, values) : IntBound::single(0);
    if (!base.is_single()) return false;
    int64_t first = std::max<int64_t>(base.min + range.lo, 0);
    int64_t last = std::min<int64_t>(base.min + range.hi, extent - 1);
    if (first > last) continue;
    marks[static_cast<size_t>(first)] += 1;
    marks[static_cast<size_t>(last) + 1] -= 1;
  }
  int64_t depth = 0;
  for (int64_t i = 0; i < extent; ++i) {
    depth += marks[static_cast<size_t>(i)];
    if (depth <= 0) return false;
  }
  return true;
}

}  // namespace

Expr DimRange::min() const {
  if (!base) return IntImm::make(lo);
  if (lo > 0) return base + lo;
  if (lo < 0) return base - (-lo);
  return base;
}

RegionResult region_of(const std::vector<Access>& accesses, const BufferNode* buffer,
                       AccessKind kind, const LoopScope& fixed) {
  RegionResult result;
  for (const Access& access : accesses) {
    if (access.buffer.get() != buffer || access.kind != kind) continue;
    AccessRelaxer relaxer(access, fixed);
    std::optional<Region> region = relaxer.region();
    if (!region) return RegionResult{std::nullopt, relaxer.unbounded};
    if (!result.region) {
      result.region = std::move(region);
      continue;
    }
    for (size_t d = 0; d < region->size(); ++d) {
      (*result.region)[d] = unite((*result.region)[d], (*region)[d], fixed);
    }
  }
  return result;
}

DimRange unite(const DimRange& a, const DimRange& b, const LoopScope& fixed) {
  bool same_base = (!a.base && !b.base) || (a.base && b.base && same_expr(a.base, b.base));
  if (same_base) return DimRange{a.base, std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
  IntBound x = overall_bound(a, fixed);
  IntBound y = overall_bound(b, fixed);
  return DimRange{Expr(), std::min(x.min, y.min), std::max(x.max, y.max)};
}

IntBound overall_bound(const DimRange& range, const LoopScope& fixed) {
  if (!range.base) return IntBound{range.lo, range.hi};
  IntBound base = bound_of(range.base, fixed.bounds);
  return IntBound{add_saturating(base.min, range.lo), add_saturating(base.max, range.hi)};
}

bool covers(const Region& region, const std::vector<int64_t>& extents, const LoopScope& fixed) {
  std::unordered_set<const Var*> used;
  for (size_t d = 0; d < region.size(); ++d) {
    auto vars = base_vars(region[d], fixed, used);
    if (!vars || !covers_dim(region[d], extents[d], *vars)) return false;
  }
  return true;
}

}  // namespace minic::loop
