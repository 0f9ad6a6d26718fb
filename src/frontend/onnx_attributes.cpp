// ONNX node attributes → minic Attributes, and the values of Constant nodes.
// Course module 2.
//
// minic keeps the attribute kinds that parameterise tensor ops: int, float, string, their
// lists, tensors, and graphs (the bodies of If, Loop and Scan, imported by the importer,
// which knows the outer scope they read). Lists of graphs, sparse tensors and type protos
// are refused with the node's name; no op minic has uses them. A Constant node becomes a
// constant Value, so the graph never holds a Constant node.
//
// Chapter: docs/module2-graph-ir.md#2-the-frontend-srcfrontend
#include "onnx_proto.h"

namespace minic {

namespace {

using onnx::AttributeProto;

// The attribute's kind. Models from before IR version 2 may leave `type` unset: then the
// field that holds a value tells.
AttributeProto::AttributeType attribute_type(const AttributeProto& attribute) {
  if (attribute.type() != AttributeProto::UNDEFINED) return attribute.type();
  if (attribute.has_f()) return AttributeProto::FLOAT;
  if (attribute.has_i()) return AttributeProto::INT;
  if (attribute.has_s()) return AttributeProto::STRING;
  if (attribute.has_t()) return AttributeProto::TENSOR;
  if (attribute.has_g()) return AttributeProto::GRAPH;
  if (attribute.floats_size() > 0) return AttributeProto::FLOATS;
  if (attribute.ints_size() > 0) return AttributeProto::INTS;
  if (attribute.strings_size() > 0) return AttributeProto::STRINGS;
  return AttributeProto::UNDEFINED;
}

std::string_view unsupported_kind_name(AttributeProto::AttributeType type) {
  switch (type) {
    case AttributeProto::GRAPHS: return "a list of graphs";
    case AttributeProto::SPARSE_TENSOR: return "a sparse tensor";
    case AttributeProto::SPARSE_TENSORS: return "a list of sparse tensors";
    case AttributeProto::TYPE_PROTO: return "a type";
    case AttributeProto::TYPE_PROTOS: return "a list of types";
    case AttributeProto::TENSORS: return "a list of tensors";
    default: return "of an unknown kind";
  }
}

AttributeValue convert_attribute(const onnx::NodeProto& node, const AttributeProto& attribute,
                                 const ExternalDataPolicy& external,
                                 const BodyImport& import_body) {
  if (!attribute.ref_attr_name().empty()) {
    fail("{}: attribute '{}' refers to a function attribute, which minic does not support",
         describe_node(node), attribute.name());
  }
  AttributeProto::AttributeType type = attribute_type(attribute);
  switch (type) {
    case AttributeProto::INT: return attribute.i();
    case AttributeProto::FLOAT: return attribute.f();
    case AttributeProto::STRING: return attribute.s();
    case AttributeProto::INTS:
      return std::vector<int64_t>(attribute.ints().begin(), attribute.ints().end());
    case AttributeProto::FLOATS:
      return std::vector<float>(attribute.floats().begin(), attribute.floats().end());
    case AttributeProto::STRINGS:
      return std::vector<std::string>(attribute.strings().begin(), attribute.strings().end());
    case AttributeProto::TENSOR:
      return tensor_from_proto(attribute.t(), external,
                               fmt::format("{}: attribute '{}'", describe_node(node),
                                           attribute.name()));
    case AttributeProto::GRAPH: return import_body(attribute.g(), attribute.name());
    default:
      fail("{}: attribute '{}' is {}, which minic does not support", describe_node(node),
           attribute.name(), unsupported_kind_name(type));
  }
}

}  // namespace

Attributes convert_attributes(const onnx::NodeProto& node, const ExternalDataPolicy& external,
                              const BodyImport& import_body) {
  Attributes attributes;
  for (const AttributeProto& attribute : node.attribute()) {
    if (attribute.name().empty()) fail("{}: has an attribute without a name", describe_node(node));
    AttributeValue value = convert_attribute(node, attribute, external, import_body);
    if (!attributes.emplace(attribute.name(), std::move(value)).second) {
      fail("{}: attribute '{}' is given twice", describe_node(node), attribute.name());
    }
  }
  return attributes;
}

Tensor constant_node_value(const onnx::NodeProto& node, const ExternalDataPolicy& external) {
  if (node.attribute_size() != 1) {
    fail("{}: a Constant node needs exactly one attribute (value, value_float, value_int, ...); "
         "it has {}",
         describe_node(node), node.attribute_size());
  }
  const AttributeProto& attribute = node.attribute(0);
  const std::string& name = attribute.name();
  if (name == "value") {
    if (attribute_type(attribute) != AttributeProto::TENSOR) {
      fail("{}: attribute 'value' must be a tensor", describe_node(node));
    }
    return tensor_from_proto(attribute.t(), external,
                             fmt::format("{}: attribute 'value'", describe_node(node)));
  }
  if (name == "value_float") return Tensor::scalar<float>(attribute.f());
  if (name == "value_int") return Tensor::scalar<int64_t>(attribute.i());
  if (name == "value_floats") {
    std::vector<float> values(attribute.floats().begin(), attribute.floats().end());
    return Tensor::from_vector<float>({static_cast<int64_t>(values.size())}, values);
  }
  if (name == "value_ints") {
    std::vector<int64_t> values(attribute.ints().begin(), attribute.ints().end());
    return Tensor::from_vector<int64_t>({static_cast<int64_t>(values.size())}, values);
  }
  if (name == "value_string" || name == "value_strings") {
    fail("{}: a string constant ({}); minic has no string tensors", describe_node(node), name);
  }
  if (name == "sparse_value") {
    fail("{}: a sparse constant (sparse_value); minic has no sparse tensors", describe_node(node));
  }
  fail("{}: unknown Constant attribute '{}'", describe_node(node), name);
}

}  // namespace minic
