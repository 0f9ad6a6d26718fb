// Tuning tasks: the distinct kernels of a model, each tuned once.
//
// Course module 5. A model of fifty convolutions may have only a dozen different ones:
// ResNet-50 repeats its blocks. The tuner therefore works on tasks, not kernels. A task
// is one workload -- a lowered, unscheduled kernel, up to names -- with a weight, the
// number of kernels of the model that are this workload. The workload key is a hash of
// the kernel's loop IR text with the names left out, so the same convolution in two models
// (or two runs) has the same key, and a tuning record found for one serves the other.
//
//   std::vector<Task> tasks = extract_tasks(graph, default_pipeline(), target);
//   tasks[0].name          // "conv_relu": the first kernel of the workload
//   tasks[0].weight        // 3: three kernels of the model are this workload
//   tasks[0].workload_key  // "5f0c1d2e3a4b6978"
//
// Chapter: docs/module5-autotuning.md#1-why-search-tasks-and-the-workload-key
#pragma once

#include "minic/ir/graph/graph.h"
#include "minic/ir/loop/stmt.h"
#include "minic/target/target.h"

#include <string>
#include <vector>

namespace minic::autotune {

struct Task {
  std::string name;          // the function name of the workload's first kernel
  std::string workload_key;  // workload_key(func)
  loop::PrimFunc func;       // as lowered: no schedule applied
  int weight = 1;            // how many kernels of the model are this workload
  double flops = 0;          // floating-point operations of one call (count_flops)
};

// A hash (16 hex digits) of the function's loop IR text with its name and its parameters'
// names replaced by fixed ones: equal for kernels that differ only in names.
std::string workload_key(const loop::PrimFunc& func);

// The arithmetic of one call: every float add, multiply, ... a store's value performs,
// times the iterations of the loops around it (a multiply-add counts 2). For GFLOP/s.
double count_flops(const loop::PrimFunc& func);

// The tasks of a model: runs `graph_passes` on the graph, lowers every node that has
// compute rules for `target` (as compile_model does) and groups the kernels by workload
// key. Tasks are in the order of their first kernel in the graph.
std::vector<Task> extract_tasks(Graph graph, const std::vector<std::string>& graph_passes,
                                const Target& target);

}  // namespace minic::autotune
