// Exercise m3-unswitch: the loop pass `unswitch`, which moves an `if` whose condition does
// not change inside a loop out of it. Course module 3.
//
// exercises/m3-unswitch/README.md gives the task; this file is where it is done. The pass
// is registered already (the last line), so `minic schedule FILE --passes unswitch` runs
// it: as given, it changes nothing, and the exercise's tests fail.
//
// Before:                              After:
//   for i in 0..4 {                      for i in 0..4 {
//     for j in 0..8 {                      if (i < 2) {
//       if (i < 2) {                         for j in 0..8 {
//         A[i, j] = 1.0                        A[i, j] = 1.0
//       }                                    }
//     }                                    }
//   }                                    }
//
// Chapter: docs/module3-loop-ir.md#2-walking-and-rewriting
#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/visitor.h"
#include "minic/passes/pass_registry.h"

namespace minic::loop {
namespace {

class Unswitcher : public IRMutator {
 public:
  // The rewrite goes here: override the visit of the node you want to change (the node
  // kinds are in include/minic/ir/loop/stmt.h, the mutator in visitor.h, uses_var and
  // substitute in analysis.h).
};

PrimFunc unswitch(PrimFunc func) {
  func.body = Unswitcher().mutate(func.body);
  return func;
}

}  // namespace

MINIC_REGISTER_LOOP_PASS("unswitch", unswitch,
                         "exercise m3-unswitch: move loop-invariant ifs out of their loops");

}  // namespace minic::loop
