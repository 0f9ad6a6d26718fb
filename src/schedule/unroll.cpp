// unroll: a loop that code generation writes out iteration by iteration.
//
// Course module 4 (loop transformations). The primitive only marks the loop; the unroll
// loop pass (or the backend) copies its body once per iteration, which removes the loop's
// counter and branch and lets later passes fold the constant indices.
//
// Before, unroll(k.1):
//   for k.1 in 0..4 {
//     block C(vi = spatial(64) i, vk = reduce(32) k.0 * 4 + k.1) { ... }
// After:
//   unrolled for k.1 in 0..4 {
//     block C(vi = spatial(64) i, vk = reduce(32) k.0 * 4 + k.1) { ... }
//
// Preconditions: the loop exists and is not bound to a GPU axis. Unrolling keeps the
// order of iterations, so any loop can be unrolled; one whose extent is not a constant is
// left to the backend (it may unroll by a factor and keep a remainder loop).
//
// Algorithm: rebuild the loop with kind `unrolled`, all else kept.
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#include "minic/schedule/primitives.h"

#include "loop_tree.h"
#include "minic/support/error.h"

namespace minic::schedule {

void unroll(PrimFunc& func, const Expr& loop) {
  std::vector<loop::Stmt> path = loop_path(func, loop, "unroll");
  const loop::For& node = *path.back().as<loop::For>();
  if (node.for_kind == loop::ForKind::thread_binding) {
    fail("unroll: loop {} is bound to {}", loop_name(loop), node.thread_axis);
  }
  commit_body(func, replace_stmt(func.body, path.back(),
                                 with_loop_kind(node, loop::ForKind::unrolled, "")),
              "unroll");
}

}  // namespace minic::schedule
