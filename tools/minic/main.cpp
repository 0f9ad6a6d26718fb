// The `minic` command-line tool. Course module 1.
//
//   minic --version
//   minic inspect MODEL [--json]
//   minic run MODEL [--input NAME=PATH]... [--compare DIR] ...
//   minic opt MODEL.onnx|FILE.mgraph [-o OUT.mgraph]
//   minic viz MODEL.onnx|FILE.mgraph [--stage onnx|optimized] -o FILE.dot|FILE.svg
//   minic bench MODEL [--warmup N] [--repeat N] [--threads N] [--json FILE]
//   minic schedule FILE.mloop [--emit mloop|c] [-o OUT]
//   minic compile MODEL -o OUT_DIR
//   minic tune MODEL -o DB.jsonl [--trials N] [--budget 10m] [--resume] [--plot FILE.png]
//   minic db show|best|merge DB.jsonl... [-o OUT.jsonl]
//   minic exercises list|check NAME|hint NAME|progress
//
// main builds the CLI11 app from the subcommands (one file each), parses the command
// line and runs the chosen subcommand. It is the one place where errors become exit
// statuses: a bad command line or a minic::Error prints `error: <message>` on stderr and
// exits 2; a subcommand returns 0 on success and 1 when a check it was asked to make
// fails (`run --compare`).
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#include "commands.h"
#include "common_options.h"

#include "minic/support/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <vector>

namespace {

constexpr int kUsageOrInputError = 2;

int report_error(const std::string& message) {
  std::cerr << "error: " << message << "\n";
  return kUsageOrInputError;
}

std::vector<std::string> subcommand_names(const std::vector<minic::cli::Command>& commands) {
  std::vector<std::string> names;
  for (const minic::cli::Command& command : commands) names.push_back(command.app->get_name());
  return names;
}

bool is_subcommand(const std::vector<minic::cli::Command>& commands, const std::string& word) {
  std::vector<std::string> names = subcommand_names(commands);
  return std::find(names.begin(), names.end(), word) != names.end();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"minic: an AI compiler written to be read. ONNX model in, results out.",
               "minic"};
  app.set_version_flag("--version", &minic::cli::version_text,
                       "Print the versions of minic, LLVM, the CUDA toolkit and driver");
  app.require_subcommand(1);
  std::vector<minic::cli::Command> commands = {
      minic::cli::add_inspect_command(app),
      minic::cli::add_run_command(app),
      minic::cli::add_opt_command(app),
      minic::cli::add_viz_command(app),
      minic::cli::add_bench_command(app),
      minic::cli::add_schedule_command(app),
      minic::cli::add_compile_command(app),
      minic::cli::add_tune_command(app),
      minic::cli::add_db_command(app),
      minic::cli::add_exercises_command(app),
      minic::cli::add_explain_command(app),
      minic::cli::add_report_command(app),
      minic::cli::add_quantize_command(app),
  };

  // CLI11 would call an unknown word in the subcommand's place a missing subcommand.
  if (argc > 1 && argv[1][0] != '-' && !is_subcommand(commands, argv[1])) {
    return report_error(fmt::format("unknown subcommand '{}' (available: {})", argv[1],
                                    fmt::join(subcommand_names(commands), ", ")));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version arrive here as "errors" with exit status 0.
    if (e.get_exit_code() == 0) return app.exit(e);
    report_error(e.what());
    std::cerr << "Run 'minic --help' for usage.\n";
    return kUsageOrInputError;
  }

  try {
    minic::cli::load_custom_op_libraries();
    for (const minic::cli::Command& command : commands) {
      if (command.app->parsed()) return command.run();
    }
  } catch (const minic::Error& e) {
    return report_error(e.what());
  } catch (const std::exception& e) {
    return report_error(e.what());
  }
  return kUsageOrInputError;  // unreachable: CLI11 requires one subcommand
}
