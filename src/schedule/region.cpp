// The scope of a path's loops, regions named by primitive, and regenerated loop nests.
// Course module 4. The region analysis itself is loop::region_of
// (src/ir/loop/access_region.cpp).
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#include "region.h"

#include "block_edit.h"

#include "minic/ir/loop/gpu_axis.h"

#include "minic/support/error.h"

#include <fmt/format.h>

#include <algorithm>

namespace minic::schedule {
namespace {

using loop::Expr;
using loop::IntBound;
using loop::Var;

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

}  // namespace

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

std::vector<loop::LoopAround> take_thread_loops(const std::vector<loop::Stmt>& path,
                                                LoopScope& fixed) {
  std::vector<loop::LoopAround> threads;
  for (const loop::Stmt& stmt : path) {
    const auto* node = stmt.as<loop::For>();
    if (!node || node->for_kind != loop::ForKind::thread_binding ||
        !loop::is_thread_axis(node->thread_axis)) {
      continue;
    }
    threads.push_back({node, node->min, node->extent});
    auto at = std::find_if(fixed.vars.begin(), fixed.vars.end(),
                           [&](const Expr& var) { return var.same_as(node->var); });
    if (at == fixed.vars.end()) continue;
    size_t index = static_cast<size_t>(at - fixed.vars.begin());
    fixed.vars.erase(at);
    fixed.exact.erase(fixed.exact.begin() + static_cast<std::ptrdiff_t>(index));
    fixed.bounds.erase(node->var.as<Var>());
  }
  return threads;
}

std::optional<Region> accessed_region(const loop::Stmt& stmt, const loop::BufferNode* buffer,
                                      AccessKind kind, const LoopScope& fixed,
                                      const std::string& primitive,
                                      const std::vector<loop::LoopAround>& around) {
  std::vector<loop::Access> accesses = loop::collect_accesses(stmt, {.bindings = true});
  for (loop::Access& access : accesses) {
    access.loops.insert(access.loops.begin(), around.begin(), around.end());
  }
  loop::RegionResult result = loop::region_of(accesses, buffer, kind, fixed);
  if (result.unbounded) fail("{}: {}", primitive, *result.unbounded);
  return result.region;
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
