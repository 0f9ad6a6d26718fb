// The default GPU schedule: a sound CUDA schedule for every kernel, without tuning.
//
// Course module 6 (the GPU; schedules are module 4). The GPU runs thousands of threads at
// once; the first thing a kernel needs is one thread per output element. So each block of
// a lowered kernel gets the same rule, through a Schedule (its result is a trace like a
// tuned one):
//
//   1. the loops feeding spatial iteration variables go outside those feeding reductions
//      (reorder), as lowering already places them;
//   2. the spatial loops are fused into one loop over every output element;
//   3. that loop is split into thread blocks of kThreadsPerBlock threads (a guard covers
//      the last, partial block) and the two parts are bound to blockIdx.x and threadIdx.x.
//
// A reduction then runs serially in its thread, one output per thread: right for short
// reductions (pooling windows), far from the GPU's peak for GEMM, convolution and long
// rows. So three rules come first, each tried on a copy of the schedule and dropped if it
// does not fit:
//   - a GEMM whose tiles fit (gpu_gemm.cpp): shared-memory tiles of A and B, a register
//     tile of C in each thread;
//   - another multiply-accumulate, a convolution (gpu_conv.cpp): a register tile of
//     output channels in each thread;
//   - another reduction of 64 elements or more (gpu_reduce.cpp): a thread block per output.
// A block whose loops feed both kinds of variables, or that has no loop, keeps its loops
// and runs as a launch of one thread (the CUDA back end's rule for unbound host code).
//
// Chapter: docs/module6-cuda.md#the-default-gpu-schedule
#include "minic/schedule/rules.h"

#include "gpu_rules.h"
#include "minic/schedule/block_roles.h"
#include "minic/schedule/primitives.h"
#include "minic/schedule/schedule.h"
#include "minic/support/error.h"
#include "minic/support/explain.h"

#include <algorithm>

namespace minic::schedule {
namespace {

// Threads per block: a multiple of the warp (32) that keeps several blocks resident on
// one SM of every architecture minic targets.
constexpr int64_t kThreadsPerBlock = 256;

// A rule and its name, for `minic explain`.
struct Rule {
  const char* name;
  void (*apply)(Schedule&, const BlockRef&, const LoopRoles&);
};

// The rules to try before one thread per output, the most specific first.
std::vector<Rule> tiled_rules(const loop::Block& block, const LoopRoles& roles) {
  if (is_multiply_accumulate(block)) {
    return {{"GEMM", schedule_gpu_gemm}, {"convolution", schedule_gpu_conv}};
  }
  if (!roles.reduce.empty()) return {{"reduction", schedule_gpu_reduction}};
  return {};
}

// Applies the first of `rules` that fits the block; false (`sch` unchanged) if none does.
// Each refusal and the choice are noted for `minic explain`.
bool apply_first(Schedule& sch, const std::string& name, const BlockRef& block,
                 const LoopRoles& roles, const std::vector<Rule>& rules) {
  for (const Rule& rule : rules) {
    try {
      Schedule tiled = sch;
      rule.apply(tiled, block, roles);
      sch = std::move(tiled);
      explain::note("block {}: the GPU {} rule", name, rule.name);
      return true;
    } catch (const InternalError&) {
      throw;  // a bug, not a refusal
    } catch (const Error& refusal) {
      // The rule does not fit: the next.
      explain::note("block {}: the GPU {} rule refused: {}", name, rule.name, refusal.what());
    }
  }
  return false;
}

void schedule_block(Schedule& sch, const std::string& name) {
  Schedule attempt = sch;
  try {
    BlockRef block = attempt.get_block(name);
    std::vector<LoopRef> loops = attempt.get_loops(block);
    LoopRoles roles = loop_roles(attempt, block, loops);
    if (roles.mixed || roles.spatial.empty()) {
      explain::note("block {}: no rule: {}; it runs in one thread", name,
                    roles.mixed ? "a loop is both spatial and a reduction"
                                : "it has no spatial loop");
      return;
    }
    if (apply_first(attempt, name, block, roles,
                    tiled_rules(get_block(attempt.func(), name), roles))) {
      sch = std::move(attempt);
      return;
    }
    std::vector<LoopRef> order = roles.spatial;
    order.insert(order.end(), roles.reduce.begin(), roles.reduce.end());
    bool in_order = order.size() == loops.size() &&
                    std::equal(order.begin(), order.end(), loops.begin(),
                               [](const LoopRef& a, const LoopRef& b) { return a.var == b.var; });
    if (!in_order) attempt.reorder(order);
    LoopRef outputs = roles.spatial.size() == 1 ? roles.spatial[0] : attempt.fuse(roles.spatial);
    int64_t extent = extent_of(attempt, outputs);
    if (extent <= 0) return;
    int64_t threads = std::min(extent, kThreadsPerBlock);
    std::vector<LoopRef> parts = attempt.split(outputs, {-1, threads});
    attempt.bind(parts[0], "blockIdx.x");
    attempt.bind(parts[1], "threadIdx.x");
    sch = std::move(attempt);
    explain::note("block {}: one thread per output, {} thread{} a block", name, threads,
                  threads == 1 ? "" : "s");
  } catch (const InternalError&) {
    throw;  // a bug, not a refusal
  } catch (const Error& refusal) {
    // The rule does not fit this block; it keeps its loops and runs in one thread.
    explain::note("block {}: the rule refused ({}); it runs in one thread", name,
                  refusal.what());
  }
}

void check_cuda(const Target& target) {
  if (!target.is_cuda()) fail("target {}: the default GPU rules need a CUDA target", target.str());
}

}  // namespace

Trace default_gpu_trace(const loop::PrimFunc& func, const Target& target) {
  check_cuda(target);
  Schedule sch(func);
  for (const std::string& name : get_block_names(func)) schedule_block(sch, name);
  return sch.trace();
}

loop::PrimFunc default_gpu_schedule(loop::PrimFunc func, const Target& target) {
  check_cuda(target);
  Schedule sch(func);
  for (const std::string& name : get_block_names(func)) schedule_block(sch, name);
  return sch.func();
}

}  // namespace minic::schedule
