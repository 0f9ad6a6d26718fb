// Region analysis: ranges of buffer accesses per iteration of the outer loops. Course
// module 4. The algorithm is described in region.h.
#include "region.h"

#include "block_edit.h"

#include "minic/ir/loop/printer.h"
#include "minic/ir/loop/visitor.h"
#include "minic/support/error.h"

#include <algorithm>
#include <unordered_set>

namespace minic::schedule {
namespace {

using loop::Expr;
using loop::IntBound;
using loop::Var;

// An index as constant + sum of coefficient * variable.
struct Linear {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;

  void add_term(const Expr& var, int64_t coefficient) {
    for (auto& [existing, value] : terms) {
      if (existing.same_as(var)) {
        value += coefficient;
        return;
      }
    }
    terms.emplace_back(var, coefficient);
  }
  void add(const Linear& other, int64_t sign) {
    for (const auto& [var, coefficient] : other.terms) add_term(var, sign * coefficient);
    constant += sign * other.constant;
  }
};

std::optional<Linear> linearize(const Expr& expr) {
  Linear result;
  if (std::optional<int64_t> value = loop::as_const_int(expr)) {
    result.constant = *value;
    return result;
  }
  if (expr.as<Var>()) {
    result.add_term(expr, 1);
    return result;
  }
  auto both = [&](const Expr& a, const Expr& b, int64_t sign) -> std::optional<Linear> {
    std::optional<Linear> left = linearize(a);
    std::optional<Linear> right = left ? linearize(b) : std::nullopt;
    if (!right) return std::nullopt;
    left->add(*right, sign);
    return left;
  };
  if (const auto* node = expr.as<loop::Add>()) return both(node->a, node->b, 1);
  if (const auto* node = expr.as<loop::Sub>()) return both(node->a, node->b, -1);
  if (const auto* node = expr.as<loop::Mul>()) {
    std::optional<int64_t> factor = loop::as_const_int(node->b);
    Expr other = node->a;
    if (!factor) {
      factor = loop::as_const_int(node->a);
      other = node->b;
    }
    std::optional<Linear> inner = factor ? linearize(other) : std::nullopt;
    if (!inner) return std::nullopt;
    Linear scaled;
    scaled.add(*inner, *factor);
    return scaled;
  }
  return std::nullopt;
}

std::unordered_set<const Var*> vars_of(const Expr& expr) {
  std::unordered_set<const Var*> vars;
  loop::uses_any_var(expr, [&vars](const Var* var) {
    vars.insert(var);
    return false;
  });
  return vars;
}

class RegionCollector : public loop::IRVisitor {
 public:
  RegionCollector(const loop::BufferNode* buffer, Access access, const LoopScope& fixed,
                  const std::string& primitive)
      : buffer_(buffer), access_(access), fixed_(fixed), primitive_(primitive) {}

  std::optional<Region> region;

  void visit_For(const loop::For* node) override {
    loop::VarBounds all = every_bound();
    IntBound min = loop::bound_of(loop::substitute(node->min, bindings_), all);
    IntBound extent = loop::bound_of(loop::substitute(node->extent, bindings_), all);
    if (!min.is_bounded() || !extent.is_bounded()) {
      fail("{}: the range of loop {} cannot be bounded", primitive_,
           node->var.as<Var>()->name);
    }
    const Var* var = node->var.as<Var>();
    relaxed_[var] = IntBound{min.min, min.max + std::max<int64_t>(extent.max, 1) - 1};
    visit(node->body);
    relaxed_.erase(var);
  }

  void visit_Block(const loop::Block* node) override {
    for (const loop::IterVar& iter : node->iter_vars) {
      bindings_[iter.var.as<Var>()] = loop::substitute(iter.binding, bindings_);
    }
    visit(node->init);
    visit(node->body);
    for (const loop::IterVar& iter : node->iter_vars) bindings_.erase(iter.var.as<Var>());
  }

  void visit_Load(const loop::Load* node) override {
    if (node->buffer.get() == buffer_ && access_ == Access::load) add(node->indices);
    IRVisitor::visit_Load(node);
  }

  void visit_Store(const loop::Store* node) override {
    if (node->buffer.get() == buffer_ && access_ == Access::store) add(node->indices);
    IRVisitor::visit_Store(node);
  }

 private:
  loop::VarBounds every_bound() const {
    loop::VarBounds all = fixed_.bounds;
    for (const auto& [var, bound] : relaxed_) all[var] = bound;
    return all;
  }

  void add(const std::vector<Expr>& indices) {
    Region access;
    for (const Expr& index : indices) access.push_back(relax(loop::substitute(index, bindings_)));
    if (!region) {
      region = std::move(access);
      return;
    }
    for (size_t d = 0; d < access.size(); ++d) {
      (*region)[d] = unite((*region)[d], access[d], fixed_);
    }
  }

  DimRange relax(const Expr& index) {
    if (const auto* ramp = index.as<loop::Ramp>()) {
      DimRange range = relax(ramp->base);
      std::optional<int64_t> stride = loop::as_const_int(ramp->stride);
      if (!stride) cannot_bound(index);
      int64_t span = *stride * (ramp->lanes - 1);
      (span >= 0 ? range.hi : range.lo) += span;
      return range;
    }
    if (const auto* broadcast = index.as<loop::Broadcast>()) return relax(broadcast->value);
    if (std::optional<Linear> linear = linearize(index)) return relax_linear(*linear, index);
    bool relaxed = loop::uses_any_var(index, [this](const Var* var) {
      return relaxed_.count(var) > 0;
    });
    if (!relaxed) return DimRange{index, 0, 0};
    IntBound bound = loop::bound_of(index, every_bound());
    if (!bound.is_bounded()) cannot_bound(index);
    return DimRange{Expr(), bound.min, bound.max};
  }

  DimRange relax_linear(const Linear& linear, const Expr& index) {
    DimRange range{Expr(), linear.constant, linear.constant};
    for (const auto& [var, coefficient] : linear.terms) {
      const Var* node = var.as<Var>();
      if (fixed_.bounds.count(node) || coefficient == 0) continue;
      auto it = relaxed_.find(node);
      if (it == relaxed_.end()) cannot_bound(index);
      int64_t low = coefficient * (coefficient > 0 ? it->second.min : it->second.max);
      int64_t high = coefficient * (coefficient > 0 ? it->second.max : it->second.min);
      range.lo += low;
      range.hi += high;
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

  [[noreturn]] void cannot_bound(const Expr& index) const {
    fail("{}: cannot bound the index {} of buffer {}", primitive_, loop::print_expr(index),
         buffer_->name);
  }

  const loop::BufferNode* buffer_;
  Access access_;
  const LoopScope& fixed_;
  const std::string& primitive_;
  loop::VarMap bindings_;
  loop::VarBounds relaxed_;
};

// The next name ax<n> that no fixed loop has, so the new loops read apart from them.
std::string fresh_loop_name(const LoopScope& fixed, int& next) {
  for (;; ++next) {
    std::string name = fmt::format("ax{}", next);
    bool taken = std::any_of(fixed.vars.begin(), fixed.vars.end(),
                             [&name](const Expr& var) { return var.as<Var>()->name == name; });
    if (!taken) {
      ++next;
      return name;
    }
  }
}

int64_t add_saturating(int64_t a, int64_t b) {
  if (a == IntBound::kNegInf || a == IntBound::kPosInf) return a;
  return a + b;
}

}  // namespace

Expr DimRange::min() const {
  if (!base) return loop::IntImm::make(lo);
  if (lo > 0) return base + lo;
  if (lo < 0) return base - (-lo);
  return base;
}

LoopScope scope_of_path(const std::vector<loop::Stmt>& path, const std::string& primitive) {
  LoopScope scope;
  for (size_t i = 0; i < path.size(); ++i) {
    if (const auto* block = path[i].as<loop::Block>(); block && i + 1 < path.size()) {
      for (const loop::IterVar& iter : block->iter_vars) {
        scope.vars.push_back(iter.var);
        scope.bounds[iter.var.as<Var>()] = IntBound{0, std::max<int64_t>(iter.extent, 1) - 1};
        scope.exact.push_back(false);
      }
    }
    const auto* node = path[i].as<loop::For>();
    if (!node) continue;
    IntBound min = loop::bound_of(node->min, scope.bounds);
    IntBound extent = loop::bound_of(node->extent, scope.bounds);
    if (!min.is_bounded() || !extent.is_bounded()) {
      fail("{}: the range of loop {} cannot be bounded", primitive, node->var.as<Var>()->name);
    }
    scope.vars.push_back(node->var);
    scope.bounds[node->var.as<Var>()] =
        IntBound{min.min, min.max + std::max<int64_t>(extent.max, 1) - 1};
    scope.exact.push_back(min.is_single() && extent.is_single());
  }
  return scope;
}

std::optional<Region> accessed_region(const loop::Stmt& stmt, const loop::BufferNode* buffer,
                                      Access access, const LoopScope& fixed,
                                      const std::string& primitive) {
  RegionCollector collector(buffer, access, fixed, primitive);
  collector.visit(stmt);
  return collector.region;
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
  IntBound base = loop::bound_of(range.base, fixed.bounds);
  return IntBound{add_saturating(base.min, range.lo), add_saturating(base.max, range.hi)};
}

bool covers(const Region& region, const std::vector<int64_t>& extents, const LoopScope& fixed) {
  constexpr int64_t kMaxPoints = int64_t{1} << 20;
  std::unordered_set<const Var*> used;
  for (size_t d = 0; d < region.size(); ++d) {
    const DimRange& range = region[d];
    // The fixed variables this dimension's base uses, with their ranges.
    std::vector<std::pair<const Var*, IntBound>> vars;
    for (size_t i = 0; i < fixed.vars.size(); ++i) {
      const Var* var = fixed.vars[i].as<Var>();
      if (!range.base || !loop::uses_var(range.base, var)) continue;
      if (!fixed.exact[i] || !used.insert(var).second) return false;
      vars.emplace_back(var, fixed.bounds.at(var));
    }
    if (range.base && vars_of(range.base).size() != vars.size()) return false;
    int64_t points = 1;
    for (const auto& [var, bound] : vars) {
      points *= bound.max - bound.min + 1;
      if (points > kMaxPoints) return false;
    }
    // Mark what each combination of values covers, as +1/-1 at the ends of its range.
    std::vector<int64_t> marks(static_cast<size_t>(extents[d]) + 1, 0);
    loop::VarBounds values;
    for (const auto& [var, bound] : vars) values[var] = IntBound::single(bound.min);
    for (int64_t point = 0; point < points; ++point) {
      int64_t rest = point;
      for (const auto& [var, bound] : vars) {
        int64_t size = bound.max - bound.min + 1;
        values[var] = IntBound::single(bound.min + rest % size);
        rest /= size;
      }
      IntBound base = range.base ? loop::bound_of(range.base, values) : IntBound::single(0);
      if (!base.is_single()) return false;
      int64_t first = std::max<int64_t>(base.min + range.lo, 0);
      int64_t last = std::min<int64_t>(base.min + range.hi, extents[d] - 1);
      if (first > last) continue;
      marks[static_cast<size_t>(first)] += 1;
      marks[static_cast<size_t>(last) + 1] -= 1;
    }
    int64_t depth = 0;
    for (int64_t i = 0; i < extents[d]; ++i) {
      depth += marks[static_cast<size_t>(i)];
      if (depth <= 0) return false;
    }
  }
  return true;
}

loop::Stmt regenerate_nest(const loop::Block& block,
                           const std::vector<std::optional<DimRange>>& ranges,
                           const LoopScope& fixed) {
  loop::Block::Parts parts = block.parts();
  std::vector<Expr> loop_vars;
  std::vector<int64_t> loop_extents;
  std::vector<Expr> guards;
  int next_name = 0;
  for (size_t k = 0; k < parts.iter_vars.size(); ++k) {
    loop::IterVar& iter = parts.iter_vars[k];
    DimRange range{Expr(), 0, iter.extent - 1};
    if (ranges[k] && ranges[k]->extent() <= iter.extent) range = *ranges[k];
    if (range.extent() == 1) {
      iter.binding = range.min();
    } else {
      Expr var = Var::make(fresh_loop_name(fixed, next_name));
      loop_vars.push_back(var);
      loop_extents.push_back(range.extent());
      iter.binding = plus(range.min(), var);
    }
    IntBound values = overall_bound(range, fixed);
    if (values.min < 0) guards.push_back(loop::LE::make(loop::IntImm::make(0), iter.binding));
    if (values.max >= iter.extent) {
      guards.push_back(loop::LT::make(iter.binding, loop::IntImm::make(iter.extent)));
    }
  }
  parts.predicate = Expr();
  for (const Expr& guard : guards) {
    parts.predicate = parts.predicate ? loop::And::make(parts.predicate, guard) : guard;
  }
  loop::Stmt nest = loop::Block::make(std::move(parts));
  for (size_t i = loop_vars.size(); i-- > 0;) {
    nest = loop::For::make(loop_vars[i], loop::IntImm::make(0),
                           loop::IntImm::make(loop_extents[i]), loop::ForKind::serial, nest);
  }
  return nest;
}

}  // namespace minic::schedule
