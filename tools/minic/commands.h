// The subcommands of the `minic` tool. Course module 1.
//
// Each subcommand lives in its own file: it declares its options on a CLI11 subcommand
// and returns how to run it. main.cpp parses the command line and runs the one chosen.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace minic::cli {

struct Command {
  CLI::App* app = nullptr;   // the subcommand; app->parsed() tells whether it was chosen
  std::function<int()> run;  // runs it and returns the exit status
};

Command add_inspect_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_opt_command(CLI::App& app);
Command add_viz_command(CLI::App& app);
Command add_bench_command(CLI::App& app);
Command add_schedule_command(CLI::App& app);
Command add_compile_command(CLI::App& app);
Command add_tune_command(CLI::App& app);
Command add_db_command(CLI::App& app);
Command add_exercises_command(CLI::App& app);
Command add_explain_command(CLI::App& app);
Command add_report_command(CLI::App& app);
Command add_quantize_command(CLI::App& app);

// What `minic --version` prints: minic's, LLVM's and the CUDA toolkit's versions, and
// the CUDA driver found at run time.
std::string version_text();

}  // namespace minic::cli
