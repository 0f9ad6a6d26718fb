// The back-end registry and the partitioner (include/minic/backends/backend.h).
// Course module 6.
//
// Chapter: docs/module6-llvm-cpu.md#bring-your-own-codegen
#include "minic/backends/backend.h"

#include "minic/support/error.h"

#include <fmt/format.h>

#include <algorithm>

namespace minic {
namespace {

std::map<std::string, BackendInfo>& backends() {
  static std::map<std::string, BackendInfo> registered;
  return registered;
}

}  // namespace

std::vector<const Value*> kernel_arguments(const Node& node) {
  std::vector<const Value*> args;
  for (const Value* input : node.inputs()) {
    if (input && std::find(args.begin(), args.end(), input) == args.end()) args.push_back(input);
  }
  for (const Value* output : node.outputs()) args.push_back(output);
  return args;
}

std::vector<const Node*> body_ops(const Node& node) {
  if (!node.is_fused()) return {&node};
  std::vector<const Node*> ops;
  for (const Node* inner : node.body->nodes()) ops.push_back(inner);
  return ops;
}

int argument_index(const Node& node, const Value* value) {
  const Value* outer = value;
  if (node.is_fused()) {
    const std::vector<Value*>& inner = node.body->inputs();
    auto in = std::find(inner.begin(), inner.end(), value);
    if (in != inner.end()) outer = node.inputs()[static_cast<size_t>(in - inner.begin())];
    const std::vector<Value*>& results = node.body->outputs();
    auto out = std::find(results.begin(), results.end(), value);
    if (out != results.end()) outer = node.outputs()[static_cast<size_t>(out - results.begin())];
  }
  std::vector<const Value*> args = kernel_arguments(node);
  auto it = std::find(args.begin(), args.end(), outer);
  return it == args.end() ? -1 : static_cast<int>(it - args.begin());
}

void BackendRegistry::add(BackendInfo info) {
  MINIC_CHECK(!backends().count(info.name));
  std::string name = info.name;
  backends().emplace(std::move(name), std::move(info));
}

const BackendInfo* BackendRegistry::find(const std::string& name) {
  auto it = backends().find(name);
  return it == backends().end() ? nullptr : &it->second;
}

std::vector<const BackendInfo*> BackendRegistry::all() {
  std::vector<const BackendInfo*> infos;
  for (const auto& [name, info] : backends()) infos.push_back(&info);
  return infos;
}

void check_backend_names(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (BackendRegistry::find(name)) continue;
    std::vector<std::string> known;
    for (const BackendInfo* info : BackendRegistry::all()) known.push_back(info->name);
    fail("unknown back end '{}' (available: {})", name, fmt::join(known, ", "));
  }
}

Partition partition_graph(const Graph& graph, const std::vector<std::string>& names,
                          const Target& target) {
  check_backend_names(names);
  Partition partition;
  partition.names = names;
  for (const std::string& name : names) {
    partition.backends.push_back(BackendRegistry::find(name)->make());
  }
  for (const Node* node : graph.nodes()) {
    for (size_t b = 0; b < partition.backends.size(); ++b) {
      if (partition.backends[b]->claims(*node, graph.opset, target)) {
        partition.claimed[node] = b;
        break;
      }
    }
  }
  return partition;
}

std::vector<std::string> pipeline_for_backends(std::vector<std::string> passes,
                                               const std::vector<std::string>& names) {
  check_backend_names(names);
  for (const std::string& name : names) {
    for (const std::string& skipped : BackendRegistry::find(name)->make()->skip_passes()) {
      std::erase(passes, skipped);
    }
  }
  return passes;
}

RegisterBackend::RegisterBackend(const char* name, const char* summary,
                                 std::function<std::unique_ptr<ExternalBackend>()> make) {
  BackendRegistry::add({name, summary, std::move(make)});
}

}  // namespace minic
