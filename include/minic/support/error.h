// Errors in minic: an exception type carrying a message for the user, and one for bugs.
// Course module 1.
//
// Bad input (a malformed model, an unknown op, a shape that does not fit) is reported by
// throwing minic::Error with a message that names the file, node, op and reason. The CLI
// catches it at its boundary and prints `error: <message>` with exit status 2. Nothing
// in minic aborts on bad input; assertions (MINIC_CHECK) guard only minic's own invariants.
//
// A broken invariant of minic itself (a failed MINIC_CHECK, a compute rule whose stage has
// the wrong type, IR that a pass left invalid) is an InternalError, whose message starts
// with "internal error (a bug in minic): ". It is an Error too, so the CLI reports it the
// same way; code that falls back on a named refusal (NoComputeRule, TraceError) never
// catches it, so a bug surfaces instead of being taken for a refusal.
//
// Chapter: docs/module1-overview.md#support-code-srcsupport
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

// A bug in minic: an invariant of its own that does not hold.
class InternalError : public Error {
 public:
  // `reason` without the "internal error (a bug in minic): " prefix, which this adds.
  explicit InternalError(const std::string& reason);
  // The message without the prefix: what a caller adding context puts after its own.
  const std::string& reason() const { return reason_; }

 private:
  std::string reason_;
};

// Throws InternalError with a fmt-formatted message (the prefix is added).
template <typename... Args>
[[noreturn]] void internal_fail(fmt::format_string<Args...> format, Args&&... args) {
  throw InternalError(fmt::format(format, std::forward<Args>(args)...));
}

// An internal invariant of minic itself (what MINIC_CHECK calls). Unlike fail(), a failed
// check is a bug in minic: it throws InternalError, and the message says so.
[[noreturn]] void internal_error(const char* condition, const char* file, int line);

}  // namespace minic

#define MINIC_CHECK(condition)                                          \
  do {                                                                  \
    if (!(condition)) ::minic::internal_error(#condition, __FILE__, __LINE__); \
  } while (false)
