// The search space of one task (search_space.h). Course module 5.
//
// The space is built by walking the kernel's blocks in program order with a Schedule, as
// default_cpu_schedule does: each block gets the knobs of its rule (space_rules.h), and
// the default rule is applied to it before the next block is looked at, so every block's
// knobs are computed on the loops the default schedule gives it. A point is then applied
// by the same walk with the point's values.
//
// Points are plain maps from knob name to value, so every operation on them checks them
// first: a point read from a database written by another version of the space may name
// a knob this space does not have, and that is an Error naming the knob.
//
// Chapter: docs/module5-autotuning.md#2-the-search-space
#include "minic/autotune/search_space.h"

#include "space_rules.h"

#include "minic/schedule/primitives.h"
#include "minic/schedule/schedule.h"
#include "minic/support/error.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <limits>

namespace minic::autotune {
namespace {

// How many times sample, mutate and crossover draw again when a draw breaks a constraint.
constexpr int kMaxRedraws = 100;

size_t pick(std::mt19937_64& rng, size_t count) {
  return std::uniform_int_distribution<size_t>(0, count - 1)(rng);
}

std::string value_text(const std::vector<int64_t>& value) {
  return fmt::format("[{}]", fmt::join(value, ", "));
}

// Why `point` is not a point of the space of `func` with these knobs; empty if it is one.
std::string not_a_point(const loop::PrimFunc& func, const std::vector<Knob>& knobs,
                        const Decisions& point, const Target& target) {
  for (const auto& [name, value] : point) {
    auto knob = std::find_if(knobs.begin(), knobs.end(),
                             [&](const Knob& k) { return k.name == name; });
    if (knob == knobs.end()) {
      return fmt::format("the search space of @{} has no knob {}", func.name, name);
    }
    if (std::find(knob->choices.begin(), knob->choices.end(), value) == knob->choices.end()) {
      return fmt::format("knob {} of the search space of @{} has no value {}", name, func.name,
                         value_text(value));
    }
  }
  for (const Knob& knob : knobs) {
    if (!point.count(knob.name)) {
      return fmt::format("the point gives no value for knob {} of the search space of @{}",
                         knob.name, func.name);
    }
  }
  return constraint_violation(knobs, point, target);
}

void check_point(const loop::PrimFunc& func, const std::vector<Knob>& knobs,
                 const Decisions& point, const Target& target) {
  std::string reason = not_a_point(func, knobs, point, target);
  if (!reason.empty()) throw Error(reason);
}

// `func` scheduled block by block with the point's values.
// A block that an earlier block's rule took (the blocked convolution rule takes the
// epilogue after it) is skipped, as default_cpu_schedule skips it.
schedule::Schedule schedule_point(const loop::PrimFunc& func, const Decisions& point,
                                  const Target& target) {
  schedule::Schedule sch(func);
  for (const std::string& name : schedule::get_block_names(func)) {
    if (!schedule::taken_by_earlier_rule(sch.func(), name)) {
      apply_block_rule(sch, name, point, target);
    }
  }
  return sch;
}

}  // namespace

std::vector<std::vector<int64_t>> factorizations(int64_t extent, int parts) {
  if (extent < 1) fail("factorizations: the extent {} is not positive", extent);
  if (parts < 1) fail("factorizations: {} parts; at least one is needed", parts);
  if (parts == 1) return {{extent}};
  std::vector<std::vector<int64_t>> result;
  for (int64_t first = 1; first <= extent; ++first) {
    if (extent % first != 0) continue;
    for (std::vector<int64_t>& rest : factorizations(extent / first, parts - 1)) {
      rest.insert(rest.begin(), first);
      result.push_back(std::move(rest));
    }
  }
  return result;
}

SearchSpace::SearchSpace(loop::PrimFunc func, const Target& target)
    : func_(std::move(func)), target_(target) {
  if (!target_.is_cpu()) {
    fail("target {}: the search space's rules need a CPU target", target_.str());
  }
  schedule::Schedule sch(func_);
  for (const std::string& name : schedule::get_block_names(func_)) {
    if (schedule::taken_by_earlier_rule(sch.func(), name)) continue;
    BlockSpace block = block_space(sch, name, target_);
    knobs_.insert(knobs_.end(), block.knobs.begin(), block.knobs.end());
    default_point_.insert(block.default_values.begin(), block.default_values.end());
  }
}

double SearchSpace::size() const {
  double total = 1;
  for (const Knob& knob : knobs_) {
    total *= static_cast<double>(knob.choices.size());
    if (total > std::numeric_limits<double>::max()) return std::numeric_limits<double>::max();
  }
  return total;
}

Decisions SearchSpace::sample(std::mt19937_64& rng) const {
  for (int draw = 0; draw < kMaxRedraws; ++draw) {
    Decisions point;
    for (const Knob& knob : knobs_) point[knob.name] = knob.choices[pick(rng, knob.choices.size())];
    if (constraint_violation(knobs_, point, target_).empty()) return point;
  }
  return default_point_;  // every draw broke a constraint: the default keeps them all
}

Decisions SearchSpace::mutate(const Decisions& point, std::mt19937_64& rng) const {
  check_point(func_, knobs_, point, target_);
  std::vector<const Knob*> mutable_knobs;
  for (const Knob& knob : knobs_) {
    if (knob.choices.size() > 1) mutable_knobs.push_back(&knob);
  }
  if (mutable_knobs.empty()) return point;
  for (int draw = 0; draw < kMaxRedraws; ++draw) {
    const Knob& knob = *mutable_knobs[pick(rng, mutable_knobs.size())];
    // Another value: one of the other choices, each as likely.
    size_t current = std::find(knob.choices.begin(), knob.choices.end(), point.at(knob.name)) -
                     knob.choices.begin();
    size_t other = pick(rng, knob.choices.size() - 1);
    if (other >= current) ++other;
    Decisions mutated = point;
    mutated[knob.name] = knob.choices[other];
    if (constraint_violation(knobs_, mutated, target_).empty()) return mutated;
  }
  return point;
}

Decisions SearchSpace::crossover(const Decisions& a, const Decisions& b,
                                 std::mt19937_64& rng) const {
  check_point(func_, knobs_, a, target_);
  check_point(func_, knobs_, b, target_);
  for (int draw = 0; draw < kMaxRedraws; ++draw) {
    Decisions child;
    for (const Knob& knob : knobs_) {
      child[knob.name] = pick(rng, 2) == 0 ? a.at(knob.name) : b.at(knob.name);
    }
    if (constraint_violation(knobs_, child, target_).empty()) return child;
  }
  return a;
}

bool SearchSpace::contains(const Decisions& point) const {
  return not_a_point(func_, knobs_, point, target_).empty();
}

schedule::Trace SearchSpace::trace_of(const Decisions& point) const {
  check_point(func_, knobs_, point, target_);
  return schedule_point(func_, point, target_).trace();
}

loop::PrimFunc SearchSpace::apply(const Decisions& point) const {
  check_point(func_, knobs_, point, target_);
  return schedule_point(func_, point, target_).func();
}

schedule::Schedule SearchSpace::schedule(const Decisions& point) const {
  check_point(func_, knobs_, point, target_);
  return schedule_point(func_, point, target_);
}

}  // namespace minic::autotune
