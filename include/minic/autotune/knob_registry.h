// Registering a knob: a choice the search space offers for every block, beside its rule's.
//
// Course module 5. The rules of the search space (src/autotune/space_rules.h) give each
// block the knobs of its kind: tiles for a GEMM, the vector width of an elementwise block.
// A knob registered with MINIC_REGISTER_KNOB is offered to every block a rule schedules,
// after the rule, and the tuner searches it like the others:
//
//   // "unroll": unroll the innermost loop of the block, or not
//   Choices offer_unroll(schedule::Schedule sch, const std::string& block, const Target&) {
//     ... return {{0}, {1}};         // the first value is the default: it changes nothing
//   }
//   void apply_unroll(schedule::Schedule& sch, const std::string& block,
//                     const std::vector<int64_t>& value, const Target&) {
//     if (value[0] == 1) ... sch.unroll(...);
//   }
//   MINIC_REGISTER_KNOB("unroll", offer_unroll, apply_unroll, "unroll the innermost loop");
//
// after which a block C has the knob "C.unroll" wherever offer_unroll gives two or more
// values. Two rules keep the space sound: the first value changes nothing (so the default
// point is still the default schedule), and `apply` schedules the block as `offer` saw it,
// after its rule. A value `apply` refuses (an Error) leaves the block with the loops it
// had before its rule, as a refused rule does. Exercise m5-unroll-knob writes one.
//
// Chapter: docs/module5-autotuning.md#2-the-search-space
#pragma once

#include "minic/schedule/schedule.h"
#include "minic/target/target.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace minic::autotune {

struct KnobRule {
  std::string name;     // "unroll": the knob of block C is "C.unroll"
  std::string summary;  // one line
  // The values the knob may take for block `block` of `sch` (a copy of the schedule as the
  // block's rule left it, which offer may change freely): the default first. Fewer than
  // two values: no knob for this block.
  std::function<std::vector<std::vector<int64_t>>(schedule::Schedule sch,
                                                  const std::string& block, const Target&)>
      offer;
  // Schedules `block` with `value`, one of offer's values, after the block's rule.
  std::function<void(schedule::Schedule& sch, const std::string& block,
                     const std::vector<int64_t>& value, const Target&)>
      apply;
};

// What MINIC_REGISTER_KNOB makes: an object that adds `rule` when it is built. A name
// registered twice is an internal error.
struct RegisterKnob {
  explicit RegisterKnob(KnobRule rule);
};

// Every registered knob, in the order they were registered.
const std::vector<KnobRule>& registered_knobs();

}  // namespace minic::autotune

#define MINIC_KNOB_CONCAT_INNER(a, b) a##b
#define MINIC_KNOB_CONCAT(a, b) MINIC_KNOB_CONCAT_INNER(a, b)

// Registers the knob `name` with its `offer` and `apply` functions (KnobRule) and a
// one-line summary.
#define MINIC_REGISTER_KNOB(name, offer, apply, summary)                                   \
  static const ::minic::autotune::RegisterKnob MINIC_KNOB_CONCAT(minic_knob_, __LINE__)( \
      ::minic::autotune::KnobRule{name, summary, offer, apply})
