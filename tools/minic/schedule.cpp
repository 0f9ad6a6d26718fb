// `minic schedule FILE.mloop [--emit mloop|c] [-o OUT]`: the loop IR as text, and as the
// equivalent C. Course module 3.
//
// Parses a loop IR module (include/minic/ir/loop/parser.h) and prints it again: as loop
// IR (the default), which shows the module unchanged, so print∘parse can be checked from
// the command line, or as the C a student reads beside it (`--emit c`,
// include/minic/ir/loop/c_printer.h). Applying a schedule trace (`--trace FILE.trace`)
// comes with the schedule primitives; until they exist the command has no such option.
#include "commands.h"

#include "minic/ir/loop/c_printer.h"
#include "minic/ir/loop/parser.h"
#include "minic/ir/loop/printer.h"
#include "minic/support/error.h"
#include "minic/support/file.h"

#include <fmt/format.h>

#include <memory>

namespace minic::cli {
namespace {

struct ScheduleOptions {
  std::string input;
  std::string emit = "mloop";  // "mloop" or "c"
  std::string output;
};

int run_schedule(const ScheduleOptions& options) {
  if (options.emit != "mloop" && options.emit != "c") {
    fail("--emit takes 'mloop' or 'c', not '{}'", options.emit);
  }
  loop::LoopModule module = loop::parse_loop_module(read_file(options.input), options.input);
  std::string text = options.emit == "c" ? loop::print_c(module) : loop::print_module(module);
  if (options.output.empty() || options.output == "-") {
    fmt::print("{}", text);
  } else {
    write_file(options.output, text);
  }
  return 0;
}

}  // namespace

Command add_schedule_command(CLI::App& app) {
  auto options = std::make_shared<ScheduleOptions>();
  CLI::App* sub = app.add_subcommand(
      "schedule", "Parse a loop IR module (.mloop) and print it, as loop IR or as C");
  sub->footer(
      "With no schedule the module prints unchanged. Schedule traces (--trace FILE.trace) "
      "come with the schedule primitives.");
  sub->add_option("input", options->input, "FILE.mloop")->required();
  sub->add_option("--emit", options->emit, "What to print: 'mloop' (the default) or 'c'")
      ->check(CLI::IsMember({"mloop", "c"}));
  sub->add_option("-o,--output", options->output, "Write the text here instead of stdout");
  return {sub, [options] { return run_schedule(*options); }};
}

}  // namespace minic::cli
