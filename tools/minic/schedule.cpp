// `minic schedule FILE.mloop [--trace FILE.trace | --default [--target T]] [--passes a,b]
// [--emit mloop|c|cuda|trace]`: applies a schedule trace and loop passes to a loop IR module and
// prints the result. Course module 4 (and 3: the loop IR it reads and prints).
//
// Parses a loop IR module (include/minic/ir/loop/parser.h). With `--trace`, replays the
// trace (include/minic/schedule/trace.h) on one function of the module: the only one, or
// the one `--func` names; with `--default`, the trace of the default schedule for the
// target (include/minic/schedule/rules.h: the CPU or the GPU rules), so that `--emit
// trace` shows what the default rules do. `--print-after-step` prints, on stderr, each instruction and the
// function after it (an observer on the Schedule). With `--passes`, runs loop passes by
// name (include/minic/passes/pass_manager.h) on every function, after the trace, under the
// pass manager's flags (pass_flags.h: --print-ir-after, --print-ir-after-change,
// --time-passes, --verify-each[=numeric]). Then prints the module as loop IR (the default;
// with neither option the module prints unchanged, so print∘parse can be checked from the
// command line), as the equivalent C (`--emit c`, include/minic/ir/loop/c_printer.h), as
// CUDA C (`--emit cuda`, include/minic/codegen/cuda.h), or
// the trace as replayed (`--emit trace`). A bad trace is an error naming the file, the
// line, the primitive and the reason. `--check` runs every function before and after on
// the same random inputs (from `--seed`) in the loop interpreter and fails if a result
// differs: the way to see, without a GPU, that a GPU schedule is right. `--bench` compiles
// every function before and after for the CPU, as `minic run` would, and prints the median
// time of a call and its GFLOP/s (include/minic/autotune/measure.h; measured, not judged).
//
// Chapter: docs/module4-schedules.md#1-schedules-are-traces
#include "commands.h"

#include "common_options.h"
#include "pass_flags.h"
#include "run_inputs.h"

#include "minic/autotune/measure.h"
#include "minic/autotune/task.h"
#include "minic/codegen/cuda.h"
#include "minic/ir/loop/c_printer.h"
#include "minic/ir/loop/interpreter.h"
#include "minic/ir/loop/parser.h"
#include "minic/ir/loop/printer.h"
#include "minic/passes/pass_manager.h"
#include "minic/runtime/compare.h"
#include "minic/schedule/rules.h"
#include "minic/schedule/schedule.h"
#include "minic/support/error.h"
#include "minic/support/file.h"

#include <fmt/format.h>

#include <memory>

namespace minic::cli {
namespace {

struct ScheduleOptions {
  std::string input;
  std::string trace;
  bool default_schedule = false;
  CommonOptions common;  // --target, for --default and --bench; --threads, for --bench
  std::string func;
  std::string passes;
  PassFlags pass_flags;
  bool print_after_step = false;
  bool check = false;
  uint64_t seed = 0;  // --check's inputs
  bool bench = false;
  std::string emit = "mloop";  // "mloop", "c" or "trace"
  std::string output;
};

// Replays the trace on the selected function; returns the trace as applied.
schedule::Trace apply_trace(loop::LoopModule& module, const ScheduleOptions& options) {
  loop::PrimFunc& func =
      loop::select_function(module, options.func, options.input, "with --func");
  if (options.default_schedule && !options.trace.empty()) {
    fail("--trace and --default each give the schedule: choose one");
  }
  schedule::Trace trace;
  if (options.default_schedule) {
    trace = schedule::default_trace(func, options.common.parsed_target());
  } else {
    trace = schedule::parse_trace(read_file(options.trace), options.trace);
  }
  schedule::Schedule sch(func);
  if (options.print_after_step) {
    int step = 0;
    sch.observe([&step](const schedule::Instruction& instruction, const loop::PrimFunc& after) {
      fmt::print(stderr, "// ----- after step {}: {} -----\n{}", ++step,
                 schedule::print_instruction(instruction), loop::print_func(after));
    });
  }
  for (size_t i = 0; i < trace.instructions.size(); ++i) {
    try {
      sch.apply(trace.instructions[i]);
    } catch (const Error& error) {
      fail("{}: instruction {} `{}`: {}",
           options.default_schedule ? "the default schedule" : options.trace, i + 1,
           schedule::print_instruction(trace.instructions[i]), error.what());
    }
  }
  func = sch.func();
  return sch.trace();
}

// --check: `before` and `after` on the same random arguments in the loop interpreter (GPU
// code thread block by thread block, where a data race is an error); every parameter must
// end within minic run --compare's tolerance. A parameter the loop passes flattened gets
// the same elements in its new shape.
void check_same_results(const loop::PrimFunc& before, const loop::PrimFunc& after,
                        uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<Tensor> expected, actual;
  for (size_t i = 0; i < before.params.size(); ++i) {
    const loop::Buffer& param = before.params[i];
    expected.push_back(fill_tensor({param->dtype, param->shape}, Fill::random, random));
    actual.push_back(expected.back().reshaped(after.params[i]->shape));
  }
  auto pointers = [](std::vector<Tensor>& tensors) {
    std::vector<Tensor*> result;
    for (Tensor& tensor : tensors) result.push_back(&tensor);
    return result;
  };
  loop::run_func(before, pointers(expected));
  loop::run_func(after, pointers(actual));
  for (size_t i = 0; i < expected.size(); ++i) {
    TensorComparison comparison =
        compare_tensors(actual[i].reshaped(expected[i].shape()), expected[i], Tolerance{});
    if (!comparison.ok()) {
      fail("--check: {} differs after the schedule: {}", before.params[i]->name,
           describe(comparison));
    }
  }
  fmt::print(stderr, "check: @{} computes the same on the loop interpreter ({} parameters)\n",
             after.name, after.params.size());
}

// --bench: every function of the module as read and as scheduled, each compiled through the
// loop pipeline and LLVM for the CPU target and timed in a child process (autotune::measure:
// warm-up, then runs with the arguments flushed from the caches); prints the medians, the
// GFLOP/s (autotune::count_flops of the function as read) and the speed-up.
void bench_before_and_after(const loop::LoopModule& before, const loop::LoopModule& after,
                            const ScheduleOptions& options) {
  const Target target = options.common.parsed_target();
  if (target.is_cuda()) {
    fail("--bench times CPU code; a GPU schedule is checked with --check on the loop "
         "interpreter (or run on a GPU with minic run --target cuda)");
  }
  autotune::MeasureOptions measure_options;
  measure_options.threads = options.common.threads;
  for (size_t f = 0; f < before.functions.size(); ++f) {
    const std::vector<autotune::MeasureResult> results =
        autotune::measure({before.functions[f], after.functions[f]}, target, measure_options);
    const double flops = autotune::count_flops(before.functions[f]);
    auto line = [&](const char* when, const autotune::MeasureResult& result) {
      if (!result.ok) fail("--bench: @{} {}: {}", after.functions[f].name, when, result.error);
      fmt::print(stderr, "bench: @{} {:<6} {:>12.3f} us {:>10.3f} GFLOP/s\n",
                 after.functions[f].name, when, result.median_us,
                 flops / (result.median_us * 1e3));
    };
    line("before", results[0]);
    line("after", results[1]);
    const int threads = options.common.threads;
    fmt::print(stderr, "bench: @{} the schedule runs {:.2f}x as fast ({}; {})\n",
               after.functions[f].name, results[0].median_us / results[1].median_us,
               target.str(),
               threads == 0   ? std::string("every core")
               : threads == 1 ? std::string("1 thread")
                              : fmt::format("{} threads", threads));
  }
}

int run_schedule(const ScheduleOptions& options) {
  if (options.print_after_step && options.trace.empty() && !options.default_schedule) {
    fail("--print-after-step needs a schedule to replay (--trace FILE.trace or --default)");
  }
  loop::LoopModule module = loop::parse_loop_module(read_file(options.input), options.input);
  const loop::LoopModule original = module;
  schedule::Trace applied;
  if (!options.trace.empty() || options.default_schedule) applied = apply_trace(module, options);
  if (!options.passes.empty()) {
    run_passes(module, parse_loop_pass_list(options.passes),
               loop_pass_options(options.pass_flags));
  }

  if (options.check) {
    for (size_t f = 0; f < module.functions.size(); ++f) {
      check_same_results(original.functions[f], module.functions[f], options.seed);
    }
  }
  if (options.bench) bench_before_and_after(original, module, options);

  std::string text;
  if (options.emit == "c") {
    text = loop::print_c(module);
  } else if (options.emit == "cuda") {
    Target target = options.common.parsed_target();
    if (!target.is_cuda()) fail("--emit cuda needs a CUDA target (--target cuda)");
    text = codegen::emit_cuda(module, target).source;
  } else if (options.emit == "trace") {
    text = schedule::print_trace(applied);
  } else {
    text = loop::print_module(module);
  }
  if (options.output.empty() || options.output == "-") {
    fmt::print("{}", text);
  } else {
    write_file(options.output, text);
  }
  return 0;
}

std::string loop_pass_list() {
  std::string list;
  for (const PassInfo* pass : PassRegistry::all(PassKind::loop)) {
    list += fmt::format("\n  {:<20} {}", pass->name, pass->summary);
  }
  return list.empty() ? " (none yet)" : list;
}

}  // namespace

Command add_schedule_command(CLI::App& app) {
  auto options = std::make_shared<ScheduleOptions>();
  CLI::App* sub = app.add_subcommand(
      "schedule", "Apply a schedule trace and loop passes to a loop IR module (.mloop)");
  sub->footer(fmt::format(
      "With neither --trace nor --passes the module prints unchanged.\n"
      "Trace primitives: {}\nLoop passes:{}",
      fmt::join(schedule::primitive_names(), ", "), loop_pass_list()));
  sub->add_option("input", options->input, "FILE.mloop")->required();
  sub->add_option("--trace", options->trace, "A schedule trace to replay (FILE.trace)");
  sub->add_flag("--default", options->default_schedule,
                "Apply the default schedule for --target (CPU or GPU) instead of a trace");
  options->common.threads = 1;  // --bench: one core unless asked
  add_common_options(sub, options->common, {CommonOption::target, CommonOption::threads});
  sub->add_option("--func", options->func,
                  "The function the trace applies to (needed when the module has several)");
  sub->add_option("--passes", options->passes,
                  "Loop passes to run after the trace, comma-separated, or 'default' (the "
                  "default loop pipeline)");
  add_pass_flags(*sub, options->pass_flags);
  sub->add_flag("--print-after-step", options->print_after_step,
                "With --trace or --default: print (on stderr) each instruction and the "
                "function after it");
  sub->add_flag("--check", options->check,
                "Run every function before and after on the same random inputs in the loop "
                "interpreter (GPU code by thread blocks, races are errors) and fail if a "
                "result differs");
  sub->add_option("--seed", options->seed, "Seed of --check's random inputs")
      ->capture_default_str()
      ->check(non_negative());
  sub->add_flag("--bench", options->bench,
                "Compile every function before and after for the CPU and print the median "
                "time of a call and its GFLOP/s (on stderr)");
  sub->add_option("--emit", options->emit,
                  "What to print: 'mloop' (the default), 'c', 'cuda' (the CUDA C of a module "
                  "scheduled for the GPU, with --target cuda), or 'trace' (the trace replayed)")
      ->check(CLI::IsMember({"mloop", "c", "cuda", "trace"}));
  sub->add_option("-o,--output", options->output, "Write the text here instead of stdout");
  return {sub, [options] { return run_schedule(*options); }};
}

}  // namespace minic::cli
