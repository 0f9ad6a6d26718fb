// `minic inspect MODEL [--json] [--optimized]`: what a model file holds, before minic
// compiles it, and with --optimized what the graph passes make of it; `minic inspect --ops`:
// every op of ONNX's default domain and what minic has for it. Course module 1.
//
// Shows the model's inputs and outputs as the file states them (symbolic dimensions
// included), its IR version, opset and producer, how often each op is used, and which
// ops minic does not support. It reads the file with summarize_onnx, which never needs
// to import the graph, so it works on models minic cannot run yet.
//
// With --optimized it also imports the model and runs the default pass pipeline
// (src/passes/pipeline.cpp); the op counts are then those of the optimized graph, ops
// inside fused nodes included (a fused node is not an op of its own), and `kernels` is
// the number of nodes left at the top level of the graph: each fused node and each plain
// node is one kernel the compiled model launches (a Reshape too).
//
// With --ops and no model it lists ONNX's default-domain ops (onnx_op_statuses in
// include/minic/frontend/onnx_ops.h): compiled, reference only or missing, with the opsets
// minic handles, and the counts of each.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#include "commands.h"
#include "common_options.h"
#include "run_inputs.h"

#include "minic/backends/backend.h"
#include "minic/codegen/llvm.h"
#include "minic/frontend/onnx.h"
#include "minic/frontend/onnx_ops.h"
#include "minic/lower/lower.h"
#include "minic/passes/pass_manager.h"
#include "minic/passes/pipeline.h"
#include "minic/support/error.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

namespace minic::cli {
namespace {

struct InspectOptions {
  std::string model;
  bool json = false;
  bool optimized = false;
  bool ops = false;
  std::string partition;  // back ends, comma-separated: what each would take
  CommonOptions common;   // --input-shape, for --optimized and --partition
};

// The model after the default pipeline: how often each op runs, and in how many kernels.
struct OptimizedSummary {
  std::map<std::string, int> op_counts;
  int kernels = 0;
};

// Counts the ops of `graph`, looking inside fused nodes' bodies.
void count_ops(const Graph& graph, std::map<std::string, int>& counts) {
  for (const Node* node : graph.nodes()) {
    if (node->is_fused()) {
      count_ops(*node->body, counts);
    } else {
      ++counts[node->op];
    }
  }
}

OptimizedSummary optimize(const InspectOptions& options, const OnnxModelSummary& summary) {
  OnnxImportOptions import_options;
  import_options.input_shapes = parse_input_shapes(options.common.input_shapes, summary.inputs);
  Graph graph = import_onnx(options.model, import_options);
  run_passes(graph, default_pipeline(), options.common.parsed_target());
  OptimizedSummary optimized;
  count_ops(graph, optimized.op_counts);
  optimized.kernels = static_cast<int>(graph.num_nodes());
  return optimized;
}

// "f32[1,3,224,224]", "f32[batch,3,224,224]", or "f32 (no shape)" when the file gives none.
std::string value_type_string(const OnnxValueInfo& value) {
  if (!value.rank_known) return fmt::format("{} (no shape)", value.dtype);
  return fmt::format("{}[{}]", value.dtype, fmt::join(value.dims, ","));
}

void print_values(const char* title, const std::vector<OnnxValueInfo>& values) {
  fmt::print("{}\n", title);
  size_t width = 0;
  for (const OnnxValueInfo& value : values) width = std::max(width, value.name.size());
  for (const OnnxValueInfo& value : values) {
    fmt::print("  {:<{}}  {}\n", value.name, width, value_type_string(value));
  }
}

void print_text(const OnnxModelSummary& summary, const OptimizedSummary* optimized) {
  fmt::print("model: {}\n", summary.path);
  fmt::print("ir version: {}\n", summary.ir_version);
  fmt::print("opset: {}\n", summary.opset);
  if (summary.converted_opset) {
    fmt::print("  (minic converts it to opset {} with ONNX's version converter first)\n",
               summary.converted_opset);
  }
  fmt::print("producer: {}\n", summary.producer.empty() ? "(none)" : summary.producer);
  print_values("inputs:", summary.inputs);
  print_values("outputs:", summary.outputs);

  const std::map<std::string, int>& op_counts =
      optimized ? optimized->op_counts : summary.op_counts;
  int num_nodes = 0;
  size_t width = 0;
  for (const auto& [op, count] : op_counts) {
    num_nodes += count;
    width = std::max(width, op.size());
  }
  if (optimized) {
    fmt::print("ops after the default pipeline: {} nodes in {} kernels\n", num_nodes,
               optimized->kernels);
  } else {
    fmt::print("ops: {} nodes\n", num_nodes);
  }
  for (const auto& [op, count] : op_counts) {
    fmt::print("  {:<{}}  {}\n", op, width, count);
  }

  if (summary.unsupported.empty()) {
    fmt::print("unsupported ops: none\n");
    return;
  }
  fmt::print("unsupported ops: {} (minic cannot import this model)\n",
             summary.unsupported.size());
  for (const OnnxUnsupportedOp& op : summary.unsupported) {
    fmt::print("  {} (opset {}): {}\n", op.op, op.opset, fmt::join(op.nodes, ", "));
  }
}

// A dimension as JSON: a number when it is one, else the symbol ("batch", "?").
nlohmann::ordered_json dim_json(const std::string& dim) {
  int64_t size = 0;
  auto [end, error] = std::from_chars(dim.data(), dim.data() + dim.size(), size);
  if (error == std::errc() && end == dim.data() + dim.size()) return size;
  return dim;
}

nlohmann::ordered_json values_json(const std::vector<OnnxValueInfo>& values) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const OnnxValueInfo& value : values) {
    // null when the file gives no shape (an empty list is a scalar).
    nlohmann::ordered_json shape = nullptr;
    if (value.rank_known) {
      shape = nlohmann::ordered_json::array();
      for (const std::string& dim : value.dims) shape.push_back(dim_json(dim));
    }
    list.push_back({{"name", value.name}, {"dtype", value.dtype}, {"shape", shape}});
  }
  return list;
}

void print_json(const OnnxModelSummary& summary, const OptimizedSummary* optimized) {
  nlohmann::ordered_json ops = nlohmann::ordered_json::object();
  for (const auto& [op, count] : optimized ? optimized->op_counts : summary.op_counts) {
    ops[op] = count;
  }
  nlohmann::ordered_json unsupported = nlohmann::ordered_json::array();
  for (const OnnxUnsupportedOp& op : summary.unsupported) {
    unsupported.push_back({{"op", op.op}, {"opset", op.opset}, {"nodes", op.nodes}});
  }
  nlohmann::ordered_json json = {
      {"path", summary.path},
      {"ir_version", summary.ir_version},
      {"opset", summary.opset},
      {"converted_opset", summary.converted_opset},
      {"producer", summary.producer},
      {"inputs", values_json(summary.inputs)},
      {"outputs", values_json(summary.outputs)},
      {"ops", ops},
  };
  if (optimized) json["kernels"] = optimized->kernels;
  json["unsupported"] = unsupported;
  std::cout << json.dump(2) << "\n";
}

void print_op_statuses(bool json) {
  std::vector<OnnxOpStatus> statuses = onnx_op_statuses();
  std::map<std::string, int> counts;
  for (const OnnxOpStatus& status : statuses) ++counts[support_name(status.support)];
  if (json) {
    nlohmann::json ops = nlohmann::json::array();
    for (const OnnxOpStatus& status : statuses) {
      nlohmann::json op = {{"op", status.op}, {"onnx_version", status.onnx_version},
                           {"status", support_name(status.support)}};
      if (status.support != OpSupport::missing) {
        op["opsets"] = {status.min_opset, status.max_opset};
      }
      ops.push_back(op);
    }
    std::cout << nlohmann::json{{"ops", ops}, {"counts", counts},
                                {"onnx_schemas", onnx_schema_version()}}
                     .dump(2)
              << "\n";
    return;
  }
  fmt::print("ONNX {}'s default domain (libonnx), then minic's ops it does not define\n",
             onnx_schema_version());
  fmt::print("{:<28} {:<15} {:>5}  {}\n", "op", "minic", "onnx", "opsets minic handles");
  for (const OnnxOpStatus& status : statuses) {
    std::string opsets = status.support == OpSupport::missing
                             ? ""
                             : fmt::format("{}-{}", status.min_opset, status.max_opset);
    std::string version = status.onnx_version ? std::to_string(status.onnx_version) : "-";
    fmt::print("{:<28} {:<15} {:>5}  {}\n", status.op, support_name(status.support), version,
               opsets);
  }
  fmt::print("\n{} ops: {} compiled, {} reference only, {} imported, {} missing\n",
             statuses.size(), counts["compiled"], counts["reference only"], counts["imported"],
             counts["missing"]);
}

// --partition: the model after the default passes (without those the back ends skip),
// each top-level node with the back end that takes it (or minic), and what the back end
// makes of it (ExternalBackend::describe).
void print_partition(const InspectOptions& options, const OnnxModelSummary& summary) {
  Partition partition(comma_list(options.partition));
  OnnxImportOptions import_options;
  import_options.input_shapes = parse_input_shapes(options.common.input_shapes, summary.inputs);
  Graph graph = import_onnx(options.model, import_options);
  const Target target = codegen::host_target();
  run_passes(graph, partition.passes_to_run(default_pipeline()), target);
  partition.claim(graph, target);
  fmt::print("\npartition ({}, then minic) after the default passes:\n",
             fmt::join(partition.names, ", "));
  for (const Node* node : graph.nodes()) {
    std::vector<std::string> ops;
    for (const Node* op : body_ops(*node)) ops.push_back(op->op);
    auto claimed = partition.claimed.find(node);
    const std::string where =
        claimed == partition.claimed.end() ? "minic" : partition.names[claimed->second];
    fmt::print("  {:<28} {:<10} {}\n", kernel_name(*node), where, fmt::join(ops, " -> "));
    if (claimed == partition.claimed.end()) continue;
    std::stringstream lines(partition.backends[claimed->second]->describe(*node, graph.opset));
    for (std::string line; std::getline(lines, line);) fmt::print("      {}\n", line);
  }
  fmt::print("{} of {} kernels to {}\n", partition.claimed.size(), graph.num_nodes(),
             fmt::join(partition.names, ", "));
}

}  // namespace

Command add_inspect_command(CLI::App& app) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* command = app.add_subcommand(
      "inspect", "Show a model's inputs, outputs, opset and ops, and what minic lacks for it");
  command->add_option("model", options->model, "The ONNX model file (not with --ops)");
  command->add_flag("--ops", options->ops,
                    "List every op of ONNX's default domain: compiled, reference only or "
                    "missing in minic");
  command->add_flag("--json", options->json, "Print one JSON object instead of text");
  command->add_flag("--optimized", options->optimized,
                    "Import the model, run the default passes, and count the ops and kernels "
                    "of the result");
  command->add_option("--partition", options->partition,
                      "Back ends, comma-separated (minic run --backends): which of the "
                      "optimised model's kernels each would take, and what it makes of them");
  add_common_options(command, options->common,
                     {CommonOption::input_shape, CommonOption::custom_ops});
  return {command, [options] {
            if (options->ops) {
              if (!options->model.empty()) fail("--ops lists minic's ops; it takes no model");
              print_op_statuses(options->json);
              return 0;
            }
            if (options->model.empty()) fail("inspect needs a model file (or --ops)");
            OnnxModelSummary summary = summarize_onnx(options->model);
            std::optional<OptimizedSummary> optimized;
            if (options->optimized) optimized = optimize(*options, summary);
            const OptimizedSummary* after = optimized ? &*optimized : nullptr;
            if (options->json) {
              if (!options->partition.empty()) fail("--partition prints text, not --json");
              print_json(summary, after);
            } else {
              print_text(summary, after);
              if (!options->partition.empty()) print_partition(*options, summary);
            }
            return 0;
          }};
}

}  // namespace minic::cli
