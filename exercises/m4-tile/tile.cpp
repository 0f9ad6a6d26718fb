// Exercise m4-tile: the schedule primitive `tile`. Course module 4.
//
// exercises/m4-tile/README.md gives the task; this file is where it is done. The
// primitive is registered already (the last line), so a trace may name it:
//
//   i0, j0, i1, j1 = tile(i, j, [8, 16])
//
// as given, it refuses every call, and the exercise's tests fail.
//
// Chapter: docs/module4-schedules.md#1-schedules-are-traces
#include "minic/schedule/primitive_registry.h"
#include "minic/schedule/primitives.h"
#include "minic/support/error.h"

namespace minic::schedule {
namespace {

std::vector<PrimitiveResult> tile(PrimFunc& func, const InstructionArgs& args) {
  // The primitive goes here: read the loops and the factors from `args`, check the
  // preconditions, transform `func` and return the new loops, outer parts first.
  (void)func;
  (void)args;
  fail("tile: not written yet (exercise m4-tile)");
}

}  // namespace

MINIC_REGISTER_PRIMITIVE("tile", "tile(loop, loop, ..., [factors])", tile);

}  // namespace minic::schedule
