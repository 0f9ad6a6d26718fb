// Schedule traces: a schedule as data.
//
// Course module 4. A trace is the list of primitive applications that turned a kernel
// into its scheduled form, with their arguments. It prints as the calls that recreate
// it, one a line, and parses back:
//
//   b0 = get_block("C")
//   i, j, k = get_loops(b0)
//   i0, i1 = split(i, [-1, 32])
//   reorder(i0, j, i1)
//   vectorize(i1)
//   c = cache_write(b0, 0, "local")
//   reverse_compute_at(c, i0)
//
// The names on the left are trace variables: they stand for the blocks and loops the
// primitives return, and later lines refer to them. Arguments are trace variables,
// integers, lists of integers `[-1, 32]` and strings `"local"`. `#` starts a comment.
//
// Replaying a trace on a fresh copy of the kernel (Schedule::replay, schedule.h) gives
// the same loop IR, so the tuning database stores traces, and `minic schedule FILE.mloop
// --trace FILE.trace` applies one from the command line.
//
// Chapter: docs/module4-schedules.md#1-schedules-are-traces
#pragma once

#include "minic/support/error.h"

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace minic::schedule {

// A trace variable used as an argument: a block or a loop returned by an earlier line.
struct TraceVar {
  std::string name;
  bool operator==(const TraceVar&) const = default;
};

// A trace that does not parse, or an instruction that does not apply to the kernel it is
// applied to (an unknown primitive, a bad argument, a failed precondition): what
// parse_trace and Schedule::apply throw, naming the line or the primitive. A caller that
// may meet a stale trace (a tuning record written by another version of minic, or edited
// by hand) catches this one and schedules the kernel another way. A bug in a primitive is
// an InternalError (support/error.h), never a TraceError.
class TraceError : public Error {
 public:
  using Error::Error;
};

using TraceArg = std::variant<TraceVar, int64_t, std::vector<int64_t>, std::string>;

// One primitive application: `results = primitive(args)`.
struct Instruction {
  std::string primitive;
  std::vector<TraceArg> args;
  std::vector<std::string> results;
  bool operator==(const Instruction&) const = default;
};

struct Trace {
  std::vector<Instruction> instructions;
  bool operator==(const Trace&) const = default;
};

// One instruction as a line of text (without the newline).
std::string print_instruction(const Instruction& instruction);
// Every instruction, one a line.
std::string print_trace(const Trace& trace);

// Parses the text form; a syntax error is a TraceError naming `filename`, the line and
// column. Whether the primitives and their arguments make sense is checked when the
// trace is applied.
Trace parse_trace(const std::string& text, const std::string& filename = "<trace>");

}  // namespace minic::schedule
