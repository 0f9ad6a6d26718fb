// Control-flow bodies as compiled code (see compiled_bodies.h). Course module 2.
//
// Chapter: docs/module2-graph-ir.md#control-flow-if-loop-scan
#include "compiled_bodies.h"

#include "minic/ops/shape_inference.h"

#include <algorithm>

namespace minic {

namespace {

// A copy of `body` typed for `inputs`' types alone, or null when a shape inside needs a
// value (or the body is wrong: the op's kernel then says why, running it itself).
std::unique_ptr<Graph> typed_copy(const Graph& body, int opset,
                                  std::span<const Tensor* const> inputs) {
  if (body.inputs().size() != inputs.size()) return nullptr;
  std::unique_ptr<Graph> typed = body.clone();
  typed->opset = opset;
  for (size_t i = 0; i < inputs.size(); ++i) {
    typed->inputs()[i]->type = inputs[i]->type();
    typed->inputs()[i]->has_type = true;
  }
  try {
    infer_shapes(*typed);
  } catch (const InternalError&) {
    throw;
  } catch (const Error&) {
    return nullptr;
  }
  return typed;
}

}  // namespace

std::optional<std::vector<Tensor>> CompiledBodies::run(const Graph& body, int opset,
                                                       std::span<const Tensor* const> inputs) {
  auto same_types = [&](const std::unique_ptr<Compiled>& entry) {
    if (entry->types.size() != inputs.size()) return false;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (entry->types[i] != inputs[i]->type()) return false;
    }
    return true;
  };
  Compiled* found = nullptr;
  {
    std::lock_guard<std::mutex> lock(models_mutex_);
    std::vector<std::unique_ptr<Compiled>>& compiled = models_[&body];
    auto it = std::find_if(compiled.begin(), compiled.end(), same_types);
    if (it == compiled.end()) {
      auto entry = std::make_unique<Compiled>();
      for (const Tensor* input : inputs) entry->types.push_back(input->type());
      if (std::unique_ptr<Graph> typed = typed_copy(body, opset, inputs)) {
        entry->model = compile_model(std::move(*typed), options_);
      }
      compiled.push_back(std::move(entry));
      it = compiled.end() - 1;
    }
    found = it->get();
  }
  if (!found->model) return std::nullopt;
  std::lock_guard<std::mutex> running(found->running);
  return found->model->run_in_place(inputs);
}

int CompiledBodies::compiled() const {
  std::lock_guard<std::mutex> lock(models_mutex_);
  int count = 0;
  for (const auto& [body, entries] : models_) {
    for (const std::unique_ptr<Compiled>& entry : entries) count += entry->model != nullptr;
  }
  return count;
}

}  // namespace minic
