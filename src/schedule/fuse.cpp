// fuse: a perfect nest of loops becomes one loop over the product of their extents.
//
// Course module 4 (loop transformations): the inverse of split. A fused loop gives a
// parallel or GPU-bound loop enough iterations; each old variable is read back from the
// fused one as a digit of a mixed-radix number.
//
// Before, fuse(i, j):
//   for i in 0..64 {
//     for j in 0..48 {
//       block B(vi = spatial(64) i, vj = spatial(48) j) { B[vi, vj] = A[vi, vj] + 1.0 }
// After:
//   for i.j.fused in 0..3072 {
//     block B(vi = spatial(64) floordiv(i.j.fused, 48), vj = spatial(48) floormod(i.j.fused, 48)) {
//       B[vi, vj] = A[vi, vj] + 1.0
//
// Preconditions (each refused with an Error before anything changes):
//   - at least two loops, each a loop of the function, none named twice;
//   - each loop after the first is the whole body of the one before (consecutive and
//     perfectly nested);
//   - every loop starts at 0, has a constant extent of at least 1, and is not bound to a
//     GPU axis (fuse before bind).
//
// Algorithm:
//   1. The fused loop's variable, named after the loops (i.j.fused), runs over the
//      product of the extents.
//   2. Loop k is the digit floormod(floordiv(fused, e_k+1 * ... * e_n), e_k): the outermost
//      leaves out the floormod (so does a loop whose outer loops all have extent 1), the
//      innermost the floordiv, an extent 1 gives 0.
//   3. Substitute the digits in the innermost loop's body and put the fused serial loop
//      where the outermost loop was. The order of iterations is unchanged.
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#include "minic/schedule/primitives.h"

#include "loop_tree.h"
#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/printer.h"
#include "minic/support/error.h"

#include <limits>

namespace minic::schedule {
namespace {

using loop::For;
using loop::IntImm;
using loop::Stmt;

// The constant extent of a loop that starts at 0; fails otherwise.
int64_t fusable_extent(const For& node) {
  std::optional<int64_t> min = loop::as_const_int(node.min);
  std::optional<int64_t> extent = loop::as_const_int(node.extent);
  if (!min || *min != 0 || !extent) {
    fail("fuse: loop {} must run over a constant range 0..N; it runs over {}..+{}",
         loop_name(node.var), loop::print_expr(node.min), loop::print_expr(node.extent));
  }
  if (*extent < 1) {
    fail("fuse: loop {} has no iterations (extent {})", loop_name(node.var), *extent);
  }
  if (node.for_kind == loop::ForKind::thread_binding) {
    fail("fuse: loop {} is bound to {}; fuse before binding", loop_name(node.var),
         node.thread_axis);
  }
  return *extent;
}

}  // namespace

Expr fuse(PrimFunc& func, const std::vector<Expr>& loops) {
  if (loops.size() < 2) fail("fuse: needs at least two loops, got {}", loops.size());
  std::vector<Stmt> outer_path = loop_path(func, loops.front(), "fuse");
  std::vector<const For*> nest = {outer_path.back().as<For>()};
  for (size_t k = 1; k < loops.size(); ++k) {
    const For& node = find_loop(func, loops[k], "fuse");
    if (nest.back()->body.get() != &node) {
      fail("fuse: loop {} is not the whole body of loop {} (the loops must be consecutive, "
           "each the only statement of the one before)", loop_name(loops[k]),
           loop_name(loops[k - 1]));
    }
    nest.push_back(&node);
  }
  std::vector<int64_t> extents;
  std::string name;
  __int128 total = 1;
  for (const For* node : nest) {
    extents.push_back(fusable_extent(*node));
    total *= extents.back();
    name += loop_name(node->var) + ".";
  }
  if (total > std::numeric_limits<int64_t>::max()) {
    fail("fuse: the product of the extents of the loops overflows");
  }
  Expr fused = loop::Var::make(name + "fused");

  // Each old variable as a digit of the fused one.
  loop::VarMap digits;
  int64_t inner_product = 1;
  for (size_t k = nest.size(); k-- > 0;) {
    Expr digit = fused;
    if (k + 1 < nest.size() && inner_product > 1) {
      digit = loop::FloorDiv::make(digit, IntImm::make(inner_product));
    }
    // The floormod is needed only where an outer loop runs more than once.
    bool outer_runs = total / (static_cast<__int128>(inner_product) * extents[k]) > 1;
    if (k > 0 && outer_runs) digit = loop::FloorMod::make(digit, IntImm::make(extents[k]));
    if (extents[k] == 1) digit = IntImm::make(0);
    digits[nest[k]->var.as<loop::Var>()] = digit;
    inner_product *= extents[k];
  }
  Stmt body = loop::substitute(nest.back()->body, digits);
  body = For::make(fused, IntImm::make(0), IntImm::make(static_cast<int64_t>(total)),
                   loop::ForKind::serial, body);
  commit_body(func, replace_stmt(func.body, outer_path.back(), body), "fuse");
  return fused;
}

}  // namespace minic::schedule
