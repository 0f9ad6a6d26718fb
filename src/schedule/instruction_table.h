// The table of primitives a trace may name: for each, how its arguments are read and
// which function of primitives.h it calls. Private to src/schedule.
//
// Course module 4. This table is the one place where a trace line meets a primitive:
// Schedule::apply looks the primitive up here, so recording and replaying are written
// once for every primitive. Adding a primitive to traces is one entry.
//
// Chapter: docs/module4-schedules.md#1-schedules-are-traces
#pragma once

#include "minic/schedule/schedule.h"

#include <functional>
#include <variant>

namespace minic::schedule {

// A result of a primitive: a block (by name) or a loop (by its variable).
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

// Every primitive, in the order of primitives.h.
const std::vector<PrimitiveEntry>& primitive_table();

}  // namespace minic::schedule
