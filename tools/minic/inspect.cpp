// `minic inspect MODEL [--json]`: what a model file holds, before minic compiles it.
// Course module 8.
//
// Shows the model's inputs and outputs as the file states them (symbolic dimensions
// included), its IR version, opset and producer, how often each op is used, and which
// ops minic does not support. It reads the file with summarize_onnx, which never needs
// to import the graph, so it works on models minic cannot run yet.
#include "commands.h"

#include "minic/frontend/onnx.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <iostream>
#include <memory>

namespace minic::cli {
namespace {

struct InspectOptions {
  std::string model;
  bool json = false;
};

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

void print_text(const OnnxModelSummary& summary) {
  fmt::print("model: {}\n", summary.path);
  fmt::print("ir version: {}\n", summary.ir_version);
  fmt::print("opset: {}\n", summary.opset);
  fmt::print("producer: {}\n", summary.producer.empty() ? "(none)" : summary.producer);
  print_values("inputs:", summary.inputs);
  print_values("outputs:", summary.outputs);

  int num_nodes = 0;
  size_t width = 0;
  for (const auto& [op, count] : summary.op_counts) {
    num_nodes += count;
    width = std::max(width, op.size());
  }
  fmt::print("ops: {} nodes\n", num_nodes);
  for (const auto& [op, count] : summary.op_counts) {
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

void print_json(const OnnxModelSummary& summary) {
  nlohmann::ordered_json ops = nlohmann::ordered_json::object();
  for (const auto& [op, count] : summary.op_counts) ops[op] = count;
  nlohmann::ordered_json unsupported = nlohmann::ordered_json::array();
  for (const OnnxUnsupportedOp& op : summary.unsupported) {
    unsupported.push_back({{"op", op.op}, {"opset", op.opset}, {"nodes", op.nodes}});
  }
  nlohmann::ordered_json json = {
      {"path", summary.path},
      {"ir_version", summary.ir_version},
      {"opset", summary.opset},
      {"producer", summary.producer},
      {"inputs", values_json(summary.inputs)},
      {"outputs", values_json(summary.outputs)},
      {"ops", ops},
      {"unsupported", unsupported},
  };
  std::cout << json.dump(2) << "\n";
}

}  // namespace

Command add_inspect_command(CLI::App& app) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* command = app.add_subcommand(
      "inspect", "Show a model's inputs, outputs, opset and ops, and what minic lacks for it");
  command->add_option("model", options->model, "The ONNX model file")->required();
  command->add_flag("--json", options->json, "Print one JSON object instead of text");
  return {command, [options] {
            OnnxModelSummary summary = summarize_onnx(options->model);
            if (options->json) {
              print_json(summary);
            } else {
              print_text(summary);
            }
            return 0;
          }};
}

}  // namespace minic::cli
