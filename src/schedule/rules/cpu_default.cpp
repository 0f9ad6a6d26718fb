// The default CPU schedule: a sound schedule for every kernel, without tuning.
//
// Course module 4. Each block of a lowered kernel gets the rule of its kind, applied
// through a Schedule (so the result is a trace like a tuned one):
//
//   gemm-like    a reduction whose body is C = C + A * B (MatMul, Gemm, Conv): register
//                tiling. The last two spatial loops i, j are split into io, ii (ii of
//                8, 4 or 2 rows) and jo, ji (ji of 16 or 32 columns: one or two AVX-512
//                vectors); the loops become
//                  parallel (outer spatial, io fused)  jo  reduction loops  ii  ji
//                so the ii x ji tile of C stays in registers while the reduction runs:
//                ii is unrolled, ji vectorised, and the init is its own nest before the
//                reduction (decompose_reduction), so the update loop has no test in it.
//   reduction    other reductions (softmax's max and sum, pooling, ReduceMean): the init
//                split out, the spatial loops outside the reduction run in parallel, and
//                the innermost spatial loop moved inside the reduction loops when the
//                reduction is not the innermost axis, so LLVM can vectorise it.
//   elementwise  spatial loops only: the outer loops fused and run in parallel, the
//                innermost vectorised when its extent is a multiple of 16 lanes.
//
// A rule that a primitive refuses (a shape it cannot tile) is dropped for that block, and
// the block keeps the schedule it had: rules never make a kernel fail to compile.
// Parallel loops are used only where there is enough work to pay for waking the threads.
#include "minic/schedule/rules.h"

#include "../loop_tree.h"
#include "minic/ir/loop/analysis.h"
#include "minic/schedule/primitives.h"
#include "minic/schedule/schedule.h"
#include "minic/support/error.h"

#include <algorithm>

namespace minic::schedule {
namespace {

using loop::Block;

constexpr int64_t kVectorLanes = 16;         // f32 lanes of an AVX-512 register
constexpr int64_t kParallelMinWork = 16384;  // iterations below which threads do not pay

// The loop's extent (constant in lowered kernels; 0 if it is not).
int64_t extent_of(const Schedule& sch, const LoopRef& loop_ref) {
  const loop::For& node = find_loop(sch.func(), sch.loop_var(loop_ref.var), "default schedule");
  return loop::as_const_int(node.extent).value_or(0);
}

// The block's iteration variables that each loop feeds: a loop feeds a variable if the
// variable's binding uses it.
struct LoopRoles {
  std::vector<LoopRef> spatial;  // feeding spatial variables only, outermost first
  std::vector<LoopRef> reduce;   // feeding reduction variables only
  bool mixed = false;            // some loop feeds both kinds (or none is clear)
};

LoopRoles loop_roles(Schedule& sch, const BlockRef& block_ref, const std::vector<LoopRef>& loops) {
  const Block& block = get_block(sch.func(), sch.block_name(block_ref.var));
  LoopRoles roles;
  for (const LoopRef& loop_ref : loops) {
    const loop::Var* var = sch.loop_var(loop_ref.var).as<loop::Var>();
    bool feeds_spatial = false;
    bool feeds_reduce = false;
    for (const loop::IterVar& iter : block.iter_vars) {
      if (!loop::uses_var(iter.binding, var)) continue;
      (iter.kind == loop::IterKind::reduce ? feeds_reduce : feeds_spatial) = true;
    }
    if (feeds_spatial && feeds_reduce) roles.mixed = true;
    if (feeds_reduce) {
      roles.reduce.push_back(loop_ref);
    } else {
      roles.spatial.push_back(loop_ref);
    }
  }
  return roles;
}

// True if the block's body is `C[...] = C[...] + X * Y`: the shape of GEMM and convolution.
bool is_multiply_accumulate(const Block& block) {
  const auto* store = block.body.as<loop::Store>();
  if (!store || !block.init) return false;
  const auto* add = store->value.as<loop::Add>();
  if (!add) return false;
  const auto* acc = add->a.as<loop::Load>();
  return acc && acc->buffer == store->buffer && add->b.as<loop::Mul>() != nullptr;
}

int64_t product(Schedule& sch, const std::vector<LoopRef>& loops) {
  int64_t total = 1;
  for (const LoopRef& loop : loops) total *= std::max<int64_t>(extent_of(sch, loop), 1);
  return total;
}

// Makes the outermost of `outer` that has more than one iteration parallel, when the
// whole nest has enough work. (Fusing the outer loops first would give the threads more
// even chunks, but the parallel primitive cannot yet prove the iterations of a fused loop
// independent: its bindings are floordiv/floormod expressions.)
void parallelize(Schedule& sch, const std::vector<LoopRef>& outer, int64_t total_work) {
  if (total_work < kParallelMinWork) return;
  for (const LoopRef& loop : outer) {
    if (extent_of(sch, loop) > 1) {
      sch.parallel(loop);
      return;
    }
  }
}

void schedule_gemm(Schedule& sch, const BlockRef& block, const LoopRoles& roles) {
  if (roles.spatial.size() < 2 || roles.reduce.empty()) fail("needs two spatial loops");
  LoopRef i = roles.spatial[roles.spatial.size() - 2];
  LoopRef j = roles.spatial.back();
  int64_t extent_i = extent_of(sch, i);
  int64_t extent_j = extent_of(sch, j);
  int64_t nr = extent_j % (2 * kVectorLanes) == 0 ? 2 * kVectorLanes
               : extent_j % kVectorLanes == 0     ? kVectorLanes
                                                  : 0;
  if (nr == 0) fail("the innermost spatial extent is not a multiple of the vector width");
  int64_t mr = extent_i % 8 == 0 ? 8 : extent_i % 4 == 0 ? 4 : extent_i % 2 == 0 ? 2 : 1;
  int64_t total_work = product(sch, roles.spatial) * product(sch, roles.reduce);

  std::vector<LoopRef> j_parts = sch.split(j, {-1, nr});
  std::vector<LoopRef> i_parts = mr > 1 ? sch.split(i, {-1, mr}) : std::vector<LoopRef>{i};
  std::vector<LoopRef> order(roles.spatial.begin(), roles.spatial.end() - 2);
  order.push_back(i_parts[0]);
  order.push_back(j_parts[0]);
  order.insert(order.end(), roles.reduce.begin(), roles.reduce.end());
  if (mr > 1) order.push_back(i_parts[1]);
  order.push_back(j_parts[1]);
  sch.reorder(order);
  sch.decompose_reduction(block, roles.reduce.front());
  if (mr > 1) sch.unroll(i_parts[1]);
  sch.vectorize(j_parts[1]);
  std::vector<LoopRef> outer(roles.spatial.begin(), roles.spatial.end() - 2);
  outer.push_back(i_parts[0]);
  parallelize(sch, outer, total_work);
}

void schedule_reduction(Schedule& sch, const BlockRef& block, const LoopRoles& roles) {
  if (roles.reduce.empty()) fail("no reduction loop");
  int64_t total_work = product(sch, roles.spatial) * product(sch, roles.reduce);
  std::vector<LoopRef> outer = roles.spatial;
  // With the reduction outside the last spatial loop, that loop is the innermost: unit
  // stride in the output, which LLVM vectorises.
  if (!roles.spatial.empty() && extent_of(sch, roles.spatial.back()) >= kVectorLanes) {
    outer.pop_back();
    std::vector<LoopRef> order = outer;
    order.insert(order.end(), roles.reduce.begin(), roles.reduce.end());
    order.push_back(roles.spatial.back());
    sch.reorder(order);
  }
  sch.decompose_reduction(block, roles.reduce.front());
  parallelize(sch, outer, total_work);
}

void schedule_elementwise(Schedule& sch, const LoopRoles& roles) {
  std::vector<LoopRef> outer = roles.spatial;
  if (outer.empty()) return;
  int64_t total_work = product(sch, outer);
  LoopRef inner = outer.back();
  if (extent_of(sch, inner) % kVectorLanes == 0) {
    std::vector<LoopRef> parts = sch.split(inner, {-1, kVectorLanes});
    sch.vectorize(parts[1]);
    outer.back() = parts[0];
  }
  parallelize(sch, outer, total_work);
}

// Applies the rule for one block; on a refusal the schedule is left as it was.
void schedule_block(Schedule& sch, const std::string& name) {
  Schedule attempt = sch;
  try {
    BlockRef block = attempt.get_block(name);
    std::vector<LoopRef> loops = attempt.get_loops(block);
    LoopRoles roles = loop_roles(attempt, block, loops);
    if (roles.mixed || loops.empty()) return;
    const Block& node = get_block(attempt.func(), name);
    if (is_multiply_accumulate(node)) {
      try {
        Schedule gemm = attempt;
        schedule_gemm(gemm, block, roles);
        sch = std::move(gemm);
        return;
      } catch (const Error&) {
        // Not tileable as a GEMM: schedule it as a plain reduction.
      }
    }
    if (!roles.reduce.empty()) {
      schedule_reduction(attempt, block, roles);
    } else {
      schedule_elementwise(attempt, roles);
    }
    sch = std::move(attempt);
  } catch (const Error&) {
    // The rule does not fit this block; it keeps its loops as they are.
  }
}

}  // namespace

Trace default_cpu_trace(const loop::PrimFunc& func) {
  Schedule sch(func);
  for (const std::string& name : get_block_names(func)) schedule_block(sch, name);
  return sch.trace();
}

loop::PrimFunc default_cpu_schedule(loop::PrimFunc func) {
  Schedule sch(func);
  for (const std::string& name : get_block_names(func)) schedule_block(sch, name);
  return sch.func();
}

}  // namespace minic::schedule
