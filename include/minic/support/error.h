// Errors in minic: one exception type carrying a message for the user.
//
// Bad input (a malformed model, an unknown op, a shape that does not fit) is reported by
// throwing minic::Error with a message that names the file, node, op and reason. The CLI
// catches it at its boundary and prints `error: <message>` with exit status 2. Nothing
// in minic aborts on bad input; assertions (MINIC_CHECK) guard only minic's own invariants.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace minic {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Throws Error with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

// An internal invariant of minic itself. Unlike fail(), a failed check is a bug in minic,
// and the message says so.
[[noreturn]] void internal_error(const char* condition, const char* file, int line);

}  // namespace minic

#define MINIC_CHECK(condition)                                          \
  do {                                                                  \
    if (!(condition)) ::minic::internal_error(#condition, __FILE__, __LINE__); \
  } while (false)
