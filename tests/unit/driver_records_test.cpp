// Tests of compiling with tuning records: a MatMul model compiled with a database that
// holds a hand-made schedule for its kernel takes that schedule and computes what the
// interpreter computes; a record that does not replay, a record of another CPU and a
// record of another workload leave the default schedule; a missing database is an error
// naming it. Course module 8 (the driver) with module 5 (the records).
#include "minic/driver/compile.h"

#include "minic/autotune/database.h"
#include "minic/autotune/measure.h"
#include "minic/autotune/task.h"
#include "minic/ir/graph/text.h"
#include "minic/ir/loop/printer.h"
#include "minic/ops/shape_inference.h"
#include "minic/runtime/compare.h"
#include "minic/runtime/interpreter.h"
#include "minic/schedule/rules.h"
#include "minic/schedule/schedule.h"
#include "minic/support/error.h"

#include "driver_test_util.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <random>

namespace minic {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

const char* const kMatMulModel = R"(graph g(%a: f32[64,48], %b: f32[48,96]) -> (%c: f32[64,96]) opset 17 {
  %c = MatMul(%a, %b)
  return %c
})";

Graph matmul_graph() {
  Graph graph = parse_graph(kMatMulModel, "<records test>");
  infer_shapes(graph);
  return graph;
}

// A database file in the temporary directory, unique to this process, removed at the end.
class TempDatabase {
 public:
  TempDatabase(const std::string& name, const std::vector<autotune::TuningRecord>& records)
      : path_((fs::temp_directory_path() / fmt::format("minic-records-{}-{}.jsonl", getpid(),
                                                        name))
                  .string()) {
    autotune::Database database;
    for (const autotune::TuningRecord& record : records) database.add(record);
    database.save(path_);
  }
  ~TempDatabase() { fs::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The model's one task: its kernel as lowered, and its workload key.
autotune::Task matmul_task() {
  std::vector<autotune::Task> tasks =
      autotune::extract_tasks(matmul_graph(), default_pipeline(), codegen::host_target());
  REQUIRE(tasks.size() == 1);
  return tasks[0];
}

// A schedule no rule makes: rows split by 8 with the outer loop parallel, the reduction
// split by 4 with the inner loop unrolled.
std::string hand_made_trace(const loop::PrimFunc& func) {
  schedule::Trace default_trace = schedule::default_cpu_trace(func, codegen::host_target());
  REQUIRE_FALSE(default_trace.instructions.empty());
  const schedule::Instruction& first = default_trace.instructions[0];
  REQUIRE(first.primitive == "get_block");
  const std::string block_name = std::get<std::string>(first.args.at(0));

  schedule::Schedule schedule(func);
  schedule::BlockRef block = schedule.get_block(block_name);
  std::vector<schedule::LoopRef> loops = schedule.get_loops(block);
  REQUIRE(loops.size() == 3);
  std::vector<schedule::LoopRef> rows = schedule.split(loops[0], {-1, 8});
  schedule.parallel(rows[0]);
  std::vector<schedule::LoopRef> reduction = schedule.split(loops[2], {-1, 4});
  schedule.unroll(reduction[1]);
  std::string trace = schedule::print_trace(schedule.trace());
  REQUIRE(trace != schedule::print_trace(default_trace));
  return trace;
}

autotune::TuningRecord make_record(const autotune::Task& task, const std::string& trace) {
  autotune::TuningRecord record;
  record.workload_key = task.workload_key;
  record.task_name = task.name;
  record.target = codegen::host_target().str();
  record.trace = trace;
  record.times_us = {120.0, 100.0, 110.0};
  record.median_us = 110.0;
  record.flops = task.flops;
  record.time = autotune::utc_timestamp();
  return record;
}

// Compiles the MatMul for `target` with `records` (a path; empty: none), checks its output
// against the interpreter's, and returns the compiled model.
std::unique_ptr<CompiledModel> compile_and_check(const std::string& records,
                                                 const Target& target = codegen::host_target()) {
  Graph reference = matmul_graph();
  std::vector<Tensor> inputs = testing::random_float_inputs(reference, 11);
  std::vector<Tensor> expected = interpret(reference, inputs);
  CompileOptions options;
  options.target = target;
  options.records = records;
  std::unique_ptr<CompiledModel> model = compile_model(matmul_graph(), options);
  std::vector<Tensor> actual = model->run(inputs);
  REQUIRE(actual.size() == 1);
  TensorComparison comparison = compare_tensors(actual[0], expected[0], {1e-4, 1e-5});
  INFO(describe(comparison));
  CHECK(comparison.ok());
  return model;
}

TEST_CASE("a kernel with a record gets the record's schedule", "[driver_records]") {
  autotune::Task task = matmul_task();
  TempDatabase database("tuned", {make_record(task, hand_made_trace(task.func))});

  std::unique_ptr<CompiledModel> untuned = compile_and_check("");
  std::unique_ptr<CompiledModel> tuned = compile_and_check(database.path());
  CHECK(untuned->stats().tuned_kernels == 0);
  CHECK(untuned->stats().records.empty());
  CHECK(tuned->stats().tuned_kernels == 1);
  CHECK(tuned->stats().failed_records == 0);
  CHECK(tuned->stats().records == database.path());

  // The kernel is the record's schedule after the loop passes, not the default one.
  std::string tuned_text = loop::print_module(tuned->kernels());
  CHECK(tuned_text != loop::print_module(untuned->kernels()));
  CHECK_THAT(tuned_text, Contains("parallel"));
}

TEST_CASE("the fastest successful record of the workload is the one used", "[driver_records]") {
  autotune::Task task = matmul_task();
  autotune::TuningRecord fastest = make_record(task, hand_made_trace(task.func));
  // The other records would not replay: choosing either shows as a failed record.
  autotune::TuningRecord slower = make_record(task, "b0 = get_block(\"no_such_block\")");
  slower.times_us = {500.0};
  slower.median_us = 500.0;
  autotune::TuningRecord failed = slower;
  failed.times_us.clear();
  failed.median_us = 0;
  failed.error = "crashed: signal 11 (SIGSEGV)";
  TempDatabase database("fastest", {slower, failed, fastest});
  std::unique_ptr<CompiledModel> model = compile_and_check(database.path());
  CHECK(model->stats().tuned_kernels == 1);
  CHECK(model->stats().failed_records == 0);
}

TEST_CASE("a record whose trace does not replay falls back to the default schedule",
          "[driver_records]") {
  autotune::Task task = matmul_task();
  std::unique_ptr<CompiledModel> untuned = compile_and_check("");
  // A trace that does not apply to the kernel, and one that does not even parse.
  for (const char* trace : {"b0 = get_block(\"no_such_block\")", "b0 = get_block(\"C\""}) {
    INFO(trace);
    TempDatabase database("stale", {make_record(task, trace)});
    std::unique_ptr<CompiledModel> model = compile_and_check(database.path());
    CHECK(model->stats().tuned_kernels == 0);
    CHECK(model->stats().failed_records == 1);
    CHECK(loop::print_module(model->kernels()) == loop::print_module(untuned->kernels()));
  }
}

TEST_CASE("records of another CPU or another workload are not used", "[driver_records]") {
  autotune::Task task = matmul_task();
  autotune::TuningRecord other_cpu = make_record(task, hand_made_trace(task.func));
  other_cpu.target = "llvm -mcpu=some-other-cpu";
  autotune::TuningRecord other_workload = make_record(task, hand_made_trace(task.func));
  other_workload.workload_key = "0123456789abcdef";
  TempDatabase database("others", {other_cpu, other_workload});
  std::unique_ptr<CompiledModel> model = compile_and_check(database.path());
  CHECK(model->stats().tuned_kernels == 0);
  CHECK(model->stats().failed_records == 0);
}

TEST_CASE("a record serves the target it was made for, by the target's text",
          "[driver_records]") {
  // Every x86-64 machine this runs on has AVX2, so x86-64-v3 code runs here.
  const Target avx2 = codegen::cpu_target("x86-64-v3");
  autotune::Task task = matmul_task();
  autotune::TuningRecord record = make_record(task, hand_made_trace(task.func));
  record.target = avx2.str();
  TempDatabase database("avx2", {record});
  CHECK(compile_and_check(database.path(), avx2)->stats().tuned_kernels == 1);
  CHECK(compile_and_check(database.path())->stats().tuned_kernels == 0);
}

TEST_CASE("a missing records file is an error naming it", "[driver_records]") {
  CompileOptions options;
  options.records = "/nonexistent/minic-records.jsonl";
  CHECK_THROWS_WITH(compile_model(matmul_graph(), options),
                    Contains("/nonexistent/minic-records.jsonl"));
}

}  // namespace
}  // namespace minic
