// `--verify-each=numeric` for graph passes and loop passes. Course modules 2 and 4.
//
// Each check is a small state shared by two hooks: `record` (before_all) makes the inputs
// and keeps the results of the IR as given; `compare` (after_each) runs the IR after a
// pass on the same inputs and fails naming the pass, the result and the difference, or
// says on stderr that the pass kept every result, and how close.
//
// Chapter: docs/module2-graph-passes.md#1-the-pass-manager
#include "minic/runtime/numeric_check.h"

#include "minic/ir/loop/interpreter.h"
#include "minic/runtime/interpreter.h"
#include "minic/support/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

namespace minic {
namespace {

// Installs `record` and `compare` after whatever hooks `options` holds already.
template <typename IR, typename Check>
void chain_hooks(PassManagerOptions<IR>& options, std::shared_ptr<Check> check) {
  auto before_all = options.before_all;
  auto after_each = options.after_each;
  options.before_all = [before_all, check](const IR& ir) {
    if (before_all) before_all(ir);
    check->record(ir);
  };
  options.after_each = [after_each, check](const std::string& pass, const IR& ir) {
    if (after_each) after_each(pass, ir);
    check->compare(pass, ir);
  };
}

// The line a pass that kept every result gets, on stderr: "after dce: ok (max abs err 0)",
// the largest difference from the results before the first pass over every result.
void report_ok(const std::string& pass, double max_abs_error) {
  fmt::print(stderr, "after {}: ok (max abs err {:.3g})\n", pass, max_abs_error);
}

class GraphCheck {
 public:
  GraphCheck(InputMaker make_input, Tolerance tolerance)
      : make_input_(std::move(make_input)), tolerance_(tolerance) {}

  void record(const Graph& graph) {
    for (const Value* input : graph.inputs()) inputs_.push_back(make_input_(input->type));
    expected_ = interpret(graph, inputs_);
  }

  void compare(const std::string& pass, const Graph& graph) const {
    std::vector<Tensor> outputs = interpret(graph, inputs_);
    double max_abs_error = 0;
    for (size_t k = 0; k < outputs.size() && k < expected_.size(); ++k) {
      TensorComparison comparison = compare_tensors(outputs[k], expected_[k], tolerance_);
      if (!comparison.ok()) {
        fail("graph pass '{}' changed output {} (%{}): {}", pass, k, graph.outputs()[k]->name(),
             describe(comparison));
      }
      max_abs_error = std::max(max_abs_error, comparison.max_abs_error);
    }
    report_ok(pass, max_abs_error);
  }

 private:
  InputMaker make_input_;
  Tolerance tolerance_;
  std::vector<Tensor> inputs_;
  std::vector<Tensor> expected_;
};

// Runs `func` with a copy of `inputs`, each viewed in its parameter's shape; returns every
// parameter after the run.
std::vector<Tensor> run_with(const loop::PrimFunc& func, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> args;
  for (size_t p = 0; p < inputs.size(); ++p) {
    args.push_back(inputs[p].reshaped(func.params[p]->shape));
  }
  std::vector<Tensor*> pointers;
  for (Tensor& arg : args) pointers.push_back(&arg);
  loop::run_func(func, pointers);
  return args;
}

// A pass may reshape a parameter, not change its size or the list of parameters.
void check_same_params(const std::string& pass, const loop::PrimFunc& func,
                       const std::vector<Tensor>& inputs) {
  if (func.params.size() != inputs.size()) {
    fail("loop pass '{}' changed the parameters of @{}: {} where {} were", pass, func.name,
         func.params.size(), inputs.size());
  }
  for (size_t p = 0; p < inputs.size(); ++p) {
    const loop::Buffer& param = func.params[p];
    if (num_elements(param->shape) != inputs[p].num_elements()) {
      fail("loop pass '{}' changed parameter {} of @{} from {} to {} elements", pass,
           param->name, func.name, inputs[p].num_elements(), num_elements(param->shape));
    }
  }
}

class LoopCheck {
 public:
  LoopCheck(InputMaker make_input, Tolerance tolerance)
      : make_input_(std::move(make_input)), tolerance_(tolerance) {}

  void record(const loop::LoopModule& module) {
    for (const loop::PrimFunc& func : module.functions) {
      std::vector<Tensor> inputs;
      for (const loop::Buffer& param : func.params) {
        inputs.push_back(make_input_(TensorType{param->dtype, param->shape}));
      }
      expected_.push_back(run_with(func, inputs));
      inputs_.push_back(std::move(inputs));
    }
  }

  void compare(const std::string& pass, const loop::LoopModule& module) const {
    if (module.functions.size() != inputs_.size()) {
      fail("loop pass '{}' changed the number of functions from {} to {}", pass, inputs_.size(),
           module.functions.size());
    }
    double max_abs_error = 0;
    for (size_t f = 0; f < module.functions.size(); ++f) {
      const loop::PrimFunc& func = module.functions[f];
      check_same_params(pass, func, inputs_[f]);
      std::vector<Tensor> results = run_with(func, inputs_[f]);
      for (size_t p = 0; p < results.size(); ++p) {
        const Tensor& expected = expected_[f][p];
        TensorComparison comparison =
            compare_tensors(results[p].reshaped(expected.shape()), expected, tolerance_);
        if (!comparison.ok()) {
          fail("loop pass '{}' changed parameter {} of @{}: {}", pass, func.params[p]->name,
               func.name, describe(comparison));
        }
        max_abs_error = std::max(max_abs_error, comparison.max_abs_error);
      }
    }
    report_ok(pass, max_abs_error);
  }

 private:
  InputMaker make_input_;
  Tolerance tolerance_;
  std::vector<std::vector<Tensor>> inputs_;    // per function, per parameter
  std::vector<std::vector<Tensor>> expected_;  // the parameters after the first run
};

}  // namespace

void add_numeric_check(PassManagerOptions<Graph>& options, InputMaker make_input,
                       Tolerance tolerance) {
  chain_hooks(options, std::make_shared<GraphCheck>(std::move(make_input), tolerance));
}

void add_numeric_check(PassManagerOptions<loop::LoopModule>& options, InputMaker make_input,
                       Tolerance tolerance) {
  chain_hooks(options, std::make_shared<LoopCheck>(std::move(make_input), tolerance));
}

}  // namespace minic
