// PLACEHOLDER (lead): lets the library link while this primitive is written. Replace this
// whole file with the real primitive.
#include "minic/schedule/primitives.h"
#include "minic/support/error.h"
namespace minic::schedule {
Expr fuse(PrimFunc&, const std::vector<Expr>&) { fail("fuse: not written yet"); }
}  // namespace minic::schedule
