// The passes minic's source tree defines, read from the sources themselves: every
// MINIC_REGISTER_GRAPH_PASS("name", ...) in src/passes/graph/*.cpp and every
// MINIC_REGISTER_LOOP_PASS("name", ...) in src/passes/loop/*.cpp. Tests compare the
// registry with this list, so a registration the linker dropped fails a test. Course
// modules 2 and 4.
#pragma once

#include "minic/passes/pass_registry.h"
#include "minic/support/file.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

namespace minic::test {

// The names registered in the sources for `kind`, sorted (a name registered twice appears
// twice).
inline std::vector<std::string> passes_in_sources(PassKind kind) {
  namespace fs = std::filesystem;
  const bool graph = kind == PassKind::graph;
  const fs::path folder =
      fs::path(MINIC_SOURCE_DIR) / "src" / "passes" / (graph ? "graph" : "loop");
  const std::regex registration(graph ? R"re(MINIC_REGISTER_GRAPH_PASS\(\s*"([^"]+)")re"
                                      : R"re(MINIC_REGISTER_LOOP_PASS\(\s*"([^"]+)")re");
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
    if (entry.path().extension() != ".cpp") continue;
    const std::string text = read_file(entry.path().string());
    for (std::sregex_iterator it(text.begin(), text.end(), registration), end; it != end; ++it) {
      names.push_back((*it)[1]);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace minic::test
