// Control-flow bodies as compiled code (see compiled_bodies.h). Course module 2.
//
// Chapter: docs/module2-graph-ir.md#control-flow-if-loop-scan
#include "compiled_bodies.h"

#include "minic/ops/shape_inference.h"

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
  std::string key = fmt::format("{}", static_cast<const void*>(&body));
  for (const Tensor* input : inputs) key += " " + type_string(input->type());
  auto it = models_.find(key);
  if (it == models_.end()) {
    std::unique_ptr<CompiledModel> model;
    if (std::unique_ptr<Graph> typed = typed_copy(body, opset, inputs)) {
      model = compile_model(std::move(*typed), options_);
    }
    it = models_.emplace(key, std::move(model)).first;
  }
  if (!it->second) return std::nullopt;
  std::vector<Tensor> args;
  for (const Tensor* input : inputs) args.push_back(*input);
  return it->second->run(args);
}

int CompiledBodies::compiled() const {
  int count = 0;
  for (const auto& [key, model] : models_) count += model != nullptr;
  return count;
}

}  // namespace minic
