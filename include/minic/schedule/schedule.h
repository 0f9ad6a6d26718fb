// The Schedule: primitives applied to one kernel, recorded as a trace.
//
// Course module 4. A Schedule holds a PrimFunc and transforms it with the primitives of
// primitives.h. Every call is recorded once, generically, as an Instruction of the trace
// (trace.h), so that what a student or the autotuner did can be printed and replayed:
//
//   Schedule sch(matmul);
//   BlockRef c = sch.get_block("C");
//   std::vector<LoopRef> loops = sch.get_loops(c);          // i, j, k
//   std::vector<LoopRef> i = sch.split(loops[0], {-1, 32});  // i0, i1
//   sch.reorder({i[0], loops[1], i[1]});
//   sch.vectorize(i[1]);
//   print_trace(sch.trace());    // the calls above, as text
//   sch.func();                  // the scheduled kernel
//
// BlockRef and LoopRef are trace variables: names the schedule gives to the blocks and
// loops it returned. They stay valid while the thing they name exists (a split replaces
// its loop; using the old LoopRef afterwards is an error naming the primitive).
//
// Chapter: docs/module4-schedules.md#1-schedules-are-traces
#pragma once

#include "minic/ir/loop/stmt.h"
#include "minic/schedule/trace.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace minic::schedule {

struct BlockRef {
  std::string var;
};
struct LoopRef {
  std::string var;
};

class Schedule {
 public:
  explicit Schedule(loop::PrimFunc func);

  const loop::PrimFunc& func() const { return func_; }
  const Trace& trace() const { return trace_; }

  // The primitives; see primitives.h for what each does and requires.
  BlockRef get_block(const std::string& name);
  std::vector<LoopRef> get_loops(const BlockRef& block);
  std::vector<LoopRef> split(const LoopRef& loop, const std::vector<int64_t>& factors);
  void reorder(const std::vector<LoopRef>& loops);
  LoopRef fuse(const std::vector<LoopRef>& loops);
  void vectorize(const LoopRef& loop);
  void unroll(const LoopRef& loop);
  void parallel(const LoopRef& loop);
  void bind(const LoopRef& loop, const std::string& thread_axis);
  void annotate(const LoopRef& loop, const std::string& key, int64_t value);
  void annotate(const BlockRef& block, const std::string& key, int64_t value);
  BlockRef cache_read(const BlockRef& block, int read_index, const std::string& scope);
  BlockRef cache_write(const BlockRef& block, int write_index, const std::string& scope);
  void compute_at(const BlockRef& block, const LoopRef& loop);
  void reverse_compute_at(const BlockRef& block, const LoopRef& loop);
  void compute_inline(const BlockRef& block);
  void reverse_compute_inline(const BlockRef& block);
  BlockRef decompose_reduction(const BlockRef& block, const LoopRef& loop);
  BlockRef rfactor(const BlockRef& block, const LoopRef& loop, const std::string& scope,
                   std::optional<int> factor_axis = std::nullopt);
  void storage_align(const BlockRef& block, int write_index, int axis, int64_t factor,
                     int64_t offset);

  // Applies one instruction and records it: what every method above does, and what
  // replay does line by line. The instruction's result names become trace variables
  // (fresh names are chosen when it has none). Returns the result names. Where it does
  // not apply (an unknown primitive, a bad argument, a failed precondition) throws
  // TraceError (trace.h) naming the primitive and the reason; an InternalError (a bug in
  // the primitive) passes through as it is. Either way the schedule is left as it was.
  std::vector<std::string> apply(Instruction instruction);

  // Applies every instruction of `trace` in order (TraceError at the first that does
  // not apply).
  void replay(const Trace& trace);

  // Called after every instruction the schedule applies (a typed method or a replayed
  // line), with the instruction as recorded (its result names bound) and the function
  // after it: what `minic schedule --print-after-step` prints. Setting an observer
  // replaces the one before; an empty one observes nothing.
  using StepObserver =
      std::function<void(const Instruction& step, const loop::PrimFunc& after)>;
  void observe(StepObserver observer) { observer_ = std::move(observer); }

  // The block or loop a trace variable names (Error if it names none or the other kind).
  std::string block_name(const std::string& var) const;
  loop::Expr loop_var(const std::string& var) const;

 private:
  std::string fresh_name(const std::string& hint);
  std::vector<std::string> call(std::string primitive, std::vector<TraceArg> args);

  loop::PrimFunc func_;
  Trace trace_;
  std::map<std::string, std::string> blocks_;  // trace variable → block name
  std::map<std::string, loop::Expr> loops_;    // trace variable → loop variable
  StepObserver observer_;
};

// The names of every primitive a trace may use, for help texts and errors.
std::vector<std::string> primitive_names();

}  // namespace minic::schedule
