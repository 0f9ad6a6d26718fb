// PLACEHOLDER (lead): lets the library link while this primitive is written. Replace this
// whole file with the real primitive.
#include "minic/schedule/primitives.h"
#include "minic/support/error.h"
namespace minic::schedule {
std::string cache_read(PrimFunc&, const std::string&, int, MemoryScope) { fail("cache_read: not written yet"); }
}  // namespace minic::schedule
