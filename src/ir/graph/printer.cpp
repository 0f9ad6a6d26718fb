// The graph printer: Graph → the .mgraph text form (syntax in include/minic/ir/graph/text.h).
//
// Course module 2. The output is deterministic: graph inputs and outputs in their order,
// then the constants in creation order, then the nodes in their (topological) order, then
// the bytes of large constants in a `resources` section in the order they were first
// named. Every float prints in the shortest form that reads back to the same bits, so
// parse_graph(print_graph(g)) prints exactly as g does. A fused node prints its body after
// it, between braces and indented one step further: the body's constants, then its nodes,
// each printed as the graph's own are (a fused node inside a body nests again).
//
// Chapter: docs/module2-graph-ir.md#the-text-form
#include "minic/ir/graph/text.h"

#include "text_syntax.h"

#include <bit>
#include <cmath>
#include <set>
#include <type_traits>
#include <utility>

namespace minic {

namespace {

using graph_text::identifier_or_quoted;
using graph_text::value_ref;

// A finite or infinite float in its shortest exact form, with a `.0` added where the
// digits alone would read as an integer.
template <typename F>
std::string real_text(F value) {
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

template <typename Bits>
std::string nan_text(Bits bits, Bits canonical) {
  if (bits == canonical) return "nan";
  return fmt::format("nan(0x{:0{}x})", bits, sizeof(Bits) * 2);
}

std::string float_text(float value) {
  if (std::isnan(value)) {
    return nan_text(std::bit_cast<uint32_t>(value), graph_text::kCanonicalNanF32);
  }
  return real_text(value);
}

// Element `index` of a tensor as the text form spells it.
std::string element_text(const Tensor& tensor, int64_t index) {
  if (tensor.dtype() == DType::boolean) {
    // Read the byte rather than a bool so that no byte value is undefined behaviour.
    return tensor.bytes()[index] != std::byte{0} ? "true" : "false";
  }
  return visit_dtype(tensor.dtype(), [&]<typename T>() -> std::string {
    T value = tensor.values<T>()[index];
    if constexpr (std::is_same_v<T, float>) {
      return float_text(value);
    } else if constexpr (std::is_same_v<T, double>) {
      if (std::isnan(value)) {
        return nan_text(std::bit_cast<uint64_t>(value), graph_text::kCanonicalNanF64);
      }
      return real_text(value);
    } else if constexpr (std::is_same_v<T, Half>) {
      bool nan = (value.bits & 0x7c00u) == 0x7c00u && (value.bits & 0x03ffu) != 0;
      if (nan) return nan_text(value.bits, graph_text::kCanonicalNanF16);
      return real_text(static_cast<float>(value));
    } else if constexpr (std::is_same_v<T, BFloat16>) {
      bool nan = (value.bits & 0x7f80u) == 0x7f80u && (value.bits & 0x007fu) != 0;
      if (nan) return nan_text(value.bits, graph_text::kCanonicalNanBF16);
      return real_text(static_cast<float>(value));
    } else if constexpr (std::is_signed_v<T>) {
      return fmt::format("{}", static_cast<int64_t>(value));
    } else {
      return fmt::format("{}", static_cast<uint64_t>(value));
    }
  });
}

std::string type_text(const Value* value) {
  if (!value) return "?";
  return value->has_type ? type_string(value->type) : "?";
}

std::string ref_text(const Value* value) { return value ? value_ref(value->name()) : "_"; }

class Printer {
 public:
  Printer(const Graph& graph, const GraphPrintOptions& options)
      : graph_(graph), options_(options) {}

  std::string print() {
    print_signature();
    print_statements(graph_, "  ");
    print_return(graph_, "  ");
    out_ += "}\n";
    print_resources();
    return std::move(out_);
  }

 private:
  void print_signature() {
    out_ += fmt::format("graph {}(", identifier_or_quoted(graph_.name));
    print_parameters(graph_.inputs());
    out_ += ") -> (";
    print_parameters(graph_.outputs());
    out_ += fmt::format(") opset {} {{\n", graph_.opset);
  }

  void print_parameters(const std::vector<Value*>& values) {
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) out_ += ", ";
      out_ += fmt::format("{}: {}", ref_text(values[i]), type_text(values[i]));
    }
  }

  // The constants and nodes of `graph` (the top-level graph or a fused node's body), one a
  // line, each line starting with `indent`.
  void print_statements(const Graph& graph, const std::string& indent) {
    for (const Value* value : graph.values()) {
      if (value->is_constant() && !graph.is_graph_input(value)) print_constant(*value, indent);
    }
    for (const Node* node : graph.nodes()) print_node(*node, indent);
  }

  void print_constant(const Value& value, const std::string& indent) {
    std::string resource_hint = value.name();
    out_ += fmt::format("{}{} = const {} {}\n", indent, value_ref(value.name()),
                        type_string(value.type), tensor_data_text(*value.constant, resource_hint));
  }

  // `Op(...)`, or for a fused node `fused(...)` followed by its body in braces. The body
  // names its values as the graph holds them: by Graph's rule for fused nodes (see
  // graph_text.h) its inputs carry the names of the node's inputs and its outputs those
  // of the node's outputs, which is what lets the parser connect the two.
  void print_node(const Node& node, const std::string& indent) {
    out_ += indent;
    if (!node.outputs().empty()) {
      std::vector<std::string> outputs;
      for (const Value* output : node.outputs()) outputs.push_back(ref_text(output));
      out_ += fmt::format("{} = ", fmt::join(outputs, ", "));
    }
    std::vector<std::string> inputs;
    for (const Value* input : node.inputs()) inputs.push_back(ref_text(input));
    std::string op = node.is_fused() ? std::string(graph_text::kFusedKeyword)
                                     : graph_text::op_text(node.op);
    out_ += fmt::format("{}({})", op, fmt::join(inputs, ", "));
    if (!node.attributes.empty()) print_attributes(node, indent);
    if (!node.outputs().empty()) {
      std::vector<std::string> types;
      for (const Value* output : node.outputs()) types.push_back(type_text(output));
      out_ += fmt::format(" : {}", fmt::join(types, ", "));
    }
    if (!node.name.empty()) {
      out_ += " @";
      out_ += graph_text::is_bare_name(node.name) ? node.name : graph_text::quote(node.name);
    }
    if (node.is_fused()) {
      out_ += " {\n";
      print_statements(*node.body, indent + "  ");
      out_ += indent + "}";
    }
    out_ += '\n';
  }

  void print_attributes(const Node& node, const std::string& indent) {
    std::vector<std::string> parts;
    for (const auto& [name, attribute] : node.attributes) {
      if (const auto* body = std::get_if<GraphAttribute>(&attribute)) {
        parts.push_back(fmt::format("{}={}", identifier_or_quoted(name),
                                    graph_attribute_text(**body, indent)));
        continue;
      }
      // A large tensor attribute's resource is named after the node's first output.
      std::string owner = node.outputs().empty() || !node.output(0) ? node.op
                                                                    : node.output(0)->name();
      parts.push_back(fmt::format("{}={}", identifier_or_quoted(name),
                                  attribute_text(attribute, owner + "." + name)));
    }
    out_ += fmt::format(" {{{}}}", fmt::join(parts, ", "));
  }

  // `graph name(%i: ?, ...) -> (%o: ?, ...) {`, the body's statements indented two steps
  // past the node's line, `return ...`, and `}` one step past it.
  std::string graph_attribute_text(const Graph& body, const std::string& indent) {
    // The statements go to out_, so print them into a fresh buffer and splice it.
    std::string outer = std::exchange(out_, std::string());
    out_ += fmt::format("graph {}(", identifier_or_quoted(body.name));
    print_parameters(body.inputs());
    out_ += ") -> (";
    print_parameters(body.outputs());
    out_ += ") {\n";
    print_statements(body, indent + "    ");
    print_return(body, indent + "    ");
    out_ += indent + "  }";
    return std::exchange(out_, std::move(outer));
  }

  std::string attribute_text(const AttributeValue& attribute, const std::string& hint) {
    return std::visit(
        [&](const auto& value) -> std::string {
          using V = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<V, int64_t>) {
            return fmt::format("{}", value);
          } else if constexpr (std::is_same_v<V, float>) {
            return float_text(value);
          } else if constexpr (std::is_same_v<V, std::string>) {
            return graph_text::quote(value);
          } else if constexpr (std::is_same_v<V, std::vector<int64_t>>) {
            if (value.empty()) return "ints[]";
            return fmt::format("[{}]", fmt::join(value, ","));
          } else if constexpr (std::is_same_v<V, std::vector<float>>) {
            if (value.empty()) return "floats[]";
            std::vector<std::string> items;
            for (float item : value) items.push_back(float_text(item));
            return fmt::format("[{}]", fmt::join(items, ", "));
          } else if constexpr (std::is_same_v<V, std::vector<std::string>>) {
            if (value.empty()) return "strings[]";
            std::vector<std::string> items;
            for (const std::string& item : value) items.push_back(graph_text::quote(item));
            return fmt::format("[{}]", fmt::join(items, ", "));
          } else if constexpr (std::is_same_v<V, Tensor>) {
            return fmt::format("tensor<{} {}>", type_string(value.type()),
                               tensor_data_text(value, hint));
          } else {
            static_assert(std::is_same_v<V, GraphAttribute>);
            internal_fail("a graph attribute prints through graph_attribute_text");
          }
        },
        attribute);
  }

  // `splat<v>`, `dense<[...]>` or `resource<name>` (recording the bytes for the section).
  std::string tensor_data_text(const Tensor& tensor, const std::string& resource_hint) {
    int64_t count = tensor.num_elements();
    if (count > 1 && is_splat(tensor)) return fmt::format("splat<{}>", element_text(tensor, 0));
    if (count <= options_.max_inline_elements) {
      std::vector<std::string> items;
      for (int64_t i = 0; i < count; ++i) items.push_back(element_text(tensor, i));
      return fmt::format("dense<[{}]>", fmt::join(items, ", "));
    }
    if (options_.elide_large_constants) {
      return fmt::format("dense<...elided, {} elements>", count);
    }
    std::string name = resource_hint;
    for (int suffix = 1; !resource_names_.insert(name).second; ++suffix) {
      name = fmt::format("{}.{}", resource_hint, suffix);
    }
    resources_.push_back({name, &tensor});
    return fmt::format("resource<{}>", identifier_or_quoted(name));
  }

  static bool is_splat(const Tensor& tensor) {
    auto bytes = tensor.bytes();
    size_t size = static_cast<size_t>(dtype_size(tensor.dtype()));
    for (size_t offset = size; offset < bytes.size(); offset += size) {
      if (!std::equal(bytes.begin(), bytes.begin() + size, bytes.begin() + offset)) return false;
    }
    return true;
  }

  void print_return(const Graph& graph, const std::string& indent) {
    std::vector<std::string> outputs;
    for (const Value* output : graph.outputs()) outputs.push_back(ref_text(output));
    out_ += indent + "return";
    if (!outputs.empty()) out_ += " " + fmt::format("{}", fmt::join(outputs, ", "));
    out_ += "\n";
  }

  void print_resources() {
    if (resources_.empty()) return;
    static constexpr char kHex[] = "0123456789abcdef";
    out_ += "\nresources {\n";
    for (const Resource& resource : resources_) {
      out_ += fmt::format("  {}: \"", identifier_or_quoted(resource.name));
      auto bytes = resource.tensor->bytes();
      out_.reserve(out_.size() + bytes.size() * 2 + 4);
      for (std::byte b : bytes) {
        auto value = static_cast<unsigned>(b);
        out_ += kHex[value >> 4];
        out_ += kHex[value & 0xfu];
      }
      out_ += "\"\n";
    }
    out_ += "}\n";
  }

  struct Resource {
    std::string name;
    const Tensor* tensor;
  };

  const Graph& graph_;
  const GraphPrintOptions& options_;
  std::string out_;
  std::vector<Resource> resources_;
  std::set<std::string> resource_names_;
};

}  // namespace

std::string print_graph(const Graph& graph, const GraphPrintOptions& options) {
  return Printer(graph, options).print();
}

}  // namespace minic
