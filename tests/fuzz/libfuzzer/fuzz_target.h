// What minic's libFuzzer entry points share: the line between an expected refusal and a
// finding. Course module 2 (the graph text, the ONNX frontend) and 3-4 (the loop IR text,
// schedule traces).
//
// A fuzz input is any bytes. minic must answer each with a value or a minic::Error naming
// the reason (DESIGN.md rule 7). So, for every entry point of this folder:
//   - minic::Error is an expected outcome: the input was refused;
//   - an InternalError (support/error.h), or an Error whose message says it is one (the
//     frontend adds the file name to a message by throwing a new Error), is a finding;
//   - any other exception, a crash, or a sanitizer report is a finding;
//   - a check of the entry point that fails (a printed text that does not parse back) is
//     a finding.
// A finding prints what failed and aborts, so libFuzzer saves the input as a crash and
// the replay driver (replay_main.cpp) exits with a failure.
//
// Chapter: docs/module2-graph-ir.md#libfuzzer-targets-every-parser-under-the-sanitizers
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "minic/support/error.h"

namespace minic::fuzz {

// Prints a finding and aborts. `detail` is cut to a few thousand characters: a fuzz
// input can be large, and the head of it says enough.
[[noreturn]] inline void finding(std::string_view target, std::string_view what,
                                 std::string_view detail = {}) {
  constexpr size_t kMaxDetail = 4000;
  std::string shown(detail.substr(0, kMaxDetail));
  if (detail.size() > kMaxDetail) shown += "\n...(cut)";
  std::fprintf(stderr, "fuzz finding in %.*s: %.*s\n%s\n", static_cast<int>(target.size()),
               target.data(), static_cast<int>(what.size()), what.data(), shown.c_str());
  std::abort();
}

// What the message of an InternalError says (support/error.h).
inline constexpr std::string_view kInternalMarker = "internal error (a bug in minic)";

// True if `error` reports a bug in minic rather than bad input. Some callers add context to
// a message by throwing a new Error (the frontend puts the file name first), so an internal
// error from below them arrives as a plain Error that says it is one. But a message may
// also quote the input (an attribute's bad value): when the input holds the phrase itself,
// only the type counts.
inline bool is_internal(const Error& error, std::string_view input) {
  if (dynamic_cast<const InternalError*>(&error) != nullptr) return true;
  if (input.find(kInternalMarker) != std::string_view::npos) return false;
  return std::string_view(error.what()).find(kInternalMarker) != std::string_view::npos;
}

// Runs `body` on one input: a minic::Error that is not internal is a refusal (returns
// normally); anything else thrown is a finding.
template <typename Body>
void run_guarded(std::string_view target, std::string_view input, Body&& body) {
  try {
    body();
  } catch (const Error& error) {
    if (is_internal(error, input)) finding(target, "internal error", error.what());
  } catch (const std::exception& error) {
    finding(target, "an exception other than minic::Error", error.what());
  }
}

// Runs `body`, which must not throw at all (re-parsing text minic printed itself): any
// exception, minic::Error included, is a finding labelled `what`.
template <typename Body>
auto must_succeed(std::string_view target, std::string_view what, Body&& body) {
  try {
    return body();
  } catch (const std::exception& error) {
    finding(target, what, error.what());
  }
}

}  // namespace minic::fuzz
