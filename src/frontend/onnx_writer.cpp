// Graph IR → ONNX ModelProto: export_onnx, the importer run backwards. Course module 2.
//
// For tools and tests (`minic opt --emit onnx`), and for passes whose result another
// runtime must run: ONNX Runtime reads what this writes.
// Precondition: a verified graph of ONNX ops with an opset. What ONNX cannot hold is
// refused, naming the node, the op and why: a fused node (a fusion group of the fuse-ops
// pass) and an op of minic's own (minic.NchwcConv, minic.WinogradInput: the layout passes).
// Invariant: import_onnx reads the file back into the same graph: the same names, ops,
// attributes, constants (bit for bit) and node order, bodies included; except that a body
// value named like an outer one is renamed, and a body returning an outer value gains an
// Identity (step 3).
//
// Algorithm:
//   1. the model: the default-domain opset of the graph, the oldest IR version that holds
//      both that opset and every element type the graph uses, producer "minic"; and
//      version 1 of the domain of each custom op (include/minic/ops/custom_op.h) written,
//      whose nodes carry their domain;
//   2. a graph: first every value gets its name in the file (step 4); then the inputs and
//      outputs as ValueInfos (element type and static shape; a body's untyped values by
//      name only, but for Loop's iteration number and condition), the constants as
//      initializers (raw_data, in creation order), the nodes in their topological order,
//      an omitted optional input as "";
//   3. attributes become AttributeProtos of their kind; a graph attribute (a body of If,
//      Loop or Scan) is written by step 2 as a scope inside the node's graph, inverting
//      the importer's step 5: the node's last `captures` inputs, and the body inputs that
//      stand for them, become reads of the outer names (the `captures` attribute goes);
//      a body constant equal (type and bytes) to an outer constant of its name is read
//      from outside; the body's other constants are initializers of its own; a body that
//      returns an outer value returns an Identity of it, as ONNX wants;
//   4. names: ONNX gives a name one value across a graph and the bodies inside it, so a
//      body value named like a value of a graph around it gets a fresh name ("x_1").
//      Everything else keeps minic's name.
//
// Chapter: docs/module2-graph-ir.md#2-the-frontend-srcfrontend
#include "onnx_proto.h"

#include "minic/ops/custom_op.h"
#include "minic/ops/op.h"

#include <algorithm>
#include <array>
#include <climits>
#include <set>
#include <unordered_map>

namespace minic {

namespace {

// The oldest IR version that holds default-domain opset `opset`: ONNX's release table
// (onnx.helper.VERSION_TABLE), as the first opset of each IR version after 3.
int64_t ir_version_for_opset(int opset) {
  struct FirstOpset {
    int opset;
    int64_t ir_version;
  };
  constexpr std::array<FirstOpset, 10> kTable = {{{9, 4}, {10, 5}, {11, 6}, {12, 7}, {15, 8},
                                                  {19, 9}, {21, 10}, {23, 11}, {24, 12},
                                                  {25, 13}}};
  int64_t version = 3;
  for (const FirstOpset& entry : kTable) {
    if (opset >= entry.opset) version = entry.ir_version;
  }
  return version;
}

// The oldest IR version that has element type `dtype` (onnx.proto's list of versions).
int64_t ir_version_for_dtype(DType dtype) {
  switch (dtype) {
    case DType::f8e4m3fn:
    case DType::f8e4m3fnuz:
    case DType::f8e5m2:
    case DType::f8e5m2fnuz: return 9;
    case DType::i4:
    case DType::u4: return 10;
    case DType::f4e2m1: return 11;
    case DType::f8e8m0: return 12;
    case DType::i2:
    case DType::u2: return 13;
    default: return 3;
  }
}

// The names of one graph in the file: the top-level graph, or a body inside a node of the
// graph around it.
struct Scope {
  const Scope* outer = nullptr;  // null for the top-level graph
  std::string where;             // for messages: "" or "Loop node 'l': in its body ...: "
  std::unordered_map<const Value*, std::string> names;    // each value's name in the file
  std::unordered_map<std::string, const Value*> defined;  // the names this graph defines

  // The value that `name` names here or in a graph around, or null.
  const Value* find(const std::string& name) const {
    for (const Scope* scope = this; scope; scope = scope->outer) {
      auto it = scope->defined.find(name);
      if (it != scope->defined.end()) return it->second;
    }
    return nullptr;
  }

  // True if `value` has a name of this graph's own: not read from a graph around.
  bool defines(const Value* value) const {
    auto it = defined.find(names.at(value));
    return it != defined.end() && it->second == value;
  }

  // A name for `value` that this graph defines: `base`, or `base_1`, `base_2`, ... where
  // that is taken here or around.
  std::string fresh(const std::string& base, const Value* value) {
    std::string name = base;
    for (int suffix = 1; find(name); ++suffix) name = fmt::format("{}_{}", base, suffix);
    defined[name] = value;
    return name;
  }

  // Gives `value` its own name, or a fresh one.
  void define(const Value* value) { names[value] = fresh(value->name(), value); }
};

// The number of a control-flow node's last inputs that are outer values its bodies read.
size_t capture_count(const Node& node, const std::string& where) {
  auto it = node.attributes.find("captures");
  if (it == node.attributes.end()) return 0;
  const int64_t* captures = std::get_if<int64_t>(&it->second);
  if (!captures || *captures < 0 || static_cast<size_t>(*captures) > node.inputs().size()) {
    fail("{}{}: attribute captures must be an int of at most the node's {} inputs", where,
         node.describe(), node.inputs().size());
  }
  return static_cast<size_t>(*captures);
}

void set_scalar_type(onnx::ValueInfoProto& info, int32_t elem_type) {
  onnx::TypeProto::Tensor* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  tensor->mutable_shape();  // rank 0
}

bool has_bodies(const Node& node) {
  const OpSchema* schema = op_registry().find(node.op);
  return schema && !schema->graph_attributes.empty();
}

class Exporter {
 public:
  onnx::ModelProto run(const Graph& graph) {
    if (graph.opset < 1) {
      fail("graph '{}' has no opset; ONNX needs the version of the default-domain opset",
           graph.name);
    }
    onnx::ModelProto model;
    model.set_producer_name("minic");
    onnx::OperatorSetIdProto* import = model.add_opset_import();
    import->set_domain("");
    import->set_version(graph.opset);
    Scope scope;
    write_graph(graph, scope, *model.mutable_graph());
    for (const std::string& domain : custom_domains_) {
      onnx::OperatorSetIdProto* custom = model.add_opset_import();
      custom->set_domain(domain);
      custom->set_version(1);
    }
    model.set_ir_version(std::max(ir_version_for_opset(graph.opset), dtype_ir_version_));
    MINIC_CHECK(model.ir_version() <= kMaxIrVersion);
    return model;
  }

 private:
  // Step 2, for the top-level graph and for bodies, whose captures `scope` names already.
  void write_graph(const Graph& graph, Scope& scope, onnx::GraphProto& proto) {
    proto.set_name(graph.name);
    for (const Value* value : graph.values()) {
      if (!scope.names.count(value)) scope.define(value);
    }
    for (const Value* input : graph.inputs()) {
      if (scope.defines(input)) write_value_info(*input, scope, *proto.add_input());
    }
    for (const Value* value : graph.values()) {
      if (!value->is_constant() || graph.is_graph_input(value) || !scope.defines(value)) continue;
      note_dtype(value->constant->dtype());
      *proto.add_initializer() = tensor_to_proto(*value->constant, scope.names.at(value));
    }
    for (const Node* node : graph.nodes()) write_node(*node, scope, *proto.add_node());
    for (const Value* output : graph.outputs()) {
      onnx::ValueInfoProto* info = proto.add_output();
      write_value_info(*output, scope, *info);
      if (scope.defines(output)) continue;
      // ONNX wants a body's outputs defined in the body: a body that returns an outer
      // value returns a copy of it.
      std::string copy = scope.fresh(output->name(), output);
      onnx::NodeProto* identity = proto.add_node();
      identity->set_op_type("Identity");
      identity->add_input(info->name());
      identity->add_output(copy);
      info->set_name(copy);
    }
  }

  void write_value_info(const Value& value, const Scope& scope, onnx::ValueInfoProto& info) {
    info.set_name(scope.names.at(&value));
    if (!value.has_type) return;  // a body's: its types follow from the values it runs on
    note_dtype(value.type.dtype);
    onnx::TypeProto::Tensor* tensor = info.mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(dtype_to_onnx(value.type.dtype));
    onnx::TensorShapeProto* shape = tensor->mutable_shape();
    for (int64_t dim : value.type.shape) shape->add_dim()->set_dim_value(dim);
  }

  void write_node(const Node& node, const Scope& scope, onnx::NodeProto& proto) {
    if (node.is_fused()) {
      fail("{}{}: a fused node (a fusion group of the fuse-ops pass) has no ONNX form; export "
           "the graph before fuse-ops",
           scope.where, node.describe());
    }
    const size_t dot = node.op.rfind('.');
    if (dot != std::string::npos && !is_custom_op(node.op)) {
      fail("{}{}: op {} is minic's own, outside ONNX's default domain, so ONNX cannot hold it; "
           "export the graph before the pass that made it",
           scope.where, node.describe(), node.op);
    }
    if (dot != std::string::npos) {  // a custom op: its domain, imported at version 1
      proto.set_domain(node.op.substr(0, dot));
      custom_domains_.insert(proto.domain());
    }
    proto.set_op_type(dot == std::string::npos ? node.op : node.op.substr(dot + 1));
    proto.set_name(node.name);
    const bool bodies = has_bodies(node);
    const size_t captures = bodies ? capture_count(node, scope.where) : 0;
    const size_t own_inputs = node.inputs().size() - captures;
    for (size_t i = 0; i < own_inputs; ++i) {
      const Value* input = node.input(i);
      proto.add_input(input ? scope.names.at(input) : "");
    }
    for (const Value* output : node.outputs()) proto.add_output(scope.names.at(output));
    for (const auto& [name, value] : node.attributes) {
      if (bodies && name == "captures") continue;
      onnx::AttributeProto* attribute = proto.add_attribute();
      attribute->set_name(name);
      write_attribute(node, value, scope, *attribute);
    }
  }

  // Step 3.
  void write_attribute(const Node& node, const AttributeValue& value, const Scope& scope,
                       onnx::AttributeProto& proto) {
    using onnx::AttributeProto;
    if (const auto* i = std::get_if<int64_t>(&value)) {
      proto.set_type(AttributeProto::INT);
      proto.set_i(*i);
    } else if (const auto* f = std::get_if<float>(&value)) {
      proto.set_type(AttributeProto::FLOAT);
      proto.set_f(*f);
    } else if (const auto* s = std::get_if<std::string>(&value)) {
      proto.set_type(AttributeProto::STRING);
      proto.set_s(*s);
    } else if (const auto* ints = std::get_if<std::vector<int64_t>>(&value)) {
      proto.set_type(AttributeProto::INTS);
      for (int64_t element : *ints) proto.add_ints(element);
    } else if (const auto* floats = std::get_if<std::vector<float>>(&value)) {
      proto.set_type(AttributeProto::FLOATS);
      for (float element : *floats) proto.add_floats(element);
    } else if (const auto* strings = std::get_if<std::vector<std::string>>(&value)) {
      proto.set_type(AttributeProto::STRINGS);
      for (const std::string& element : *strings) proto.add_strings(element);
    } else if (const auto* tensor = std::get_if<Tensor>(&value)) {
      proto.set_type(AttributeProto::TENSOR);
      note_dtype(tensor->dtype());
      *proto.mutable_t() = tensor_to_proto(*tensor, "");
    } else {
      const GraphAttribute& body = std::get<GraphAttribute>(value);
      MINIC_CHECK(body != nullptr);
      proto.set_type(AttributeProto::GRAPH);
      write_body(node, proto.name(), *body, scope, *proto.mutable_g());
    }
  }

  // A body of `node`, as a scope inside `outer`.
  void write_body(const Node& node, const std::string& attribute, const Graph& body,
                  const Scope& outer, onnx::GraphProto& proto) {
    Scope scope;
    scope.outer = &outer;
    scope.where = fmt::format("{}{}: in its body '{}' (attribute {}): ", outer.where,
                              node.describe(), body.name, attribute);
    const size_t captures = capture_count(node, outer.where);
    if (body.inputs().size() < captures) {
      fail("{}the body has {} inputs, fewer than the node's {} captures", scope.where,
           body.inputs().size(), captures);
    }
    // The body inputs that stand for the node's last inputs read those by their names.
    for (size_t i = 0; i < captures; ++i) {
      const Value* value = node.input(node.inputs().size() - captures + i);
      if (!value) fail("{}captured input {} is omitted", scope.where, i);
      scope.names[body.inputs()[body.inputs().size() - captures + i]] = outer.names.at(value);
    }
    // The importer copies the outer constants a body reads into the body: read them back.
    for (const Value* value : body.values()) {
      if (!value->is_constant() || body.is_graph_input(value)) continue;
      const Value* around = outer.find(value->name());
      if (around && around->is_constant() && around->type == value->type &&
          around->constant->identical(*value->constant)) {
        scope.names[value] = value->name();
      }
    }
    write_graph(body, scope, proto);
    // ONNX Runtime types a body's inputs from the node's inputs, but Loop's condition may
    // be omitted: the types of its body's iteration number and condition, fixed by the
    // op, are written.
    if (node.op == "Loop" && proto.input_size() >= 2) {
      set_scalar_type(*proto.mutable_input(0), onnx::TensorProto::INT64);
      set_scalar_type(*proto.mutable_input(1), onnx::TensorProto::BOOL);
    }
  }

  void note_dtype(DType dtype) {
    dtype_ir_version_ = std::max(dtype_ir_version_, ir_version_for_dtype(dtype));
  }

  int64_t dtype_ir_version_ = 3;  // the oldest IR version with every element type written
  std::set<std::string> custom_domains_;  // the domains of the custom ops written
};

}  // namespace

std::string export_onnx_bytes(const Graph& graph) {
  onnx::ModelProto model = Exporter().run(graph);
  if (model.ByteSizeLong() > static_cast<size_t>(INT_MAX)) {
    fail("graph '{}' is over 2 GiB as ONNX, more than one protobuf message can hold; minic "
         "writes no external data",
         graph.name);
  }
  return model.SerializeAsString();
}

void export_onnx(const Graph& graph, const std::string& path) {
  write_file(path, export_onnx_bytes(graph));
}

}  // namespace minic
