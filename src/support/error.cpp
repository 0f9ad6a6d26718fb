#include "minic/support/error.h"

namespace minic {

void internal_error(const char* condition, const char* file, int line) {
  throw Error(fmt::format("internal error (a bug in minic): check '{}' failed at {}:{}",
                          condition, file, line));
}

}  // namespace minic
