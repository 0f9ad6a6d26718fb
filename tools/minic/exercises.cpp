// `minic exercises list|check NAME|hint NAME|progress`: the course's exercises from the
// command line (exercises/README.md). Course module 1.
//
// An exercise is a folder exercises/mN-NAME/ of the source tree minic was built from: a
// README.md (the task, its first line `# mN-NAME: title`, and a `## Hint` section),
// starting code compiled into minic, and tests that lit runs (exercises/lit.cfg.py).
//   list      one line per exercise: name, module, title;
//   check     builds minic (`cmake --build` of the build folder minic was built in, unless
//             --no-build), then runs the exercise's tests on it and shows lit's report;
//             exit status 0 when they pass, 1 when they fail;
//   hint      prints the README's hint;
//   progress  builds once, runs every exercise's tests, and prints which pass.
// The tests of an exercise run on build/minic, the binary built from the student's code.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#include "commands.h"

#include "minic/support/error.h"
#include "minic/support/file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>

namespace minic::cli {
namespace {

namespace fs = std::filesystem;

struct ExercisesOptions {
  std::string name;
  bool no_build = false;
};

struct Exercise {
  std::string name;    // "m2-neg-neg"
  std::string module;  // "2"
  std::string title;   // from the README's first line
  fs::path folder;
};

fs::path exercises_folder() { return fs::path(MINIC_SOURCE_DIR) / "exercises"; }

// The exercises of the source tree, by name: each folder mN-NAME holding a README.md.
std::vector<Exercise> find_exercises() {
  std::vector<Exercise> exercises;
  if (!fs::is_directory(exercises_folder())) {
    fail("{} is not there: the exercises are read from the source tree minic was built from",
         exercises_folder().string());
  }
  for (const fs::directory_entry& entry : fs::directory_iterator(exercises_folder())) {
    const std::string name = entry.path().filename().string();
    const bool named = name.size() > 3 && name[0] == 'm' &&
                       std::isdigit(static_cast<unsigned char>(name[1])) && name[2] == '-';
    if (!entry.is_directory() || !named || !fs::exists(entry.path() / "README.md")) continue;
    std::string first_line;
    std::istringstream readme(read_file((entry.path() / "README.md").string()));
    std::getline(readme, first_line);
    const size_t colon = first_line.find(": ");
    exercises.push_back({name, name.substr(1, 1),
                         colon == std::string::npos ? first_line : first_line.substr(colon + 2),
                         entry.path()});
  }
  std::sort(exercises.begin(), exercises.end(),
            [](const Exercise& a, const Exercise& b) { return a.name < b.name; });
  return exercises;
}

const Exercise& find_exercise(const std::vector<Exercise>& exercises, const std::string& name) {
  for (const Exercise& exercise : exercises) {
    if (exercise.name == name) return exercise;
  }
  std::vector<std::string> names;
  for (const Exercise& exercise : exercises) names.push_back(exercise.name);
  fail("there is no exercise '{}' (minic exercises list shows them: {})", name,
       fmt::join(names, ", "));
}

std::string quoted(const std::string& text) { return "'" + text + "'"; }

// Builds minic and the exercises' Catch2 tests in minic's build folder, so that the tests
// see the student's latest code.
void build_minic() {
  const std::string command = fmt::format(
      "cmake --build {} --target minic-cli minic-exercise-tests", quoted(MINIC_BINARY_DIR));
  fmt::print("$ {}\n", command);
  std::fflush(stdout);
  if (std::system(command.c_str()) != 0) fail("building minic failed: the compiler says why");
}

// Runs the exercise's tests with lit on build/minic; true when they pass. Every command's
// output is shown (lit -a: a timing the tests print is part of the answer) unless `quiet`.
bool run_tests(const Exercise& exercise, bool quiet) {
  const fs::path minic = fs::path(MINIC_BINARY_DIR) / "minic";
  const std::string command = fmt::format(
      "{} {} {} --param minic={} {}{}", quoted(MINIC_PYTHON), quoted(MINIC_LIT),
      quiet ? "-q" : "-a", quoted(minic.string()),
      quoted((fs::path(MINIC_BINARY_DIR) / "exercises" / exercise.name).string()),
      quiet ? " > /dev/null 2>&1" : "");
  if (!quiet) fmt::print("$ {}\n", command);
  std::fflush(stdout);
  return std::system(command.c_str()) == 0;
}

void print_list(const std::vector<Exercise>& exercises) {
  fmt::print("{:<24} {:<7} {}\n", "exercise", "module", "task");
  for (const Exercise& exercise : exercises) {
    fmt::print("{:<24} {:<7} {}\n", exercise.name, exercise.module, exercise.title);
  }
  fmt::print("\n{} exercises in {}; `minic exercises hint NAME` gives a hint, "
             "`minic exercises check NAME` runs the tests\n",
             exercises.size(), exercises_folder().string());
}

// The README's `## Hint` section, up to the next heading.
std::string hint_of(const Exercise& exercise) {
  std::istringstream readme(read_file((exercise.folder / "README.md").string()));
  std::string line, hint;
  bool inside = false;
  while (std::getline(readme, line)) {
    if (line.starts_with("## ")) {
      if (inside) break;
      inside = line == "## Hint";
      continue;
    }
    if (inside) hint += line + "\n";
  }
  const size_t start = hint.find_first_not_of('\n');
  if (start == std::string::npos) {
    fail("{}/README.md has no '## Hint' section", exercise.folder.string());
  }
  return hint.substr(start, hint.find_last_not_of('\n') - start + 1) + "\n";
}

int check(const Exercise& exercise, bool no_build) {
  if (!no_build) build_minic();
  const bool passed = run_tests(exercise, false);
  fmt::print("\n{}: {}\n", exercise.name,
             passed ? "solved: every test passes"
                    : fmt::format("not solved yet (README: {})",
                                  (exercise.folder / "README.md").string()));
  return passed ? 0 : 1;
}

int progress(const std::vector<Exercise>& exercises, bool no_build) {
  if (!no_build) build_minic();
  int solved = 0;
  fmt::print("{:<24} {:<7} {}\n", "exercise", "module", "status");
  for (const Exercise& exercise : exercises) {
    const bool passed = run_tests(exercise, true);
    solved += passed ? 1 : 0;
    fmt::print("{:<24} {:<7} {}\n", exercise.name, exercise.module,
               passed ? "solved" : "not solved");
  }
  fmt::print("\n{} of {} exercises solved\n", solved, exercises.size());
  return 0;
}

}  // namespace

Command add_exercises_command(CLI::App& app) {
  auto options = std::make_shared<ExercisesOptions>();
  CLI::App* command = app.add_subcommand(
      "exercises", "The course's exercises: list them, check one, show a hint or the progress");
  command->require_subcommand(1);
  CLI::App* list = command->add_subcommand("list", "One line per exercise: name, module, task");
  CLI::App* check_command = command->add_subcommand(
      "check", "Build minic and run one exercise's tests; exit 1 if they fail");
  check_command->add_option("name", options->name, "The exercise (minic exercises list)")
      ->required();
  check_command->add_flag("--no-build", options->no_build, "Run the tests on minic as built");
  CLI::App* hint = command->add_subcommand("hint", "Print an exercise's hint");
  hint->add_option("name", options->name, "The exercise")->required();
  CLI::App* progress_command = command->add_subcommand(
      "progress", "Build minic, run every exercise's tests, and show which pass");
  progress_command->add_flag("--no-build", options->no_build, "Run the tests on minic as built");
  return {command, [=] {
            const std::vector<Exercise> exercises = find_exercises();
            if (list->parsed()) {
              print_list(exercises);
              return 0;
            }
            if (hint->parsed()) {
              fmt::print("{}", hint_of(find_exercise(exercises, options->name)));
              return 0;
            }
            if (check_command->parsed()) {
              return check(find_exercise(exercises, options->name), options->no_build);
            }
            return progress(exercises, options->no_build);
          }};
}

}  // namespace minic::cli
