// bind: a loop whose iterations become GPU thread blocks or threads.
//
// Course module 4 (scheduling; GPU code generation is module 6). A loop bound to
// blockIdx.x runs one iteration per thread block of the launch grid; a loop bound to
// threadIdx.x one per thread of a block. CUDA code generation turns the loop into the
// built-in index; the loop interpreter runs the threads of a block in lock step between
// barriers.
//
// Before, bind(i.0, "blockIdx.x") and bind(i.1, "threadIdx.x"):
//   for i.0 in 0..32 {
//     for i.1 in 0..32 {
//       block Y(v = spatial(1024) i.0 * 32 + i.1) { Y[v] = X[v] * 2.0 }
// After:
//   for i.0 in 0..32 bind(blockIdx.x) {
//     for i.1 in 0..32 bind(threadIdx.x) {
//       block Y(v = spatial(1024) i.0 * 32 + i.1) { Y[v] = X[v] * 2.0 }
//
// Preconditions (each refused with an Error before anything changes):
//   - the axis is one of blockIdx.x/y/z, threadIdx.x/y/z; the loop is not parallel (CPU
//     threads) and not already bound to another axis (binding again to its own axis is
//     allowed and changes nothing);
//   - no reduction variable of a block below is bound to it (the threads or thread blocks
//     would race on the accumulator), unless it has one iteration (one thread reduces:
//     how the partials of rfactor are summed);
//   - a blockIdx loop is not inside a threadIdx loop; a threadIdx loop holds no blockIdx
//     loop; no loop around or inside is bound to the same axis, except a threadIdx loop
//     of the same constant extent: then the inner loop is the same thread again, each
//     thread of the outer loop running one iteration of the inner one, its own (how the
//     threads of a block copy a tile into shared memory together, under the loops that
//     give each thread its outputs);
//   - its iterations are independent (iteration_analysis.h; one iteration always is). A
//     thread block's shared and local buffers are its own (for blockIdx) and a thread's
//     local buffers are its own (for threadIdx): GPU memory of those scopes does not
//     outlive them, so the test leaves them out.
//
// Algorithm: check, then rebuild the loop with kind `thread_binding` and the axis.
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#include "minic/schedule/primitives.h"

#include "iteration_analysis.h"
#include "loop_tree.h"
#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/gpu_axis.h"
#include "minic/support/error.h"

#include <algorithm>
#include <iterator>

namespace minic::schedule {

void bind(PrimFunc& func, const Expr& loop, const std::string& thread_axis) {
  if (!loop::gpu_axis(thread_axis)) {
    fail("bind: '{}' is not a GPU axis (blockIdx.x/y/z or threadIdx.x/y/z)", thread_axis);
  }
  std::vector<loop::Stmt> path = loop_path(func, loop, "bind");
  const loop::For& node = *path.back().as<loop::For>();
  std::string name = loop_name(loop);
  if (node.for_kind == loop::ForKind::parallel) {
    fail("bind: loop {} is parallel (CPU threads); it cannot also be a GPU axis", name);
  }
  if (node.for_kind == loop::ForKind::thread_binding) {
    if (node.thread_axis == thread_axis) return;
    fail("bind: loop {} is already bound to {}", name, node.thread_axis);
  }
  std::optional<int64_t> extent = loop::as_const_int(node.extent);
  // One iteration is one thread: nothing to race with (a reduction by one thread).
  bool single = extent && *extent == 1;
  if (std::string use = find_reduction_use(node); !use.empty() && !single) {
    fail("bind: loop {} feeds {}: the GPU threads would race on the accumulator", name, use);
  }
  bool block_axis = loop::is_block_axis(thread_axis);
  // The same thread again: a threadIdx loop of the same axis and constant extent.
  auto same_thread = [&](const loop::For& other) {
    return !block_axis && extent && other.thread_axis == thread_axis &&
           loop::as_const_int(other.extent) == extent;
  };
  auto conflicts = [&](const loop::For& other) {
    if (other.for_kind != loop::ForKind::thread_binding || same_thread(other)) return false;
    return other.thread_axis == thread_axis || (block_axis && !loop::is_block_axis(other.thread_axis));
  };
  for (const loop::For* around : loops_on_path(path)) {
    if (around != &node && conflicts(*around)) {
      fail("bind: loop {} is inside loop {}, bound to {}; it cannot be bound to {}", name,
           loop_name(around->var), around->thread_axis, thread_axis);
    }
  }
  auto conflicts_below = [&](const loop::For& other) {
    if (other.for_kind != loop::ForKind::thread_binding || same_thread(other)) return false;
    return other.thread_axis == thread_axis || (!block_axis && loop::is_block_axis(other.thread_axis));
  };
  if (const loop::For* inner = find_loop_where(node.body, conflicts_below)) {
    fail("bind: loop {} holds loop {}, bound to {}; it cannot be bound to {}", name,
         loop_name(inner->var), inner->thread_axis, thread_axis);
  }
  IndependenceOptions options;
  options.private_scopes = {loop::MemoryScope::local};
  if (block_axis) options.private_scopes.push_back(loop::MemoryScope::shared);
  std::string reason = single ? "" : find_dependence(path, options);
  if (!reason.empty()) {
    fail("bind: cannot show that the iterations of loop {} are independent: {}", name, reason);
  }
  commit_body(func, replace_stmt(func.body, path.back(),
                                 with_loop_kind(node, loop::ForKind::thread_binding, thread_axis)),
              "bind");
}

}  // namespace minic::schedule
