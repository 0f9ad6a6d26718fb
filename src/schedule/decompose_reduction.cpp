// PLACEHOLDER (lead): lets the library link while this primitive is written. Replace this
// whole file with the real primitive.
#include "minic/schedule/primitives.h"
#include "minic/support/error.h"
namespace minic::schedule {
std::string decompose_reduction(PrimFunc&, const std::string&, const Expr&) { fail("decompose_reduction: not written yet"); }
}  // namespace minic::schedule
