// The primitives a trace may name, one entry each. Course module 4.
//
// Chapter: docs/module4-schedules.md#1-schedules-are-traces
#include "instruction_table.h"

#include "minic/schedule/primitives.h"
#include "minic/support/error.h"

namespace minic::schedule {
namespace {

const char* arg_kind(const TraceArg& arg) {
  if (std::holds_alternative<TraceVar>(arg)) return "a trace variable";
  if (std::holds_alternative<int64_t>(arg)) return "an integer";
  if (std::holds_alternative<std::vector<int64_t>>(arg)) return "a list of integers";
  return "a string";
}

MemoryScope parse_scope(const std::string& primitive, const std::string& text) {
  if (text == "global") return MemoryScope::global;
  if (text == "shared") return MemoryScope::shared;
  if (text == "local") return MemoryScope::local;
  fail("{}: memory scope must be \"global\", \"shared\" or \"local\", not \"{}\"", primitive,
       text);
}

int as_int(const std::string& primitive, int64_t value) {
  if (value < 0 || value > 1'000'000) fail("{}: index {} is out of range", primitive, value);
  return static_cast<int>(value);
}

std::vector<PrimitiveResult> loops_result(const std::vector<Expr>& loops) {
  return {loops.begin(), loops.end()};
}

// size: table (one entry a primitive; scripts/size_report.py exempts it)
std::vector<PrimitiveEntry> make_table() {
  using Args = const InstructionArgs&;
  using Results = std::vector<PrimitiveResult>;
  return {
      {"get_block", "get_block(\"name\")",
       [](PrimFunc& f, Args a) -> Results {
         a.expect_count(1);
         return {BlockResult{get_block(f, a.text(0)).name}};
       }},
      {"get_loops", "get_loops(block)",
       [](PrimFunc& f, Args a) {
         a.expect_count(1);
         return loops_result(get_loops(f, a.block(0)));
       }},
      {"split", "split(loop, [factors])",
       [](PrimFunc& f, Args a) {
         a.expect_count(2);
         return loops_result(split(f, a.loop(0), a.integers(1)));
       }},
      {"reorder", "reorder(loop, loop, ...)",
       [](PrimFunc& f, Args a) -> Results {
         a.expect_count(2, true);
         reorder(f, a.loops_from(0));
         return {};
       }},
      {"fuse", "fuse(loop, loop, ...)",
       [](PrimFunc& f, Args a) -> Results {
         a.expect_count(2, true);
         return {fuse(f, a.loops_from(0))};
       }},
      {"vectorize", "vectorize(loop)",
       [](PrimFunc& f, Args a) -> Results {
         a.expect_count(1);
         vectorize(f, a.loop(0));
         return {};
       }},
      {"unroll", "unroll(loop)",
       [](PrimFunc& f, Args a) -> Results {
         a.expect_count(1);
         unroll(f, a.loop(0));
         return {};
       }},
      {"parallel", "parallel(loop)",
       [](PrimFunc& f, Args a) -> Results {
         a.expect_count(1);
         parallel(f, a.loop(0));
         return {};
       }},
      {"bind", "bind(loop, \"threadIdx.x\")",
       [](PrimFunc& f, Args a) -> Results {
         a.expect_count(2);
         schedule::bind(f, a.loop(0), a.text(1));  // not std::bind, which ADL finds too
         return {};
       }},
      {"annotate_loop", "annotate_loop(loop, \"key\", value)",
       [](PrimFunc& f, Args a) -> Results {
         a.expect_count(3);
         annotate_loop(f, a.loop(0), a.text(1), a.integer(2));
         return {};
       }},
      {"annotate_block", "annotate_block(block, \"key\", value)",
       [](PrimFunc& f, Args a) -> Results {
         a.expect_count(3);
         annotate_block(f, a.block(0), a.text(1), a.integer(2));
         return {};
       }},
      {"cache_read", "cache_read(block, read_index, \"scope\")",
       [](PrimFunc& f, Args a) -> Results {
         a.expect_count(3);
         return {BlockResult{cache_read(f, a.block(0), as_int("cache_read", a.integer(1)),
                                        parse_scope("cache_read", a.text(2)))}};
       }},
      {"cache_write", "cache_write(block, write_index, \"scope\")",
       [](PrimFunc& f, Args a) -> Results {
         a.expect_count(3);
         return {BlockResult{cache_write(f, a.block(0), as_int("cache_write", a.integer(1)),
                                         parse_scope("cache_write", a.text(2)))}};
       }},
      {"compute_at", "compute_at(block, loop)",
       [](PrimFunc& f, Args a) -> Results {
         a.expect_count(2);
         compute_at(f, a.block(0), a.loop(1));
         return {};
       }},
      {"reverse_compute_at", "reverse_compute_at(block, loop)",
       [](PrimFunc& f, Args a) -> Results {
         a.expect_count(2);
         reverse_compute_at(f, a.block(0), a.loop(1));
         return {};
       }},
      {"compute_inline", "compute_inline(block)",
       [](PrimFunc& f, Args a) -> Results {
         a.expect_count(1);
         compute_inline(f, a.block(0));
         return {};
       }},
      {"reverse_compute_inline", "reverse_compute_inline(block)",
       [](PrimFunc& f, Args a) -> Results {
         a.expect_count(1);
         reverse_compute_inline(f, a.block(0));
         return {};
       }},
      {"decompose_reduction", "decompose_reduction(block, loop)",
       [](PrimFunc& f, Args a) -> Results {
         a.expect_count(2);
         return {BlockResult{decompose_reduction(f, a.block(0), a.loop(1))}};
       }},
      {"rfactor", "rfactor(block, loop, \"scope\"[, factor_axis])",
       [](PrimFunc& f, Args a) -> Results {
         a.expect_count(3, true);
         if (a.size() > 4) fail("rfactor: takes 3 or 4 arguments, not {}", a.size());
         std::optional<int> axis;
         if (a.size() == 4) axis = as_int("rfactor", a.integer(3));
         return {BlockResult{
             rfactor(f, a.block(0), a.loop(1), parse_scope("rfactor", a.text(2)), axis)}};
       }},
      {"storage_align", "storage_align(block, write_index, axis, factor, offset)",
       [](PrimFunc& f, Args a) -> Results {
         a.expect_count(5);
         storage_align(f, a.block(0), as_int("storage_align", a.integer(1)),
                       as_int("storage_align", a.integer(2)), a.integer(3), a.integer(4));
         return {};
       }},
  };
}

}  // namespace

const std::vector<PrimitiveEntry>& primitive_table() {
  static const std::vector<PrimitiveEntry> table = make_table();
  return table;
}

namespace {
// Registrations run while static objects are built, before main: the list is built on
// first use, whichever file registers first.
std::vector<PrimitiveEntry>& registered_list() {
  static std::vector<PrimitiveEntry> registered;
  return registered;
}
}  // namespace

const std::vector<PrimitiveEntry>& registered_primitives() { return registered_list(); }

RegisterPrimitive::RegisterPrimitive(PrimitiveEntry entry) {
  if (find_primitive(entry.name)) {
    internal_fail("the schedule primitive '{}' is registered twice", entry.name);
  }
  registered_list().push_back(std::move(entry));
}

const PrimitiveEntry* find_primitive(const std::string& name) {
  for (const auto* list : {&primitive_table(), &registered_primitives()}) {
    for (const PrimitiveEntry& entry : *list) {
      if (entry.name == name) return &entry;
    }
  }
  return nullptr;
}

const TraceArg& InstructionArgs::at(size_t index, const char* kind) const {
  if (index >= instruction_.args.size()) {
    fail("{}: argument {} ({}) is missing", instruction_.primitive, index + 1, kind);
  }
  return instruction_.args[index];
}

void InstructionArgs::wrong_kind(size_t index, const char* kind) const {
  const TraceArg& arg = instruction_.args[index];
  std::string what = arg_kind(arg);
  if (const auto* var = std::get_if<TraceVar>(&arg)) what += " (" + var->name + ")";
  fail("{}: argument {} must be {}, not {}", instruction_.primitive, index + 1, kind, what);
}

std::string InstructionArgs::block(size_t index) const {
  const auto* var = std::get_if<TraceVar>(&at(index, "a block"));
  if (!var) wrong_kind(index, "a block");
  return schedule_.block_name(var->name);
}

loop::Expr InstructionArgs::loop(size_t index) const {
  const auto* var = std::get_if<TraceVar>(&at(index, "a loop"));
  if (!var) wrong_kind(index, "a loop");
  return schedule_.loop_var(var->name);
}

std::vector<loop::Expr> InstructionArgs::loops_from(size_t first) const {
  std::vector<loop::Expr> loops;
  for (size_t i = first; i < size(); ++i) loops.push_back(loop(i));
  return loops;
}

int64_t InstructionArgs::integer(size_t index) const {
  const auto* value = std::get_if<int64_t>(&at(index, "an integer"));
  if (!value) wrong_kind(index, "an integer");
  return *value;
}

std::vector<int64_t> InstructionArgs::integers(size_t index) const {
  const auto* list = std::get_if<std::vector<int64_t>>(&at(index, "a list of integers"));
  if (!list) wrong_kind(index, "a list of integers");
  return *list;
}

std::string InstructionArgs::text(size_t index) const {
  const auto* text = std::get_if<std::string>(&at(index, "a string"));
  if (!text) wrong_kind(index, "a string");
  return *text;
}

void InstructionArgs::expect_count(size_t count, bool or_more) const {
  size_t given = size();
  if (given == count || (or_more && given > count)) return;
  fail("{}: takes {}{} argument{}, given {}", instruction_.primitive, or_more ? "at least " : "",
       count, count == 1 ? "" : "s", given);
}

}  // namespace minic::schedule
