// Tests of schedule traces: the text form, recording, replay and the errors of a bad
// trace (each a TraceError). Course module 4. The primitives themselves are tested in
// schedule_*_test.cpp.
#include "minic/schedule/schedule.h"

#include "minic/ir/loop/parser.h"
#include "minic/ir/loop/printer.h"
#include "minic/schedule/primitive_registry.h"
#include "minic/schedule/primitives.h"
#include "minic/schedule/rules.h"
#include "minic/support/error.h"
#include "schedule_kernels.h"
#include "target_test_util.h"

#include <catch2/catch.hpp>

namespace minic::schedule {
namespace {

const char* kMatmul = R"(func @matmul(A: f32[64,32], B: f32[32,48], C: f32[64,48]) {
  for i in 0..64 {
    for j in 0..48 {
      for k in 0..32 {
        block C(vi = spatial(64) i, vj = spatial(48) j, vk = reduce(32) k) {
          reads(A[vi, vk], B[vk, vj], C[vi, vj]) writes(C[vi, vj])
          init { C[vi, vj] = 0.0 }
          C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        }
      }
    }
  }
}
)";

loop::PrimFunc matmul() { return loop::parse_loop_module(kMatmul, "matmul.mloop").functions.at(0); }

// The message of the TraceError `action` throws: a trace that does not parse or does not
// apply is that error and no other (any other escapes and fails the test).
std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const TraceError& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("a trace prints and parses back", "[schedule_trace]") {
  const std::string text =
      "b0 = get_block(\"C\")\n"
      "i, j, k = get_loops(b0)\n"
      "i0, i1 = split(i, [-1, 32])\n"
      "reorder(i0, j, i1)\n"
      "c = cache_write(b0, 0, \"local\")\n"
      "storage_align(b0, 0, 0, 32, 1)\n"
      "odd = get_block(\"a \\\"quoted\\\" name\\n\")\n"
      "e = split(i, [])\n";
  Trace trace = parse_trace(text);
  REQUIRE(trace.instructions.size() == 8);
  CHECK(trace.instructions[2].primitive == "split");
  CHECK(trace.instructions[2].results == std::vector<std::string>{"i0", "i1"});
  CHECK(std::get<std::vector<int64_t>>(trace.instructions[2].args[1]) ==
        std::vector<int64_t>{-1, 32});
  CHECK(std::get<std::string>(trace.instructions[6].args[0]) == "a \"quoted\" name\n");
  CHECK(print_trace(trace) == text);
  CHECK(parse_trace(print_trace(trace)) == trace);
}

TEST_CASE("comments and blank lines are skipped", "[schedule_trace]") {
  Trace trace = parse_trace("# a schedule\n\n  b = get_block(\"C#1\")  # the block\n");
  REQUIRE(trace.instructions.size() == 1);
  CHECK(std::get<std::string>(trace.instructions[0].args[0]) == "C#1");
}

TEST_CASE("trace syntax errors name the file, line and column", "[schedule_trace]") {
  CHECK(error_of([] { parse_trace("b = get_block(\"C\"\n", "t.trace"); }) ==
        "t.trace:1:18: expected ')'");
  CHECK(error_of([] { parse_trace("\nsplit(i, [1, x])\n", "t.trace"); }) ==
        "t.trace:2:14: expected an integer");
  CHECK(error_of([] { parse_trace("a, b get_loops(c)\n", "t.trace"); }) ==
        "t.trace:1:6: expected '=' after the result names");
  CHECK(error_of([] { parse_trace("get_block(\"C)\n", "t.trace"); }) ==
        "t.trace:1:11: unterminated string");
  CHECK(error_of([] { parse_trace("get_block(\"C\\xzz\")\n", "t.trace"); }) ==
        "t.trace:1:15: \\x needs two hex digits");
  CHECK(error_of([] { parse_trace("get_block(\"C\\x4\")\n", "t.trace"); }) ==
        "t.trace:1:15: \\x needs two hex digits");
  Trace hex = parse_trace("b = get_block(\"C\\x41\")\n");
  CHECK(std::get<std::string>(hex.instructions[0].args[0]) == "CA");
}

TEST_CASE("a schedule records its calls and replays them to the same IR", "[schedule_trace]") {
  Schedule sch(matmul());
  BlockRef c = sch.get_block("C");
  std::vector<LoopRef> loops = sch.get_loops(c);
  REQUIRE(loops.size() == 3);
  CHECK(print_trace(sch.trace()) == "b_C = get_block(\"C\")\ni, j, k = get_loops(b_C)\n");

  Schedule replayed(matmul());
  replayed.replay(parse_trace(print_trace(sch.trace())));
  CHECK(print_trace(replayed.trace()) == print_trace(sch.trace()));
  CHECK(loop::print_func(replayed.func()) == loop::print_func(sch.func()));
  CHECK(replayed.block_name("b_C") == "C");
}

TEST_CASE("the observer sees each instruction as recorded and the function after it",
          "[schedule_trace]") {
  Schedule sch(matmul());
  std::vector<std::string> steps;
  std::vector<std::string> funcs;
  sch.observe([&](const Instruction& step, const loop::PrimFunc& after) {
    steps.push_back(print_instruction(step));
    funcs.push_back(loop::print_func(after));
  });
  sch.replay(parse_trace("b = get_block(\"C\")\ni, j, k = get_loops(b)\n"));
  sch.split({"i"}, {-1, 16});
  CHECK(steps == std::vector<std::string>{"b = get_block(\"C\")", "i, j, k = get_loops(b)",
                                          "i_0, i_1 = split(i, [-1, 16])"});
  REQUIRE(funcs.size() == 3);
  CHECK(funcs[1] == loop::print_func(matmul()));
  CHECK(funcs[2] == loop::print_func(sch.func()));
  CHECK(funcs[2] != funcs[1]);
  // A refused instruction is not observed.
  CHECK_THROWS_AS(sch.vectorize({"b"}), Error);
  CHECK(steps.size() == 3);
}

TEST_CASE("bad instructions are errors that leave the schedule unchanged", "[schedule_trace]") {
  Schedule sch(matmul());
  sch.replay(parse_trace("b = get_block(\"C\")\ni, j, k = get_loops(b)\n"));
  const std::string before = loop::print_func(sch.func());
  auto apply_line = [&](const std::string& line) {
    return error_of([&] { sch.apply(parse_trace(line).instructions.at(0)); });
  };
  CHECK_THAT(apply_line("blockize(i)"), Catch::StartsWith("unknown schedule primitive 'blockize'"));
  CHECK_THAT(apply_line("x = get_block(\"D\")"),
             Catch::Contains("get_block: @matmul has no block named 'D'"));
  CHECK_THAT(apply_line("get_loops(i)"), Catch::Contains("trace variable i is a loop, not a block"));
  CHECK_THAT(apply_line("vectorize(q)"), Catch::Contains("trace variable q is not defined"));
  CHECK_THAT(apply_line("split(b, [4])"),
             Catch::Contains("is a block, not a loop"));
  CHECK_THAT(apply_line("split(i, 4)"),
             Catch::Contains("split: argument 2 must be a list of integers, not an integer"));
  CHECK_THAT(apply_line("get_loops(b, b)"), Catch::Contains("get_loops: takes 1 argument, given 2"));
  CHECK_THAT(apply_line("x, y = get_block(\"C\")"),
             Catch::Contains("get_block: gives 1 result, but the trace names 2"));
  CHECK_THAT(apply_line("cache_read(b, 0, \"texture\")"),
             Catch::Contains("memory scope must be \"global\", \"shared\" or \"local\""));
  CHECK(loop::print_func(sch.func()) == before);
  CHECK(sch.trace().instructions.size() == 2);
}

// A primitive registered from outside the table: the header's example, swapping two loops.
std::vector<PrimitiveResult> interchange_for_test(PrimFunc& func, const InstructionArgs& args) {
  args.expect_count(2);
  reorder(func, {args.loop(1), args.loop(0)});
  return {};
}
MINIC_REGISTER_PRIMITIVE("interchange_for_test", "interchange_for_test(loop, loop)",
                         interchange_for_test);

TEST_CASE("a registered primitive is a trace line like the built-in ones", "[schedule_trace]") {
  CHECK(find_primitive("split") != nullptr);
  REQUIRE(find_primitive("interchange_for_test") != nullptr);
  CHECK(find_primitive("blockize") == nullptr);
  CHECK(primitive_names().back() == "interchange_for_test");

  const char* text = "b = get_block(\"C\")\ni, j, k = get_loops(b)\ninterchange_for_test(i, j)\n";
  Schedule sch(matmul());
  sch.replay(parse_trace(text));
  CHECK(print_trace(sch.trace()) == text);
  Schedule by_hand(matmul());
  std::vector<LoopRef> loops = by_hand.get_loops(by_hand.get_block("C"));
  by_hand.reorder({loops[1], loops[0], loops[2]});
  CHECK(loop::print_func(sch.func()) == loop::print_func(by_hand.func()));
  // Its refusals are trace errors naming it and its usage, and change nothing.
  const std::string before = loop::print_func(sch.func());
  CHECK_THAT(error_of([&] { sch.apply(parse_trace("interchange_for_test(i)").instructions[0]); }),
             Catch::Contains("interchange_for_test: takes 2 arguments, given 1 (usage: "
                             "interchange_for_test(loop, loop))"));
  CHECK(loop::print_func(sch.func()) == before);
  // A name taken already is a bug of whoever registers it.
  CHECK_THROWS_AS(RegisterPrimitive({"split", "split()", interchange_for_test}), InternalError);
}

}  // namespace minic::schedule

// --- every primitive, recorded and replayed ---------------------------------------------------

namespace minic::schedule {
namespace {

// Replays `trace` on `func`, then replays the recorded trace, printed and parsed, on a
// fresh copy: the same text must give the same trace and the same loop IR.
void check_replay_round_trip(const loop::PrimFunc& func, const Trace& trace) {
  Schedule first(func);
  first.replay(trace);
  const std::string text = print_trace(first.trace());
  Schedule second(func);
  second.replay(parse_trace(text, "recorded.trace"));
  CHECK(print_trace(second.trace()) == text);
  CHECK(loop::print_func(second.func()) == loop::print_func(first.func()));
}

loop::PrimFunc kernel(const char* text) {
  return loop::parse_loop_module(text, "kernel.mloop").functions.at(0);
}

}  // namespace

TEST_CASE("traces of every primitive replay to the same IR", "[schedule_trace]") {
  // The default CPU trace of a GEMM: get_block, get_loops, cache_write, split, reorder,
  // reverse_compute_at, cache_read, compute_at, decompose_reduction, unroll, vectorize,
  // parallel.
  loop::PrimFunc gemm = kernel(test::kGemmKernel);
  Trace gemm_trace = default_cpu_trace(gemm, testing::avx512());
  std::string gemm_text = print_trace(gemm_trace);
  for (const char* primitive : {"cache_write", "split", "reorder", "reverse_compute_at",
                                "cache_read", "compute_at", "decompose_reduction", "unroll",
                                "vectorize", "parallel"}) {
    CHECK_THAT(gemm_text, Catch::Contains(std::string(primitive) + "("));
  }
  check_replay_round_trip(gemm, gemm_trace);

  // Inlining both ways, fusing, annotating.
  check_replay_round_trip(kernel(test::kElementwiseKernel), parse_trace(R"(
add = get_block("add")
compute_inline(add)
sub = get_block("sub")
reverse_compute_inline(sub)
relu = get_block("relu_scale")
i, j = get_loops(relu)
f = fuse(i, j)
annotate_loop(f, "unroll_step", 4)
annotate_block(relu, "priority", 1)
)"));

  // Padding a buffer's strides; binding loops to GPU axes.
  check_replay_round_trip(kernel(test::kBiasReluKernel), parse_trace(R"(
t = get_block("T")
storage_align(t, 0, 0, 16, 1)
y = get_block("Y")
i, j = get_loops(y)
bind(i, "blockIdx.x")
bind(j, "threadIdx.x")
)"));
}

}  // namespace minic::schedule
