// The internal-error type of include/minic/support/error.h. Course module 1.
//
// Chapter: docs/module1-overview.md#support-code-srcsupport
#include "minic/support/error.h"

namespace minic {

InternalError::InternalError(const std::string& reason)
    : Error("internal error (a bug in minic): " + reason), reason_(reason) {}

void internal_error(const char* condition, const char* file, int line) {
  internal_fail("check '{}' failed at {}:{}", condition, file, line);
}

}  // namespace minic
