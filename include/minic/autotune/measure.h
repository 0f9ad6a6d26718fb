// Measuring candidate schedules on this machine.
//
// Course module 5. The cost model only ranks candidates; what the tuner keeps is what was
// timed. measure() takes scheduled kernels (a task's function with a candidate's trace
// applied) and, for each:
//   1. runs the loop pipeline that compile_model runs (loop::default_loop_pipeline()),
//   2. compiles it for the target with the LLVM back end, as compile_model would,
//   3. calls it on random inputs: warm-up calls, then `repeats` timed runs, each of enough
//      calls to last min_repeat_ms (the flushing before each call included), every call
//      with cold caches (flush_cache); the result is each run's time per call and the
//      median.
// Steps 2 and 3 happen in a child process (fork) with a time limit: a candidate whose
// code crashes or runs too long is reported as failed, and the tuner goes on. Only the
// timing needs the machine to itself: so first every candidate is compiled, several at
// once in children of their own (compile_jobs), into the compiled-code cache on disk
// (support/file_cache.h); then each is timed, one at a time, by a child that finds its
// code in the cache.
//
//   MeasureOptions options;
//   options.threads = 1;
//   std::vector<MeasureResult> results =
//       measure({scheduled_a, scheduled_b}, codegen::host_target(), options);
//   results[0].median_us   // 812.5
//   results[1].error       // "timed out after 10 s"
//
// Chapter: docs/module5-autotuning.md#6-measurement
#pragma once

#include "minic/ir/loop/stmt.h"
#include "minic/target/target.h"

#include <string>
#include <vector>

namespace minic::autotune {

struct MeasureOptions {
  int warmup = 1;               // untimed calls first
  int repeats = 5;              // timed runs; the median is the result
  double min_repeat_ms = 10;    // each run calls the kernel until this much time has passed
  double timeout_s = 10;        // for compiling and timing one candidate
  int threads = 1;              // the thread pool's size in the child (0: every core)
  // Children compiling candidates at once before the timing (0: one per core this process
  // may run on; 1: none, each timing child compiles its candidate itself).
  int compile_jobs = 0;
  // Before every timed call, evict the kernel's arguments from the CPU caches (clflush),
  // and time each call on its own. In a model a kernel finds its weights in memory, not
  // in the caches its previous call left warm; flushed timings rank candidates as they
  // will run there (Ansor's enable_cpu_cache_flush). Off: back-to-back calls, warm caches.
  bool flush_cache = true;
  // A candidate whose first timed call takes longer than this (0: no limit) is not timed
  // further: its result is that one call. It is far slower than the best known, and its
  // repeats would cost most of a round.
  double give_up_us = 0;
};

struct MeasureResult {
  bool ok = false;
  std::string error;             // why not ok: a compile error, a signal, a time-out
  std::vector<double> times_us;  // per call, one per repeat (one when given up on)
  double median_us = 0;
  // The bytes evicted from the caches before each timed call, on average: the storage of
  // every argument with flush_cache, 0 with warm caches (and on CPUs other than x86-64,
  // where nothing is flushed).
  int64_t flushed_bytes = 0;
};

// Times every function of `candidates` (scheduled, before the loop pipeline) compiled for
// `target`, one child process each, in order. Error before any is timed if code for the
// target cannot run on this machine (codegen::check_runs_here).
std::vector<MeasureResult> measure(const std::vector<loop::PrimFunc>& candidates,
                                   const Target& target, const MeasureOptions& options);

// The median of `values` (not empty): the middle one, or the mean of the middle two.
double median_of(std::vector<double> values);

}  // namespace minic::autotune
