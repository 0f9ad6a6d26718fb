// The Schedule: applying primitives through the instruction table and recording the
// trace. Course module 4.
//
// Every method is one call of `apply` with an Instruction, so a method call and a replayed
// trace line take the same path: look the primitive up (instruction_table.cpp), read and
// check its arguments, run it on a copy of the function, and only if it succeeds keep the
// new function, bind the result names and append the instruction to the trace, then tell
// the observer, if there is one. A failed primitive leaves the schedule exactly as it was.
//
// Chapter: docs/module4-schedules.md#1-schedules-are-traces
#include "minic/schedule/schedule.h"

#include "instruction_table.h"
#include "minic/ir/loop/verifier.h"
#include "minic/support/error.h"

#include <fmt/format.h>

#include <cctype>

namespace minic::schedule {
namespace {

const PrimitiveEntry& known_primitive(const std::string& name) {
  if (const PrimitiveEntry* entry = find_primitive(name)) return *entry;
  throw TraceError(fmt::format("unknown schedule primitive '{}' (known: {})", name,
                               fmt::join(primitive_names(), ", ")));
}

// A readable trace-variable name for a result: the loop's variable name or the block's
// name, reduced to the characters a trace name may hold.
std::string hint_for(const PrimitiveResult& result) {
  std::string raw = std::holds_alternative<BlockResult>(result)
                        ? "b_" + std::get<BlockResult>(result).name
                        : std::get<loop::Expr>(result).as<loop::Var>()->name;
  std::string hint;
  for (char c : raw) hint += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (hint.empty() || std::isdigit(static_cast<unsigned char>(hint[0]))) hint = "v" + hint;
  return hint;
}

}  // namespace

std::vector<std::string> primitive_names() {
  std::vector<std::string> names;
  for (const PrimitiveEntry& entry : primitive_table()) names.push_back(entry.name);
  for (const PrimitiveEntry& entry : registered_primitives()) names.push_back(entry.name);
  return names;
}

Schedule::Schedule(loop::PrimFunc func) : func_(std::move(func)) {}

std::string Schedule::block_name(const std::string& var) const {
  auto it = blocks_.find(var);
  if (it != blocks_.end()) return it->second;
  if (loops_.count(var)) fail("trace variable {} is a loop, not a block", var);
  fail("trace variable {} is not defined (no earlier line returns it)", var);
}

loop::Expr Schedule::loop_var(const std::string& var) const {
  auto it = loops_.find(var);
  if (it != loops_.end()) return it->second;
  if (blocks_.count(var)) fail("trace variable {} is a block, not a loop", var);
  fail("trace variable {} is not defined (no earlier line returns it)", var);
}

std::string Schedule::fresh_name(const std::string& hint) {
  std::string name = hint;
  for (int suffix = 1; blocks_.count(name) || loops_.count(name); ++suffix) {
    name = fmt::format("{}_{}", hint, suffix);
  }
  return name;
}

std::vector<std::string> Schedule::apply(Instruction instruction) {
  const PrimitiveEntry& entry = known_primitive(instruction.primitive);
  loop::PrimFunc scheduled = func_;
  std::vector<PrimitiveResult> results;
  try {
    results = entry.apply(scheduled, InstructionArgs(instruction, *this));
    loop::verify_func(scheduled);
  } catch (const InternalError&) {
    throw;  // a bug in the primitive, not a refusal
  } catch (const Error& error) {
    // The argument checks and the primitives refuse with a plain Error: this is where a
    // refusal becomes the TraceError of an instruction that does not apply.
    std::string message = error.what();
    // Errors from the argument checks and the primitives already name the primitive.
    if (message.rfind(instruction.primitive + ":", 0) != 0) {
      message = fmt::format("{}: {}", instruction.primitive, message);
    }
    throw TraceError(fmt::format("{} (usage: {})", message, entry.usage));
  }
  if (!instruction.results.empty() && instruction.results.size() != results.size()) {
    throw TraceError(fmt::format("{}: gives {} result{}, but the trace names {}",
                                 instruction.primitive, results.size(),
                                 results.size() == 1 ? "" : "s", instruction.results.size()));
  }
  if (instruction.results.empty()) {
    for (const PrimitiveResult& result : results) {
      instruction.results.push_back(fresh_name(hint_for(result)));
      // Reserve the name now, so that two results never get the same one.
      loops_[instruction.results.back()] = loop::Expr();
    }
  }
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string& name = instruction.results[i];
    blocks_.erase(name);
    loops_.erase(name);
    if (const auto* block = std::get_if<BlockResult>(&results[i])) {
      blocks_[name] = block->name;
    } else {
      loops_[name] = std::get<loop::Expr>(results[i]);
    }
  }
  func_ = std::move(scheduled);
  trace_.instructions.push_back(instruction);
  if (observer_) observer_(trace_.instructions.back(), func_);
  return instruction.results;
}

void Schedule::replay(const Trace& trace) {
  for (const Instruction& instruction : trace.instructions) apply(instruction);
}

std::vector<std::string> Schedule::call(std::string primitive, std::vector<TraceArg> args) {
  return apply(Instruction{std::move(primitive), std::move(args), {}});
}

// --- the typed methods: one instruction each ------------------------------------------------

namespace {
TraceVar var(const BlockRef& block) { return {block.var}; }
TraceVar var(const LoopRef& loop) { return {loop.var}; }
std::vector<LoopRef> as_loops(const std::vector<std::string>& names) {
  std::vector<LoopRef> loops;
  for (const std::string& name : names) loops.push_back({name});
  return loops;
}
std::vector<TraceArg> loop_args(const std::vector<LoopRef>& loops) {
  std::vector<TraceArg> args;
  for (const LoopRef& loop : loops) args.push_back(var(loop));
  return args;
}
}  // namespace

BlockRef Schedule::get_block(const std::string& name) {
  return {call("get_block", {name}).at(0)};
}
std::vector<LoopRef> Schedule::get_loops(const BlockRef& block) {
  return as_loops(call("get_loops", {var(block)}));
}
std::vector<LoopRef> Schedule::split(const LoopRef& loop, const std::vector<int64_t>& factors) {
  return as_loops(call("split", {var(loop), factors}));
}
void Schedule::reorder(const std::vector<LoopRef>& loops) { call("reorder", loop_args(loops)); }
LoopRef Schedule::fuse(const std::vector<LoopRef>& loops) {
  return {call("fuse", loop_args(loops)).at(0)};
}
void Schedule::vectorize(const LoopRef& loop) { call("vectorize", {var(loop)}); }
void Schedule::unroll(const LoopRef& loop) { call("unroll", {var(loop)}); }
void Schedule::parallel(const LoopRef& loop) { call("parallel", {var(loop)}); }
void Schedule::bind(const LoopRef& loop, const std::string& thread_axis) {
  call("bind", {var(loop), thread_axis});
}
void Schedule::annotate(const LoopRef& loop, const std::string& key, int64_t value) {
  call("annotate_loop", {var(loop), key, value});
}
void Schedule::annotate(const BlockRef& block, const std::string& key, int64_t value) {
  call("annotate_block", {var(block), key, value});
}
BlockRef Schedule::cache_read(const BlockRef& block, int read_index, const std::string& scope) {
  return {call("cache_read", {var(block), int64_t{read_index}, scope}).at(0)};
}
BlockRef Schedule::cache_write(const BlockRef& block, int write_index, const std::string& scope) {
  return {call("cache_write", {var(block), int64_t{write_index}, scope}).at(0)};
}
void Schedule::compute_at(const BlockRef& block, const LoopRef& loop) {
  call("compute_at", {var(block), var(loop)});
}
void Schedule::reverse_compute_at(const BlockRef& block, const LoopRef& loop) {
  call("reverse_compute_at", {var(block), var(loop)});
}
void Schedule::compute_inline(const BlockRef& block) { call("compute_inline", {var(block)}); }
void Schedule::reverse_compute_inline(const BlockRef& block) {
  call("reverse_compute_inline", {var(block)});
}
BlockRef Schedule::decompose_reduction(const BlockRef& block, const LoopRef& loop) {
  return {call("decompose_reduction", {var(block), var(loop)}).at(0)};
}

BlockRef Schedule::rfactor(const BlockRef& block, const LoopRef& loop, const std::string& scope,
                           std::optional<int> factor_axis) {
  std::vector<TraceArg> args = {var(block), var(loop), scope};
  if (factor_axis) args.push_back(int64_t{*factor_axis});
  return {call("rfactor", args).at(0)};
}
void Schedule::storage_align(const BlockRef& block, int write_index, int axis, int64_t factor,
                             int64_t offset) {
  call("storage_align", {var(block), int64_t{write_index}, int64_t{axis}, factor, offset});
}

}  // namespace minic::schedule
