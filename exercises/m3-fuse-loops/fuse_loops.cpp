// Exercise m3-fuse-loops: the loop pass `fuse-loops`, which makes two neighbouring loops
// over the same range one loop, where that keeps the results. Course module 3.
//
// exercises/m3-fuse-loops/README.md gives the task and the rule that says when fusing is
// safe; this file is where it is done. The pass is registered already (the last line),
// so `minic schedule FILE --passes fuse-loops` runs it: as given, it changes nothing, and
// the exercise's tests fail.
//
// Before:                          After:
//   for i in 0..64 {                 for i in 0..64 {
//     T[i] = X[i] * 2.0                T[i] = X[i] * 2.0
//   }                                  Y[i] = T[i] + 1.0
//   for i in 0..64 {                 }
//     Y[i] = T[i] + 1.0
//   }
//
// Chapter: docs/module3-loop-ir.md#2-walking-and-rewriting
#include "minic/ir/loop/access.h"
#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/visitor.h"
#include "minic/passes/pass_registry.h"

namespace minic::loop {
namespace {

class LoopFuser : public IRMutator {
 public:
  // The rewrite goes here: override the visit of the node that holds neighbouring
  // statements (the node kinds are in include/minic/ir/loop/stmt.h, the mutator in
  // visitor.h, the accesses of a statement in access.h).
};

PrimFunc fuse_loops(PrimFunc func) {
  func.body = LoopFuser().mutate(func.body);
  return func;
}

}  // namespace

MINIC_REGISTER_LOOP_PASS("fuse-loops", fuse_loops,
                         "exercise m3-fuse-loops: fuse neighbouring loops over the same range");

}  // namespace minic::loop
