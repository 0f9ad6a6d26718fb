// vectorize: a loop whose iterations become the lanes of vector instructions.
//
// Course module 4 (vectorisation). The primitive only marks the loop; the loop pass that
// lowers vector loops turns its body into vector expressions (ramp, broadcast).
//
// Before, vectorize(i.1):
//   for i.0 in 0..128 {
//     for i.1 in 0..8 {
//       block Z(v = spatial(1024) i.0 * 8 + i.1) { Z[v] = X[v] + Y[v] }
// After:
//   for i.0 in 0..128 {
//     vectorized for i.1 in 0..8 {
//       block Z(v = spatial(1024) i.0 * 8 + i.1) { Z[v] = X[v] + Y[v] }
//
// Preconditions (each refused with an Error before anything changes):
//   - the loop has a constant extent (the vector width) and is not bound to a GPU axis;
//   - no reduction variable of a block below is bound to it (the lanes would race on the
//     accumulator);
//   - it holds no parallel or GPU-bound loop;
//   - its iterations are independent: no lane writes what another lane reads or writes
//     (the dependence test of iteration_analysis.h).
//
// Algorithm: check, then rebuild the loop with kind `vectorized`, all else kept.
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#include "minic/schedule/primitives.h"

#include "iteration_analysis.h"
#include "loop_tree.h"
#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/printer.h"
#include "minic/support/error.h"

namespace minic::schedule {

void vectorize(PrimFunc& func, const Expr& loop) {
  std::vector<loop::Stmt> path = loop_path(func, loop, "vectorize");
  const loop::For& node = *path.back().as<loop::For>();
  std::string name = loop_name(loop);
  if (node.for_kind == loop::ForKind::thread_binding) {
    fail("vectorize: loop {} is bound to {}", name, node.thread_axis);
  }
  if (!loop::as_const_int(node.extent)) {
    fail("vectorize: loop {} needs a constant extent (the vector width); it has {}", name,
         loop::print_expr(node.extent));
  }
  if (std::string use = find_reduction_use(node); !use.empty()) {
    fail("vectorize: loop {} feeds {}: the lanes would race on the accumulator", name, use);
  }
  const loop::For* inner = find_loop_where(node.body, [](const loop::For& candidate) {
    return candidate.for_kind == loop::ForKind::parallel ||
           candidate.for_kind == loop::ForKind::thread_binding;
  });
  if (inner) {
    fail("vectorize: loop {} holds loop {}, which is {}; a vector loop cannot hold it", name,
         loop_name(inner->var), inner->for_kind == loop::ForKind::parallel
                                    ? std::string("parallel")
                                    : "bound to " + inner->thread_axis);
  }
  if (std::string reason = find_dependence(path, {}); !reason.empty()) {
    fail("vectorize: cannot show that the iterations of loop {} are independent: {}", name,
         reason);
  }
  commit_body(func, replace_stmt(func.body, path.back(),
                                 with_loop_kind(node, loop::ForKind::vectorized, "")),
              "vectorize");
}

}  // namespace minic::schedule
