// parallel: a loop whose iterations run on several CPU threads at once.
//
// Course module 4 (multi-threading). The primitive only marks the loop; code generation
// hands its iterations to the runtime's thread pool.
//
// Before, parallel(i):
//   for i in 0..64 {
//     for j in 0..48 {
//       block B(vi = spatial(64) i, vj = spatial(48) j) { B[vi, vj] = A[vi, vj] * 2.0 }
// After:
//   parallel for i in 0..64 {
//     for j in 0..48 {
//       block B(vi = spatial(64) i, vj = spatial(48) j) { B[vi, vj] = A[vi, vj] * 2.0 }
//
// Preconditions (each refused with an Error before anything changes):
//   - the loop is not bound to a GPU axis, is not inside a GPU-bound loop and holds none;
//   - no reduction variable of a block below is bound to it (the threads would race on
//     the accumulator);
//   - its iterations are independent: none writes what another reads or writes (the
//     dependence test of iteration_analysis.h; buffers allocated inside the loop are
//     private to an iteration).
//
// Algorithm: check, then rebuild the loop with kind `parallel`, all else kept.
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#include "minic/schedule/primitives.h"

#include "iteration_analysis.h"
#include "loop_tree.h"
#include "minic/support/error.h"

namespace minic::schedule {

void parallel(PrimFunc& func, const Expr& loop) {
  std::vector<loop::Stmt> path = loop_path(func, loop, "parallel");
  const loop::For& node = *path.back().as<loop::For>();
  std::string name = loop_name(loop);
  for (const loop::For* around : loops_on_path(path)) {
    if (around->for_kind == loop::ForKind::thread_binding) {
      fail("parallel: loop {} {} bound to {}; CPU threads do not mix with GPU axes", name,
           around == &node ? "is" : "is inside loop " + loop_name(around->var) + ",",
           around->thread_axis);
    }
  }
  const loop::For* inner = find_loop_where(node.body, [](const loop::For& candidate) {
    return candidate.for_kind == loop::ForKind::thread_binding;
  });
  if (inner) {
    fail("parallel: loop {} holds loop {}, bound to {}; CPU threads do not mix with GPU axes",
         name, loop_name(inner->var), inner->thread_axis);
  }
  if (std::string use = find_reduction_use(node); !use.empty()) {
    fail("parallel: loop {} feeds {}: the threads would race on the accumulator", name, use);
  }
  if (std::string reason = find_dependence(path, {}); !reason.empty()) {
    fail("parallel: cannot show that the iterations of loop {} are independent: {}", name,
         reason);
  }
  commit_body(func, replace_stmt(func.body, path.back(),
                                 with_loop_kind(node, loop::ForKind::parallel, "")),
              "parallel");
}

}  // namespace minic::schedule
