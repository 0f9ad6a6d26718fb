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

bool is_f32(const Value* value, int64_t rank) {
  return value && value->type.dtype == DType::f32 && value->type.rank() == rank;
}

namespace {

// A float attribute of `node`, where the file may have written it as an integer.
float float_attribute(const Node& node, const char* name, float fallback) {
  auto it = node.attributes.find(name);
  if (it == node.attributes.end()) return fallback;
  if (const int64_t* i = std::get_if<int64_t>(&it->second)) return static_cast<float>(*i);
  const float* f = std::get_if<float>(&it->second);
  return f ? *f : fallback;
}

}  // namespace

std::optional<PlainGemm> plain_gemm(const Node& op) {
  if (op.op != "MatMul" && op.op != "Gemm") return std::nullopt;
  PlainGemm gemm;
  gemm.a = op.input(0);
  gemm.b = op.input(1);
  if (!is_f32(gemm.a, 2) || !is_f32(gemm.b, 2) || !is_f32(op.output(0), 2)) return std::nullopt;
  gemm.m = gemm.a->type.shape[0];
  gemm.k = gemm.a->type.shape[1];
  gemm.n = op.output(0)->type.shape[1];
  if (op.op == "MatMul") return gemm;
  if (float_attribute(op, "alpha", 1) != 1 || float_attribute(op, "beta", 1) != 1 ||
      float_attribute(op, "transA", 0) != 0) {
    return std::nullopt;
  }
  gemm.transpose_b = float_attribute(op, "transB", 0) != 0;
  if (op.inputs().size() > 2 && op.input(2)) {
    gemm.bias = op.input(2);
    const Shape& shape = gemm.bias->type.shape;
    const bool per_column = shape == Shape{gemm.n} || shape == Shape{1, gemm.n};
    if (gemm.bias->type.dtype != DType::f32 || !per_column) return std::nullopt;
  }
  return gemm;
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

Partition::Partition(std::vector<std::string> names) : names(std::move(names)) {
  for (const std::string& name : this->names) {
    const BackendInfo* info = BackendRegistry::find(name);
    if (!info) {
      std::vector<std::string> known;
      for (const BackendInfo* registered : BackendRegistry::all()) {
        known.push_back(registered->name);
      }
      fail("unknown back end '{}' (available: {})", name, fmt::join(known, ", "));
    }
    backends.push_back(info->make());
  }
}

std::vector<std::string> Partition::passes_to_run(std::vector<std::string> passes) const {
  for (const std::unique_ptr<ExternalBackend>& backend : backends) {
    for (const std::string& skipped : backend->skip_passes()) std::erase(passes, skipped);
  }
  return passes;
}

void Partition::claim(const Graph& graph, const Target& target) {
  for (const Node* node : graph.nodes()) {
    for (size_t b = 0; b < backends.size(); ++b) {
      if (backends[b]->claims(*node, graph.opset, target)) {
        claimed[node] = b;
        break;
      }
    }
  }
}

RegisterBackend::RegisterBackend(const char* name, const char* summary,
                                 std::function<std::unique_ptr<ExternalBackend>()> make) {
  BackendRegistry::add({name, summary, std::move(make)});
}

}  // namespace minic
