// Tuning tasks: a model's kernels grouped by workload. Course module 5.
//
// extract_tasks repeats the first half of compile_model (graph passes, then lowering of
// every node that has compute rules) and groups the lowered functions by workload_key, a
// hash of their text with the names of the function and its parameters left out. Two kernels with the same key are the same
// loops over buffers of the same shapes, so one tuned schedule serves both.
//
// Chapter: docs/module5-autotuning.md#1-why-search-tasks-and-the-workload-key
#include "minic/autotune/task.h"

#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/printer.h"
#include "minic/ir/loop/visitor.h"
#include "minic/lower/lower.h"
#include "minic/ops/compute.h"
#include "minic/passes/pass_manager.h"
#include "minic/support/error.h"
#include "minic/support/file_cache.h"

#include <fmt/format.h>

#include <map>

namespace minic::autotune {
namespace {

// Counts float arithmetic: each float-typed operation of a stored value, once per lane,
// times the iterations of the loops around the store.
class FlopCounter : public loop::IRVisitor {
 public:
  double flops = 0;

  void visit_For(const loop::For* node) override {
    int64_t extent = loop::as_const_int(node->extent).value_or(1);
    double outer = iterations_;
    iterations_ *= static_cast<double>(extent);
    loop::IRVisitor::visit_For(node);
    iterations_ = outer;
  }

  void visit_Store(const loop::Store* node) override {
    in_store_ = true;
    visit(node->value);
    in_store_ = false;
  }

#define MINIC_COUNT_FLOAT_OP(Node)                              \
  void visit_##Node(const loop::Node* node) override {          \
    count(node->type);                                          \
    loop::IRVisitor::visit_##Node(node);                        \
  }
  MINIC_COUNT_FLOAT_OP(Add)
  MINIC_COUNT_FLOAT_OP(Sub)
  MINIC_COUNT_FLOAT_OP(Mul)
  MINIC_COUNT_FLOAT_OP(Div)
  MINIC_COUNT_FLOAT_OP(Min)
  MINIC_COUNT_FLOAT_OP(Max)
  MINIC_COUNT_FLOAT_OP(Call)
#undef MINIC_COUNT_FLOAT_OP

 private:
  void count(loop::DataType type) {
    if (in_store_ && is_float(type.dtype)) flops += iterations_ * type.lanes;
  }

  double iterations_ = 1;
  bool in_store_ = false;
};

}  // namespace

std::string workload_key(const loop::PrimFunc& func) {
  // The parameters are named after graph values ("gpu_0/res2a_1"): rename them p0, p1, ...
  // so that the same convolution at two places of a model has one key.
  loop::PrimFunc unnamed = func;
  unnamed.name = "kernel";
  for (size_t i = 0; i < unnamed.params.size(); ++i) {
    const loop::Buffer& param = unnamed.params[i];
    loop::Buffer renamed = loop::BufferNode::make_strided(
        fmt::format("p{}", i), param->dtype, param->shape, param->strides, param->scope);
    unnamed.body = loop::replace_buffer(unnamed.body, param, renamed);
    unnamed.params[i] = renamed;
  }
  return fmt::format("{:016x}", fnv1a(loop::print_func(unnamed)));
}

double count_flops(const loop::PrimFunc& func) {
  FlopCounter counter;
  counter.visit(func.body);
  return counter.flops;
}

std::vector<Task> extract_tasks(Graph graph, const std::vector<std::string>& graph_passes,
                                const Target& target) {
  run_passes(graph, graph_passes, target);
  std::vector<Task> tasks;
  std::map<std::string, size_t> task_of_key;
  for (const Node* node : graph.nodes()) {
    if (!can_lower(*node)) continue;
    loop::PrimFunc func;
    try {
      func = lower_node(*node, graph.opset, target);
    } catch (const NoComputeRule&) {
      continue;  // a form of the op its rule does not cover: compile_model runs it too
    }
    std::string key = workload_key(func);
    auto found = task_of_key.find(key);
    if (found != task_of_key.end()) {
      ++tasks[found->second].weight;
      continue;
    }
    task_of_key[key] = tasks.size();
    Task task;
    task.name = func.name;
    task.workload_key = key;
    task.flops = count_flops(func);
    task.func = std::move(func);
    tasks.push_back(std::move(task));
  }
  return tasks;
}

}  // namespace minic::autotune
