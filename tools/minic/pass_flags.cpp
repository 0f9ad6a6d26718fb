// The pass manager's flags for `minic opt` and `minic schedule`. Course modules 2 and 4.
//
// Chapter: docs/module2-graph-passes.md#1-the-pass-manager
#include "pass_flags.h"

#include "graph_input.h"
#include "run_inputs.h"

#include "minic/runtime/numeric_check.h"
#include "minic/support/error.h"

#include <fmt/format.h>

#include <memory>
#include <random>

namespace minic::cli {
namespace {

// Random inputs as `minic run` makes them, from one seeded generator per check.
InputMaker random_inputs() {
  auto random = std::make_shared<std::mt19937_64>(0);
  return [random](const TensorType& type) { return fill_tensor(type, Fill::random, *random); };
}

template <typename IR>
PassManagerOptions<IR> pass_options(const PassFlags& flags) {
  if (flags.verify_each != "structural" && flags.verify_each != "numeric") {
    fail("--verify-each takes 'structural' or 'numeric', not '{}'", flags.verify_each);
  }
  PassManagerOptions<IR> options;
  options.print_ir_after = flags.print_ir_after;
  options.print_ir_after_change = flags.print_ir_after_change;
  options.time_passes = flags.time_passes;
  options.print = [](const std::string& text) { fmt::print(stderr, "{}", text); };
  if (flags.verify_each == "numeric") add_numeric_check(options, random_inputs());
  return options;
}

}  // namespace

void add_pass_flags(CLI::App& command, PassFlags& flags) {
  command.add_option("--print-ir-after", flags.print_ir_after,
                     "Print the IR (on stderr) after this pass, or after 'all'");
  command.add_flag("--print-ir-after-change", flags.print_ir_after_change,
                   "With --print-ir-after: print only when the pass changed the IR");
  command.add_flag("--time-passes", flags.time_passes,
                   "Print (on stderr) how long each pass took");
  command
      .add_option("--verify-each", flags.verify_each,
                  "After each pass: 'structural' (the verifier, always on) or 'numeric' "
                  "(also compare results with the interpreter on random inputs)")
      ->expected(0, 1)
      ->default_str("structural");
}

PassManagerOptions<Graph> graph_pass_options(const PassFlags& flags) {
  return pass_options<Graph>(flags);
}

PassManagerOptions<loop::LoopModule> loop_pass_options(const PassFlags& flags) {
  return pass_options<loop::LoopModule>(flags);
}

std::vector<std::string> parse_loop_pass_list(const std::string& passes) {
  if (passes == "default") return loop::default_loop_pipeline();
  return parse_pass_list(passes);
}

}  // namespace minic::cli
