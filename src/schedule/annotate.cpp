// PLACEHOLDER (lead): lets the library link while this primitive is written. Replace this
// whole file with the real primitive.
#include "minic/schedule/primitives.h"
#include "minic/support/error.h"
namespace minic::schedule {
void annotate_loop(PrimFunc&, const Expr&, const std::string&, int64_t) { fail("annotate: not written yet"); }
void annotate_block(PrimFunc&, const std::string&, const std::string&, int64_t) { fail("annotate: not written yet"); }
}  // namespace minic::schedule
