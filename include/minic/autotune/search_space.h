// The search space of one task: the schedules the tuner may choose from.
//
// Course module 5. Rules look at the blocks of a lowered kernel, as the default schedule
// does (src/schedule/rules/cpu_default.cpp), but instead of fixed sizes each rule exposes
// knobs: named choices, each with the list of values it may take. The values depend on
// the target, as the default rules' sizes do: below, `lanes` is the f32 lanes of its
// vector registers (16 with AVX-512, 8 with AVX2).
//
//   gemm-like block C     C.tile_j    the column loop split in 3: [outer, middle, vector
//                                     tile], every factorisation whose last factor is a
//                                     multiple of `lanes` up to four vectors (or the
//                                     default rule's tile)
//                         C.tile_i    the row loop split in 3: [outer, middle, register
//                                     rows], the last factor at most 8
//                         C.tile_k    the first reduction loop split in 2 [outer, inner],
//                                     the inner part unrolled when small
//                         C.order     which of the outer loops runs outermost (column
//                                     tiles or row tiles)
//                         C.pack      copy B's panel into a contiguous buffer (0 or 1)
//                         C.parallel  which outer loop runs in parallel: its position
//                                     among [other spatial loops, the two outer tile
//                                     loops], or -1: none
//   reduction block       R.inner     move the innermost spatial loop inside the
//                                     reduction loops, where LLVM vectorises it (0 or 1)
//                         R.parallel  parallel outer loops (0 or 1)
//   elementwise block     E.vector    the innermost loop's vector tile (1: none, or one,
//                                     two or four vectors of `lanes`)
//                         E.parallel  parallel outer loops (0 or 1)
//
// A point of the space -- one value per knob -- is a set of Decisions, and applying the
// rules with those values gives a trace (trace.h): every candidate the tuner measures is
// a trace, stored in the database with its decisions. Random points come from the knobs'
// lists (tile sizes are random factorisations of the loop extents); mutation changes one
// knob; crossover takes each knob from one parent or the other.
//
//   SearchSpace space(task.func, target);
//   std::mt19937_64 rng(1);
//   Decisions point = space.sample(rng);        // {"C.tile_i": [2, 16, 8], ...}
//   schedule::Trace trace = space.trace_of(point);
//   loop::PrimFunc scheduled = space.apply(point);
//
// Chapter: docs/module5-autotuning.md#2-the-search-space
#pragma once

#include "minic/ir/loop/stmt.h"
#include "minic/schedule/schedule.h"
#include "minic/schedule/trace.h"
#include "minic/target/target.h"

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace minic::autotune {

// One knob of the space: its name ("C.tile_j") and the values it may take. A value is a
// list of integers: a tile knob's value is its factors, a yes/no knob's a list of one 0
// or 1.
struct Knob {
  std::string name;
  std::vector<std::vector<int64_t>> choices;
};

// A point of the space: a value for every knob, by name.
using Decisions = std::map<std::string, std::vector<int64_t>>;

class SearchSpace {
 public:
  // The knobs of every block of `func` (a lowered, unscheduled kernel) that a rule covers,
  // with the sizes of `target` (a CPU target).
  SearchSpace(loop::PrimFunc func, const Target& target);

  const loop::PrimFunc& func() const { return func_; }
  const Target& target() const { return target_; }
  const std::vector<Knob>& knobs() const { return knobs_; }
  // How many points the space has (the product of the knobs' choice counts; saturates).
  double size() const;

  // The values the default rules (default_cpu_schedule) use: trace_of(default_point())
  // is default_cpu_trace(func(), target()). The tuner's first candidate.
  const Decisions& default_point() const { return default_point_; }

  // A uniformly random value for every knob (points that break a constraint between
  // knobs -- a register tile larger than the registers -- are drawn again).
  Decisions sample(std::mt19937_64& rng) const;
  // `point` with one knob (chosen at random) set to another of its values.
  Decisions mutate(const Decisions& point, std::mt19937_64& rng) const;
  // Each knob's value from `a` or `b`, at random.
  Decisions crossover(const Decisions& a, const Decisions& b, std::mt19937_64& rng) const;
  // True if `point` has exactly the knobs of this space, each with one of its values,
  // and keeps the constraints between knobs.
  bool contains(const Decisions& point) const;

  // The trace the rules apply for `point` (the rule of a block whose primitives refuse
  // those values is left out, as the default rules do, so every point gives a trace that
  // replays). Throws Error naming the knob if `point` is not a point of the space.
  schedule::Trace trace_of(const Decisions& point) const;
  // func() with trace_of(point) applied.
  loop::PrimFunc apply(const Decisions& point) const;
  // Both at once: the Schedule holds the scheduled function and its trace.
  schedule::Schedule schedule(const Decisions& point) const;

 private:
  loop::PrimFunc func_;
  Target target_;
  std::vector<Knob> knobs_;
  Decisions default_point_;
};

// The factorisations of `extent` into `parts` factors, in order (the product of each is
// `extent`; [2, 3] and [3, 2] are two): what a tile knob's values are drawn from.
std::vector<std::vector<int64_t>> factorizations(int64_t extent, int parts);

}  // namespace minic::autotune
