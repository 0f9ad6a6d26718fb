// The options several subcommands share (common_options.h). Course module 1.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#include "common_options.h"

#include "minic/backends/backend.h"
#include "minic/driver/target.h"
#include "minic/ops/custom_op.h"
#include "minic/support/error.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

namespace minic::cli {

Target CommonOptions::parsed_target() const { return parse_target(target); }

std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> names;
  std::stringstream stream(text);
  for (std::string name; std::getline(stream, name, ',');) {
    if (!name.empty()) names.push_back(name);
  }
  return names;
}

namespace {

// The --custom-ops plugins: of the whole command line, since custom ops join the one op
// registry of the process.
std::vector<std::string>& custom_op_libraries() {
  static std::vector<std::string> libraries;
  return libraries;
}

}  // namespace

void load_custom_op_libraries() {
  for (const std::string& library : custom_op_libraries()) load_custom_op_library(library);
}

CLI::Validator non_negative() {
  auto check = [](std::string& text) -> std::string {
    char* end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0') return fmt::format("'{}' is not a number", text);
    // strtod reads "nan" and "inf" too: a tolerance of either would make every comparison
    // fail or pass, whatever the outputs.
    if (!std::isfinite(value)) return fmt::format("{} is not a finite number", text);
    return value < 0 ? fmt::format("{} must be 0 or more", text) : std::string();
  };
  return CLI::Validator(check, "NONNEGATIVE", "non_negative");
}

void add_common_options(CLI::App* command, CommonOptions& options,
                        std::initializer_list<CommonOption> which) {
  for (CommonOption option : which) {
    switch (option) {
      case CommonOption::passes:
        command
            ->add_option("--passes", options.passes,
                         "Graph passes to run first: 'default' (the default pipeline), 'none', "
                         "or names, comma-separated (run: 'none' by default with --backend "
                         "interp; viz: instead of --stage)")
            ->capture_default_str();
        break;
      case CommonOption::threads:
        command
            ->add_option("--threads", options.threads,
                         "Threads the compiled kernels' parallel loops run on; 0: every core")
            ->capture_default_str()
            ->check(CLI::Range(0, kMaxThreads));
        break;
      case CommonOption::records:
        command->add_option("--records", options.records,
                            "A tuning database (from `minic tune`): kernels with a record for "
                            "the target get its schedule, the others the default one (`minic "
                            "compile` keeps a copy in its directory)");
        break;
      case CommonOption::input_shape:
        command
            ->add_option("--input-shape", options.input_shapes,
                         "The shape of an input with symbolic dimensions: NAME=1x3x224x224 "
                         "(repeatable)")
            ->allow_extra_args(false);
        break;
      case CommonOption::target:
        command
            ->add_option("--target", options.target,
                         "The machine to compile for: 'llvm' (this machine's CPU), 'llvm "
                         "-mcpu=NAME [-mattr=+F,-G]' (a CPU LLVM knows: x86-64-v3, "
                         "skylake-avx512, znver4), or 'cuda [-arch=sm_XX]' (sm_80, sm_86, "
                         "sm_89, sm_90, sm_90a; 'cuda' alone: sm_90)")
            ->capture_default_str();
        break;
      case CommonOption::emulate:
        command->add_flag("--emulate", options.emulate,
                          "With --target cuda: run the kernels' GPU schedules on the loop "
                          "interpreter (thread blocks, shared memory, race checks) instead of "
                          "a GPU");
        break;
      case CommonOption::backends: {
        std::string names;
        for (const BackendInfo* info : BackendRegistry::all()) {
          names += fmt::format("\n  {}: {}", info->name, info->summary);
        }
        command->add_option("--backends", options.backends,
                            "External back ends, comma-separated, that take the nodes they "
                            "can before minic compiles the rest:" + names);
        break;
      }
      case CommonOption::custom_ops:
        command
            ->add_option("--custom-ops", custom_op_libraries(),
                         "A shared library of custom ops (ops of another domain than ONNX's) "
                         "to load first (repeatable)")
            ->allow_extra_args(false);
        break;
    }
  }
}

void require_cpu_target(const Target& target, const std::string& subcommand) {
  if (target.is_cuda()) {
    fail("--target {}: {} needs a CPU target", target.str(), subcommand);
  }
}

}  // namespace minic::cli
