// The options several subcommands share, each declared once: the same name, meaning and
// help wherever a subcommand takes it. Course module 1.
//
//   --passes       graph passes to run first ('default', 'none', or names)
//   --threads      threads the compiled kernels' parallel loops run on (0: every core)
//   --records      a tuning database (from `minic tune`)
//   --input-shape  the shape of an input with symbolic dimensions (repeatable)
//   --target       the machine to compile for (include/minic/target/target.h)
//   --emulate      a CUDA target's kernels on the loop interpreter
//   --custom-ops   a plugin of custom ops to load first (include/minic/ops/custom_op.h)
//   --backends     external back ends that take nodes first (include/minic/backends/backend.h)
//
// A subcommand keeps a CommonOptions in its own options, sets the defaults that differ
// for it, and declares the ones it takes:
//
//   auto options = std::make_shared<BenchOptions>();   // has CommonOptions common;
//   add_common_options(command, options->common,
//                      {CommonOption::passes, CommonOption::threads, CommonOption::target});
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#pragma once

#include "minic/target/target.h"

#include <CLI/CLI.hpp>

#include <initializer_list>
#include <string>
#include <vector>

namespace minic::cli {

enum class CommonOption {
  passes, threads, records, input_shape, target, emulate, custom_ops, backends
};

// --threads takes 0 (every core) up to this many.
constexpr int kMaxThreads = 1024;

// The names of a comma-separated option value, in order, empty ones left out.
std::vector<std::string> comma_list(const std::string& text);

struct CommonOptions {
  std::string passes = "default";         // "default", "none", or "a,b,c"
  int threads = 0;                        // 0: every core
  std::string records;                    // a tuning database; empty: none
  std::vector<std::string> input_shapes;  // "NAME=1x3x224x224"
  std::string target = "llvm";            // a target's text; "llvm": this machine's CPU
  bool emulate = false;                   // a CUDA target's kernels on the loop interpreter
  std::string backends;                   // "toy-npu,...": external back ends; empty: none

  // The target --target names (include/minic/driver/target.h); Error naming the word
  // that is wrong.
  Target parsed_target() const;
  // The back ends --backends names, in order.
  std::vector<std::string> backend_list() const { return comma_list(backends); }
};

// Declares each option of `which` on `command`, bound to its field of `options` (whose
// values are the defaults shown by --help).
void add_common_options(CLI::App* command, CommonOptions& options,
                        std::initializer_list<CommonOption> which);

// Loads the plugins every --custom-ops of the command line names (main calls it before the
// subcommand runs, inside its error handling). Error naming a plugin that does not load.
void load_custom_op_libraries();

// A check for a numeric option (seeds, tolerances): the value is a finite number, 0 or more.
// CLI11 reports a value it refuses as "--NAME: MESSAGE", exit status 2.
CLI::Validator non_negative();

// Error unless `target` is a CPU target: what `subcommand` needs to compile and run code.
void require_cpu_target(const Target& target, const std::string& subcommand);

}  // namespace minic::cli
