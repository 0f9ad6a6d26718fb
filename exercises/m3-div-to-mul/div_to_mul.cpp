// Exercise m3-div-to-mul: the loop pass `div-to-mul`, x / 2^k -> x * 2^-k. Course module 3.
//
// exercises/m3-div-to-mul/README.md gives the task; this file is where it is done. The
// pass is registered already (the last line), so `minic schedule FILE --passes div-to-mul`
// runs it: as given, it changes nothing, and the exercise's tests fail.
//
// Before:
//   B[vi] = A[vi] / 4.0
//   C[vi] = A[vi] / 3.0
// After:
//   B[vi] = A[vi] * 0.25
//   C[vi] = A[vi] / 3.0        (1/3 is not a float: the product would round differently)
//
// Chapter: docs/module3-loop-ir.md#2-walking-and-rewriting
#include "minic/ir/loop/visitor.h"
#include "minic/passes/pass_registry.h"

namespace minic::loop {
namespace {

class DivisionToMultiplication : public IRMutator {
 public:
  // The rewrite goes here: override the visit of the node you want to change (the node
  // kinds are in include/minic/ir/loop/expr.h, the mutator in visitor.h).
};

PrimFunc divisions_to_multiplications(PrimFunc func) {
  func.body = DivisionToMultiplication().mutate(func.body);
  return func;
}

}  // namespace

MINIC_REGISTER_LOOP_PASS("div-to-mul", divisions_to_multiplications,
                         "exercise m3-div-to-mul: x / 2^k -> x * 2^-k, exactly");

}  // namespace minic::loop
