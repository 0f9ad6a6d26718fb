// The default CPU schedule: a sound schedule for every kernel, without tuning.
//
// Course module 4. Each block of a lowered kernel gets the rule of its kind, applied
// through a Schedule (so the result is a trace like a tuned one):
//
//   gemm-like    a reduction whose body is C = C + A * B (MatMul, Gemm, Conv) whose
//                innermost output axis is a multiple of 16: register tiling, the
//                schedule of tutorial 4 plus staging. The last two spatial loops i, j are
//                split into io, ii (8, 4 or 2 rows) and jo, ji (16 or 32 columns: one or
//                two AVX-512 vectors); the loops become
//                  parallel jo   io   reduction loops   ii (unrolled)   ji (vectorised)
//                C's mr x nr tile accumulates in a local buffer (cache_write; the copy
//                back to C under io), zeroed before the reduction (decompose_reduction);
//                and the panel of B one column tile reads is copied, once per jo, into a
//                contiguous buffer (cache_read + compute_at: packing). The loop pass
//                compact-buffers then shrinks both staging buffers to their tiles, so
//                the accumulator lives in registers and the packed panel in cache.
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

// The index in the block's reads of the multiply's operand that the innermost spatial
// iteration variable indexes (B of C[i, j] += A[i, k] * B[k, j]), or -1.
int right_operand_read(const Block& block) {
  const auto* store = block.body.as<loop::Store>();
  const auto* mul = store->value.as<loop::Add>()->b.as<loop::Mul>();
  const loop::Var* j = nullptr;
  for (const loop::IterVar& iter : block.iter_vars) {
    if (iter.kind == loop::IterKind::spatial) j = iter.var.as<loop::Var>();
  }
  for (const loop::Expr& operand : {mul->a, mul->b}) {
    const auto* load = operand.as<loop::Load>();
    if (!load || load->indices.empty() || !loop::uses_var(load->indices.back(), j)) continue;
    for (size_t r = 0; r < block.reads.size(); ++r) {
      if (block.reads[r].buffer == load->buffer) return static_cast<int>(r);
    }
  }
  return -1;
}

// The loops of a block that a primitive made: the last `count` of get_loops.
std::vector<LoopRef> innermost_loops(Schedule& sch, const BlockRef& block, size_t count) {
  std::vector<LoopRef> loops = sch.get_loops(block);
  if (loops.size() < count) fail("expected {} loops", count);
  return {loops.end() - count, loops.end()};
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
  if (mr == 1) fail("the second spatial extent is odd");
  int64_t total_work = product(sch, roles.spatial) * product(sch, roles.reduce);

  // The tile of C accumulates in a local buffer (registers, once compact-buffers has
  // shrunk it to the tile), copied out after the reduction.
  BlockRef copy = sch.cache_write(block, 0, "local");
  std::vector<LoopRef> j_parts = sch.split(j, {-1, nr});
  std::vector<LoopRef> i_parts = sch.split(i, {-1, mr});
  std::vector<LoopRef> order(roles.spatial.begin(), roles.spatial.end() - 2);
  order.push_back(j_parts[0]);
  order.push_back(i_parts[0]);
  order.insert(order.end(), roles.reduce.begin(), roles.reduce.end());
  order.push_back(i_parts[1]);
  order.push_back(j_parts[1]);
  sch.reorder(order);
  sch.reverse_compute_at(copy, i_parts[0]);
  // Pack the panel of the right-hand operand that one column tile reads into a
  // contiguous buffer (compact-buffers shrinks the copy to the panel), once per column
  // tile: every row tile then streams it from cache at unit stride.
  int panel_read = right_operand_read(get_block(sch.func(), sch.block_name(block.var)));
  if (panel_read >= 0) {
    BlockRef pack = sch.cache_read(block, panel_read, "global");
    sch.compute_at(pack, j_parts[0]);
    sch.vectorize(innermost_loops(sch, pack, 1)[0]);
  }
  BlockRef init = sch.decompose_reduction(block, roles.reduce.front());
  // The update, the zeroing and the copy-out each work on the mr x nr tile: rows
  // unrolled, columns vectorised.
  sch.unroll(i_parts[1]);
  sch.vectorize(j_parts[1]);
  for (const BlockRef& tile_block : {init, copy}) {
    std::vector<LoopRef> tile = innermost_loops(sch, tile_block, 2);
    sch.unroll(tile[0]);
    sch.vectorize(tile[1]);
  }
  std::vector<LoopRef> outer(roles.spatial.begin(), roles.spatial.end() - 2);
  outer.push_back(j_parts[0]);
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
