// Every pass by name, graph passes and loop passes alike, each registered by one line in
// its own file.
//
// Course modules 2 and 4 (docs/module2-graph-passes.md#1-the-pass-manager). A graph pass
// rewrites a Graph in place; a loop pass takes a loop::PrimFunc to a new one, and the pass
// manager runs it on every function of a module. A pass's file ends with the one line that
// registers it, under the name `minic opt --passes` and `minic schedule --passes` know it by:
//
//   MINIC_REGISTER_GRAPH_PASS("dce", eliminate_dead_code,
//                             "remove nodes and constants whose results are never used");
//   MINIC_REGISTER_LOOP_PASS("simplify", simplify,
//                            "fold constants and simplify index arithmetic with the loop bounds");
//
// So a new pass is one new file in src/passes/graph/ or src/passes/loop/ and nothing else:
// no table to edit, and the default pipelines (src/passes/pipeline.cpp) stay as they are.
// The line makes a static object whose constructor adds the pass to the registry before
// main() starts. Such an object is kept only if the linker keeps its file, so the libraries
// holding passes are linked whole (minic_link_every_pass in CMakeLists.txt), and
// tests/unit/pass_registry_test.cpp checks that every registration in the tree is found.
//
// A graph pass and a loop pass may share a name ("simplify"): the kind tells them apart.
//
// A graph pass is `void fn(Graph&)`, or `void fn(Graph&, const Target&)` when what it does
// depends on the machine the model is compiled for: `blocked-layout` blocks channels by
// the target's vector width, and leaves a GPU's graph as it is. The pass manager hands
// every graph pass the target (the other form is wrapped so that it ignores it).
//
// Chapter: docs/module2-graph-passes.md#1-the-pass-manager
#pragma once

#include "minic/ir/graph/graph.h"
#include "minic/ir/loop/stmt.h"
#include "minic/target/target.h"

#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace minic {

using GraphPassFn = std::function<void(Graph&, const Target&)>;
using LoopPassFn = std::function<loop::PrimFunc(loop::PrimFunc)>;

enum class PassKind { graph, loop };

// "graph" or "loop".
const char* pass_kind_name(PassKind kind);

struct PassInfo {
  std::string name;
  std::string summary;  // one line, shown by `minic opt --list-passes`
  std::variant<GraphPassFn, LoopPassFn> run;

  PassKind kind() const {
    return std::holds_alternative<GraphPassFn>(run) ? PassKind::graph : PassKind::loop;
  }
};

class PassRegistry {
 public:
  // Registers a pass; a name used twice for one kind is an internal error.
  static void add(std::string name, GraphPassFn run, std::string summary);
  static void add(std::string name, LoopPassFn run, std::string summary);
  // The pass of `kind` named `name`, or null.
  static const PassInfo* find(PassKind kind, std::string_view name);
  // Every registered pass of `kind`, sorted by name.
  static std::vector<const PassInfo*> all(PassKind kind);
};

// What the registration macros make: an object that registers a pass when it is built.
struct RegisterGraphPass {
  RegisterGraphPass(const char* name, void (*run)(Graph&), const char* summary);
  RegisterGraphPass(const char* name, void (*run)(Graph&, const Target&), const char* summary);
};
struct RegisterLoopPass {
  RegisterLoopPass(const char* name, LoopPassFn run, const char* summary);
};

}  // namespace minic

#define MINIC_PASS_CONCAT_INNER(a, b) a##b
#define MINIC_PASS_CONCAT(a, b) MINIC_PASS_CONCAT_INNER(a, b)

// Registers the graph pass `fn` (void fn(Graph&), or void fn(Graph&, const Target&)) under
// `name`, with a one-line summary.
#define MINIC_REGISTER_GRAPH_PASS(name, fn, summary)                                  \
  static const ::minic::RegisterGraphPass MINIC_PASS_CONCAT(minic_graph_pass_, __LINE__)( \
      name, fn, summary)

// Registers the loop pass `fn` (loop::PrimFunc fn(loop::PrimFunc)) under `name`.
#define MINIC_REGISTER_LOOP_PASS(name, fn, summary)                                 \
  static const ::minic::RegisterLoopPass MINIC_PASS_CONCAT(minic_loop_pass_, __LINE__)( \
      name, fn, summary)
