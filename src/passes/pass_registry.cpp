// The pass registry: one map from (kind, name) to pass. Course modules 2 and 4.
//
// The map is a function-local static, built on first use, so that a registration object
// in any file may add to it during static initialisation, whatever order the files start in.
//
// Chapter: docs/module2-graph-passes.md#1-the-pass-manager
#include "minic/passes/pass_registry.h"

#include "minic/support/error.h"

#include <map>
#include <utility>

namespace minic {
namespace {

using Key = std::pair<PassKind, std::string>;

std::map<Key, PassInfo, std::less<>>& registry() {
  static std::map<Key, PassInfo, std::less<>> passes;
  return passes;
}

void add_pass(PassInfo info) {
  Key key{info.kind(), info.name};
  MINIC_CHECK(!registry().count(key));
  registry().emplace(std::move(key), std::move(info));
}

}  // namespace

const char* pass_kind_name(PassKind kind) { return kind == PassKind::graph ? "graph" : "loop"; }

void PassRegistry::add(std::string name, GraphPassFn run, std::string summary) {
  add_pass(PassInfo{std::move(name), std::move(summary), std::move(run)});
}

void PassRegistry::add(std::string name, LoopPassFn run, std::string summary) {
  add_pass(PassInfo{std::move(name), std::move(summary), std::move(run)});
}

const PassInfo* PassRegistry::find(PassKind kind, std::string_view name) {
  auto it = registry().find(Key{kind, std::string(name)});
  return it == registry().end() ? nullptr : &it->second;
}

std::vector<const PassInfo*> PassRegistry::all(PassKind kind) {
  std::vector<const PassInfo*> passes;
  for (const auto& [key, info] : registry()) {
    if (key.first == kind) passes.push_back(&info);
  }
  return passes;
}

RegisterGraphPass::RegisterGraphPass(const char* name, void (*run)(Graph&), const char* summary) {
  PassRegistry::add(name, [run](Graph& graph, const Target&) { run(graph); }, summary);
}

RegisterGraphPass::RegisterGraphPass(const char* name, void (*run)(Graph&, const Target&),
                                     const char* summary) {
  PassRegistry::add(name, GraphPassFn(run), summary);
}

RegisterLoopPass::RegisterLoopPass(const char* name, LoopPassFn run, const char* summary) {
  PassRegistry::add(name, std::move(run), summary);
}

}  // namespace minic
