// PLACEHOLDER (lead): lets the library link while this primitive is written. Replace this
// whole file with the real primitive.
#include "minic/schedule/primitives.h"
#include "minic/support/error.h"
namespace minic::schedule {
void storage_align(PrimFunc&, const std::string&, int, int, int64_t, int64_t) { fail("storage_align: not written yet"); }
}  // namespace minic::schedule
