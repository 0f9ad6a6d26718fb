// The graph IR as Graphviz DOT text (see include/minic/ir/graph/dot.h).
//
// Course module 2. A drawing is a view of the graph, written in one walk:
//   1. the graph's inputs as ellipses and its small constants as notes; every value that
//      is drawn gets the id of the shape that stands for it (`source_`);
//   2. the nodes in topological order, each a box; a fused node opens a
//      `subgraph cluster_<id>` and draws its body inside, after mapping each body input
//      to the shape of the outer value it stands for, and afterwards maps each of the
//      node's outputs to the shape that defines the matching body output -- so edges go
//      straight into and out of the group, to the nodes that really use the tensors;
//   3. the graph's outputs as ellipses;
//   4. the edges, one per node input (and one per graph output), in the same order.
// A value without a shape (a large constant that is left out) draws no edge.
// Every id is built from positions, so the same graph always gives the same text.
//
// Chapter: docs/module2-graph-passes.md#7-seeing-it
#include "minic/ir/graph/dot.h"

#include <fmt/format.h>

#include <cstring>
#include <unordered_map>

namespace minic {
namespace {

// Text inside a DOT double-quoted string: quotes and backslashes escaped, line breaks as
// DOT's centred `\n`.
std::string escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': break;
      default: out += c;
    }
  }
  return out;
}

std::string type_text(const Value* value) {
  return value && value->has_type ? type_string(value->type) : "?";
}

std::string element_text(const Tensor& tensor, int64_t index) {
  if (tensor.dtype() == DType::boolean) return tensor.as_int64(index) != 0 ? "true" : "false";
  if (is_float(tensor.dtype())) return fmt::format("{:g}", tensor.as_double(index));
  return fmt::format("{}", tensor.as_int64(index));
}

// True if the tensor has more than one element and all are bit for bit equal.
bool is_splat(const Tensor& tensor) {
  const int64_t count = tensor.num_elements();
  if (count < 2) return false;
  std::span<const std::byte> bytes = tensor.bytes();
  const size_t size = bytes.size() / static_cast<size_t>(count);
  for (int64_t i = 1; i < count; ++i) {
    if (std::memcmp(bytes.data(), bytes.data() + i * size, size) != 0) return false;
  }
  return true;
}

// "0.5" for a scalar, "splat 0" for equal elements, "[1, 2, 3]" otherwise.
std::string constant_values_text(const Tensor& tensor) {
  if (is_splat(tensor)) return "splat " + element_text(tensor, 0);
  if (tensor.rank() == 0) return element_text(tensor, 0);
  std::vector<std::string> elements;
  for (int64_t i = 0; i < tensor.num_elements(); ++i) elements.push_back(element_text(tensor, i));
  return fmt::format("[{}]", fmt::join(elements, ", "));
}

class DotWriter {
 public:
  explicit DotWriter(const GraphDotOptions& options) : options_(options) {}

  std::string write(const Graph& graph) {
    out_ += fmt::format("digraph \"{}\" {{\n", escape(graph.name));
    out_ += "  rankdir=TB;\n";
    out_ += "  graph [fontname=\"Helvetica\"];\n";
    out_ += "  node [fontname=\"Helvetica\", fontsize=10];\n";
    out_ += "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\"];\n";

    for (size_t k = 0; k < graph.inputs().size(); ++k) {
      const Value* input = graph.inputs()[k];
      std::string id = fmt::format("in{}", k);
      out_ += fmt::format(
          "  {} [label=\"%{}\\n{}\", shape=ellipse, style=filled, fillcolor=\"#d9ead3\"];\n", id,
          escape(input->name()), escape(type_text(input)));
      source_[input] = id;
    }
    write_body(graph, "", "  ");
    for (size_t k = 0; k < graph.outputs().size(); ++k) {
      const Value* output = graph.outputs()[k];
      std::string id = fmt::format("out{}", k);
      out_ += fmt::format(
          "  {} [label=\"%{}\\n{}\", shape=ellipse, style=filled, fillcolor=\"#fce5cd\"];\n",
          id, escape(output ? output->name() : "_"), escape(type_text(output)));
      add_edge(output, id);
    }

    std::string title = fmt::format("{} (opset {})", graph.name, graph.opset);
    if (omitted_constants_ > 0) {
      title += fmt::format("\n{} large constant{} not drawn", omitted_constants_,
                           omitted_constants_ == 1 ? "" : "s");
    }
    out_ += fmt::format("  labelloc=t;\n  label=\"{}\";\n", escape(title));
    out_ += edges_;
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  // The constants and nodes of `graph` (the top graph or a fused body), with ids
  // prefixed by `prefix`.
  void write_body(const Graph& graph, const std::string& prefix, const std::string& indent) {
    int constant_index = 0;
    for (const Value* value : graph.values()) {
      if (!value->is_constant() || graph.is_graph_input(value)) continue;
      write_constant(graph, *value, prefix + fmt::format("c{}", constant_index++), indent);
    }
    std::vector<Node*> nodes = graph.nodes();
    for (size_t k = 0; k < nodes.size(); ++k) {
      std::string id = prefix + fmt::format("n{}", k);
      if (nodes[k]->is_fused()) {
        write_fused(*nodes[k], id, indent);
      } else {
        write_node(*nodes[k], id, indent, !prefix.empty());
      }
    }
  }

  void write_constant(const Graph& graph, const Value& value, const std::string& id,
                      const std::string& indent) {
    const Tensor& data = *value.constant;
    bool small = data.num_elements() <= options_.max_constant_elements || is_splat(data);
    if (!small && !graph.is_graph_output(&value)) {
      ++omitted_constants_;
      return;  // no entry in source_: its edges are left out too
    }
    std::string label = fmt::format("%{}\n{}", value.name(), type_text(&value));
    if (small) label += "\n" + constant_values_text(data);
    out_ += fmt::format("{}{} [label=\"{}\", shape=note, fontsize=8, style=filled, "
                        "fillcolor=\"#fff2cc\"];\n",
                        indent, id, escape(label));
    source_[&value] = id;
  }

  void write_node(const Node& node, const std::string& id, const std::string& indent,
                  bool in_fused_body) {
    std::vector<std::string> types;
    for (const Value* output : node.outputs()) types.push_back(type_text(output));
    std::string label = node.op;
    if (!types.empty()) label += fmt::format("\n{}", fmt::join(types, ", "));
    out_ += fmt::format("{}{} [label=\"{}\", shape=box, style=\"rounded,filled\", "
                        "fillcolor=\"{}\"];\n",
                        indent, id, escape(label), in_fused_body ? "#dae8fc" : "#eeeeee");
    for (const Value* input : node.inputs()) add_edge(input, id);
    for (const Value* output : node.outputs()) {
      if (output) source_[output] = id;
    }
  }

  void write_fused(const Node& node, const std::string& id, const std::string& indent) {
    const Graph& body = *node.body;
    std::vector<std::string> outputs;
    for (const Value* output : node.outputs()) {
      outputs.push_back("%" + (output ? output->name() : "_"));
    }
    std::string label = fmt::format("{} {}", node.op, fmt::join(outputs, ", "));
    if (!node.name.empty()) label += " @" + node.name;

    out_ += fmt::format("{}subgraph cluster_{} {{\n", indent, id);
    out_ += fmt::format("{}  label=\"{}\";\n", indent, escape(label));
    out_ += fmt::format("{}  style=\"rounded,dashed\";\n", indent);
    out_ += fmt::format("{}  color=\"#3b6ea5\";\n", indent);
    out_ += fmt::format("{}  fontcolor=\"#3b6ea5\";\n", indent);
    // Each body input stands for the node's input in the same position.
    for (size_t k = 0; k < body.inputs().size() && k < node.inputs().size(); ++k) {
      if (node.input(k)) source_[body.inputs()[k]] = shape_of(node.input(k));
    }
    write_body(body, id + "_", indent + "  ");
    out_ += fmt::format("{}}}\n", indent);
    // Each node output is defined where the matching body output is.
    for (size_t k = 0; k < node.outputs().size() && k < body.outputs().size(); ++k) {
      if (node.output(k)) source_[node.output(k)] = shape_of(body.outputs()[k]);
    }
  }

  // The id of the shape that stands for `value`, or "" if it is not drawn.
  std::string shape_of(const Value* value) const {
    if (!value) return "";
    auto it = source_.find(value);
    return it == source_.end() ? "" : it->second;
  }

  void add_edge(const Value* from, const std::string& to_id) {
    std::string from_id = shape_of(from);
    if (from_id.empty()) return;
    edges_ += fmt::format("  {} -> {} [label=\"{}\"];\n", from_id, to_id,
                          escape(type_text(from)));
  }

  const GraphDotOptions& options_;
  std::string out_;    // the shapes, in order
  std::string edges_;  // the edges, written after all shapes
  // Value → the id of its shape. Only looked up, never iterated, so its order never shows.
  std::unordered_map<const Value*, std::string> source_;
  int omitted_constants_ = 0;
};

}  // namespace

std::string graph_to_dot(const Graph& graph, const GraphDotOptions& options) {
  return DotWriter(options).write(graph);
}

}  // namespace minic
