// Registering a schedule primitive: how a trace line reaches the function that applies it.
//
// Course module 4. Schedule::apply (schedule.h) looks a trace line's primitive up by name
// among the built-in primitives (src/schedule/instruction_table.cpp, one entry each) and
// those registered from anywhere else with MINIC_REGISTER_PRIMITIVE, then calls the
// entry's `apply` with the kernel and the line's arguments:
//
//   // interchange(loop, loop): swap two loops, one directly inside the other
//   std::vector<PrimitiveResult> interchange(PrimFunc& func, const InstructionArgs& args) {
//     args.expect_count(2);
//     reorder(func, {args.loop(1), args.loop(0)});
//     return {};
//   }
//   MINIC_REGISTER_PRIMITIVE("interchange", "interchange(loop, loop)", interchange);
//
// after which `interchange(i, j)` is a trace line like any other: replayed, printed,
// recorded, and checked like the rest (an Error thrown by `apply` is the TraceError of a
// line that does not apply; the function is verified after each line). A primitive
// composed of others, as this one, calls primitives.h; exercise m4-tile writes one.
//
// Chapter: docs/module4-schedules.md#1-schedules-are-traces
#pragma once

#include "minic/ir/loop/stmt.h"
#include "minic/schedule/trace.h"

#include <functional>
#include <string>
#include <variant>
#include <vector>

namespace minic::schedule {

class Schedule;

// A result of a primitive: a block (by name) or a loop (by its variable). The trace names
// each result with a trace variable.
struct BlockResult {
  std::string name;
};
using PrimitiveResult = std::variant<BlockResult, loop::Expr>;

// The arguments of one instruction, read by position with their kind checked: a wrong
// kind is an Error such as "split: argument 1 must be a loop, not the block b0".
class InstructionArgs {
 public:
  InstructionArgs(const Instruction& instruction, const Schedule& schedule)
      : instruction_(instruction), schedule_(schedule) {}

  size_t size() const { return instruction_.args.size(); }
  std::string block(size_t index) const;
  loop::Expr loop(size_t index) const;
  // Every argument from `first` on, each a loop.
  std::vector<loop::Expr> loops_from(size_t first) const;
  int64_t integer(size_t index) const;
  std::vector<int64_t> integers(size_t index) const;
  std::string text(size_t index) const;
  // Fails unless there are exactly `count` arguments (or at least `count`, if `or_more`).
  void expect_count(size_t count, bool or_more = false) const;

 private:
  const TraceArg& at(size_t index, const char* kind) const;
  [[noreturn]] void wrong_kind(size_t index, const char* kind) const;

  const Instruction& instruction_;
  const Schedule& schedule_;
};

struct PrimitiveEntry {
  std::string name;
  std::string usage;  // "split(loop, [factors])", for error messages and help
  std::function<std::vector<PrimitiveResult>(loop::PrimFunc&, const InstructionArgs&)> apply;
};

// What MINIC_REGISTER_PRIMITIVE makes: an object that adds `entry` to the primitives
// traces may name when it is built. A name taken already is an internal error.
struct RegisterPrimitive {
  explicit RegisterPrimitive(PrimitiveEntry entry);
};

// The primitive `name`, built in or registered; null if there is none.
const PrimitiveEntry* find_primitive(const std::string& name);

}  // namespace minic::schedule

#define MINIC_PRIMITIVE_CONCAT_INNER(a, b) a##b
#define MINIC_PRIMITIVE_CONCAT(a, b) MINIC_PRIMITIVE_CONCAT_INNER(a, b)

// Registers `apply` (std::vector<PrimitiveResult>(loop::PrimFunc&, const InstructionArgs&))
// as the primitive `name` of traces, with `usage` ("tile(loop, loop, [factors])") for its
// errors.
#define MINIC_REGISTER_PRIMITIVE(name, usage, apply)                                    \
  static const ::minic::schedule::RegisterPrimitive MINIC_PRIMITIVE_CONCAT(             \
      minic_primitive_, __LINE__)(::minic::schedule::PrimitiveEntry{name, usage, apply})
