// ONNX ModelProto → graph IR: import_onnx. Course module 2.
//
// Algorithm:
//   1. read and check the file (onnx_reader.cpp), and convert a model whose opset is older
//      than minic reads for some op with ONNX's version converter (onnx_upgrade.cpp);
//   2. list every unsupported op at once, before building anything;
//   3. initializers become constants (old models also list them among the graph inputs:
//      those inputs are constants, not inputs);
//   4. the remaining graph inputs become inputs with static shapes: symbolic or missing
//      dimensions are fixed from OnnxImportOptions, or the import stops and says how;
//   5. Constant nodes become constants; every other node becomes a Node, in file order,
//      then inputs are linked by name (a file need not be in topological order) and the
//      nodes sorted topologically. A graph attribute (the body of If, Loop, Scan) is
//      imported the same way into a graph of its own, untyped: the outer constants it
//      reads become its own (sharing their data), the other outer values explicit inputs,
//      its last ones, which the node passes as its last inputs, counted by a `captures`
//      attribute; so every graph reads only its own values;
//   6. shape inference gives every value its type (freezing inputs whose values decide
//      shapes), the model's declared output types are checked against it, and the graph
//      is verified.
// Every error names the model file; errors about one node also name the node and op.
//
// Chapter: docs/module2-graph-ir.md#2-the-frontend-srcfrontend
#include "onnx_proto.h"

#include "minic/ir/graph/verifier.h"
#include "minic/ops/shape_inference.h"

#include <algorithm>
#include <unordered_set>

namespace minic {

namespace {

// The most node names listed for one unsupported op.
constexpr size_t kMaxListedNodes = 8;

std::string unsupported_message(const std::string& path,
                                const std::vector<OnnxUnsupportedOp>& unsupported) {
  std::string message = fmt::format("{}: minic does not support {} of the ops this model uses:",
                                    path, unsupported.size());
  for (const OnnxUnsupportedOp& op : unsupported) {
    std::vector<std::string> names;
    for (size_t i = 0; i < op.nodes.size() && i < kMaxListedNodes; ++i) {
      names.push_back(fmt::format("'{}'", op.nodes[i]));
    }
    if (op.nodes.size() > kMaxListedNodes) {
      names.push_back(fmt::format("and {} more", op.nodes.size() - kMaxListedNodes));
    }
    message += fmt::format("\n  {} (opset {}): {} {}", op.op, op.opset,
                           op.nodes.size() == 1 ? "node" : "nodes", fmt::join(names, ", "));
  }
  return message;
}

// A model dimension: its size, or nullopt with a label ("batch", or "?" when missing or
// -1, which exporters such as paddle2onnx write for a dynamic dimension).
struct ModelDim {
  std::optional<int64_t> size;
  std::string label;
};

std::string dims_string(const std::vector<ModelDim>& dims) {
  std::vector<std::string> parts;
  for (const ModelDim& dim : dims) parts.push_back(dim.label);
  return fmt::format("[{}]", fmt::join(parts, ","));
}

std::vector<ModelDim> model_dims(const onnx::TensorShapeProto& shape) {
  std::vector<ModelDim> dims;
  for (const onnx::TensorShapeProto::Dimension& dim : shape.dim()) {
    if (dim.has_dim_value() && dim.dim_value() == -1) {
      dims.push_back({std::nullopt, "?"});
    } else if (dim.has_dim_value()) {
      dims.push_back({dim.dim_value(), std::to_string(dim.dim_value())});
    } else if (dim.has_dim_param() && !dim.dim_param().empty()) {
      dims.push_back({std::nullopt, dim.dim_param()});
    } else {
      dims.push_back({std::nullopt, "?"});
    }
  }
  return dims;
}

// The type a model declares for a value, for messages: "f32[batch,1000]".
std::string declared_type_string(const onnx::TypeProto::Tensor& type) {
  std::optional<DType> dtype = dtype_from_onnx(type.elem_type());
  std::string element = dtype ? std::string(dtype_name(*dtype)) : onnx_type_name(type.elem_type());
  if (!type.has_shape()) return element + "[unknown rank]";
  return element + dims_string(model_dims(type.shape()));
}

std::vector<std::string> node_outer_names(const onnx::NodeProto& node);

// The names a graph reads from the scopes around it: used by its nodes (or by bodies
// nested in them) or returned, but not defined by its inputs, initializers or nodes; in
// order of first use.
std::vector<std::string> outer_names(const onnx::GraphProto& graph) {
  std::unordered_set<std::string> defined;
  for (const onnx::ValueInfoProto& input : graph.input()) defined.insert(input.name());
  for (const onnx::TensorProto& tensor : graph.initializer()) defined.insert(tensor.name());
  for (const onnx::NodeProto& node : graph.node()) {
    defined.insert(node.output().begin(), node.output().end());
  }
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  auto use = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name) && seen.insert(name).second) names.push_back(name);
  };
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& input : node.input()) use(input);
    for (const std::string& name : node_outer_names(node)) use(name);
  }
  for (const onnx::ValueInfoProto& output : graph.output()) use(output.name());
  return names;
}

// The outer names the bodies of a node read, all its graph attributes together.
std::vector<std::string> node_outer_names(const onnx::NodeProto& node) {
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (!attribute.has_g()) continue;
    for (const std::string& name : outer_names(attribute.g())) {
      if (seen.insert(name).second) names.push_back(name);
    }
  }
  return names;
}

class Importer {
 public:
  Importer(const std::string& path, const onnx::ModelProto& model,
           const OnnxImportOptions& options)
      : Importer(model, model.graph(), options,
                 ExternalDataPolicy{std::filesystem::path(path).parent_path()}) {}

  // The importer of a body, `graph`, of a node of the model.
  Importer(const onnx::ModelProto& model, const onnx::GraphProto& graph,
           const OnnxImportOptions& options, ExternalDataPolicy external)
      : model_(model), graph_proto_(graph), options_(options), external_(std::move(external)) {}

  Graph run() {
    graph_.name = graph_proto_.name().empty() ? "main" : graph_proto_.name();
    graph_.opset = default_opset(model_);
    collect_model_names();
    add_initializers();
    add_inputs();
    add_nodes();
    add_outputs();
    infer_types();
    check_declared_outputs();
    graph_.remove_unused_values();
    verify_graph(graph_);
    return std::move(graph_);
  }

  // A control-flow body: the outer constants it reads, as constants of its own sharing
  // their data; its formal inputs, then one input for each of `captures` (the other outer
  // names the node's bodies read), all untyped; its nodes and outputs as in a graph. No
  // shape inference: a body's types follow from the values it runs on (see
  // src/ops/subgraph.h).
  GraphAttribute run_body(const std::vector<std::string>& captures,
                          const std::vector<const Value*>& constants) {
    graph_.name = graph_proto_.name().empty() ? "body" : graph_proto_.name();
    graph_.opset = default_opset(model_);
    collect_model_names();
    for (const Value* outer : constants) {
      Value* value = graph_.add_constant(outer->name(), Tensor());
      value->type = outer->type;
      value->constant = outer->constant;
    }
    add_initializers();
    auto add_untyped_input = [&](const std::string& name) {
      if (name.empty()) fail("the graph has an input without a name");
      if (graph_.find_value(name)) fail("input '{}' is defined twice", name);
      graph_.add_input(name, TensorType{})->has_type = false;
    };
    for (const onnx::ValueInfoProto& input : graph_proto_.input()) {
      const Value* value = graph_.find_value(input.name());
      if (value && value->is_constant()) continue;  // an initializer listed as an input
      add_untyped_input(input.name());
    }
    for (const std::string& name : captures) add_untyped_input(name);
    add_nodes();
    add_outputs();
    graph_.remove_unused_values();
    return std::make_shared<const Graph>(std::move(graph_));
  }

 private:
  void collect_model_names() {
    for (const onnx::ValueInfoProto& input : graph_proto_.input()) {
      model_names_.insert(input.name());
    }
    for (const onnx::TensorProto& tensor : graph_proto_.initializer()) {
      model_names_.insert(tensor.name());
    }
    for (const onnx::NodeProto& node : graph_proto_.node()) {
      model_names_.insert(node.input().begin(), node.input().end());
      model_names_.insert(node.output().begin(), node.output().end());
    }
  }

  void add_initializers() {
    if (graph_proto_.sparse_initializer_size() > 0) {
      fail("sparse initializer '{}': minic has no sparse tensors",
           graph_proto_.sparse_initializer(0).values().name());
    }
    for (const onnx::TensorProto& tensor : graph_proto_.initializer()) {
      if (tensor.name().empty()) fail("the model has an initializer without a name");
      if (graph_.find_value(tensor.name())) {
        fail("initializer '{}' is defined twice", tensor.name());
      }
      std::string what = fmt::format("initializer '{}'", tensor.name());
      graph_.add_constant(tensor.name(), tensor_from_proto(tensor, external_, what));
    }
  }

  void add_inputs() {
    // The inputs that are not initializers, in order, each once.
    std::vector<const onnx::ValueInfoProto*> inputs;
    std::unordered_set<std::string> names;
    for (const onnx::ValueInfoProto& input : graph_proto_.input()) {
      if (input.name().empty()) fail("the model has an input without a name");
      const Value* value = graph_.find_value(input.name());
      if (value && value->is_constant()) continue;  // an initializer
      if (!names.insert(input.name()).second) fail("input '{}' is listed twice", input.name());
      inputs.push_back(&input);
    }
    // Options naming something else are mistakes worth reporting before anything else.
    auto check_named_input = [&](const std::string& name, std::string_view given_as) {
      if (names.count(name)) return;
      std::vector<std::string> listed;
      for (const onnx::ValueInfoProto* input : inputs) listed.push_back(input->name());
      fail("{} names '{}', which is not an input of the model (its inputs: {})", given_as, name,
           fmt::join(listed, ", "));
    };
    for (const auto& [name, shape] : options_.input_shapes) {
      check_named_input(name, "--input-shape");
    }
    for (const auto& [name, tensor] : options_.known_inputs) {
      check_named_input(name, "a value given for an input");
    }
    for (const onnx::ValueInfoProto* input : inputs) {
      graph_.add_input(input->name(), input_type(*input));
    }
  }

  // The static type of a graph input: its dtype from the model, its shape from the model
  // where the model fixes it, else from the options.
  TensorType input_type(const onnx::ValueInfoProto& input) {
    const std::string& name = input.name();
    const onnx::TypeProto& type = input.type();
    if (!type.has_tensor_type()) fail("{}", not_a_tensor_message(summarize_value(input), "input"));
    DType dtype = require_dtype(type.tensor_type().elem_type(), fmt::format("input '{}'", name));
    bool rank_known = type.tensor_type().has_shape();
    std::vector<ModelDim> dims;
    if (rank_known) dims = model_dims(type.tensor_type().shape());
    std::string model_shape = rank_known ? dims_string(dims) : "of unknown rank";
    for (const ModelDim& dim : dims) {
      if (dim.size && *dim.size < 0) {
        fail("input '{}' has negative dimension {} (shape {})", name, *dim.size, model_shape);
      }
    }

    // A shape given by the caller: --input-shape, or the shape of a known value.
    std::optional<Shape> given;
    std::string given_by;
    if (auto it = options_.input_shapes.find(name); it != options_.input_shapes.end()) {
      given = it->second;
      given_by = fmt::format("--input-shape {}={}", name, fmt::join(it->second, "x"));
    }
    if (auto it = options_.known_inputs.find(name); it != options_.known_inputs.end()) {
      const Tensor& value = it->second;
      if (value.dtype() != dtype) {
        fail("input '{}' is {} in the model, but the value given for it is {}", name,
             dtype_name(dtype), dtype_name(value.dtype()));
      }
      if (given && *given != value.shape()) {
        fail("{} disagrees with the shape {} of the value given for input '{}'", given_by,
             shape_string(value.shape()), name);
      }
      given = value.shape();
      given_by = fmt::format("the value given for input '{}'", name);
    }

    Shape shape;
    if (given) {
      if (rank_known && given->size() != dims.size()) {
        fail("{} has rank {}, but the model's input '{}' has rank {} (shape {})", given_by,
             given->size(), name, dims.size(), model_shape);
      }
      for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i].size && *dims[i].size != (*given)[i]) {
          fail("{} gives dimension {} as {}, but the model's input '{}' has {} there (shape {})",
               given_by, i, (*given)[i], name, *dims[i].size, model_shape);
        }
      }
      shape = *given;
    } else {
      if (!rank_known) {
        fail("input '{}' has no shape in the model; give its shape with --input-shape {}=AxBxC",
             name, name);
      }
      // Unknown dimensions shown as 1 in the suggested option.
      std::vector<int64_t> suggestion;
      for (const ModelDim& dim : dims) suggestion.push_back(dim.size.value_or(1));
      for (const ModelDim& dim : dims) {
        if (dim.size) continue;
        std::string which = dim.label == "?" ? std::string("a dimension of unknown size")
                                             : fmt::format("symbolic dimension '{}'", dim.label);
        fail("input '{}' has {} (shape {}); give its size with --input-shape {}={}", name, which,
             model_shape, name, fmt::join(suggestion, "x"));
      }
      for (const ModelDim& dim : dims) shape.push_back(*dim.size);
    }
    check_shape(shape, dtype, fmt::format("input '{}'", name));
    return {dtype, shape};
  }

  // A fresh name for an output the model leaves unnamed: not used anywhere in the model.
  std::string fresh_output_name(const onnx::NodeProto& node, int index) {
    const std::string& prefix = node.name().empty() ? node.op_type() : node.name();
    std::string base = fmt::format("{}_output{}", prefix, index);
    std::string name = base;
    for (int suffix = 1; model_names_.count(name) || graph_.find_value(name); ++suffix) {
      name = fmt::format("{}_{}", base, suffix);
    }
    model_names_.insert(name);
    return name;
  }

  void check_new_definition(const onnx::NodeProto& node, const std::string& name) {
    if (graph_.find_value(name)) {
      fail("{} defines %{}, which is already defined", describe_node(node), name);
    }
  }

  void add_nodes() {
    struct Built {
      Node* node;
      const onnx::NodeProto* proto;
      std::vector<std::string> captures;
    };
    std::vector<Built> built;
    for (const onnx::NodeProto& proto : graph_proto_.node()) {
      if (proto.op_type() == "Constant") {
        if (proto.output_size() != 1 || proto.output(0).empty()) {
          fail("{}: a Constant node must have one named output", describe_node(proto));
        }
        check_new_definition(proto, proto.output(0));
        graph_.add_constant(proto.output(0), constant_node_value(proto, external_));
        continue;
      }
      std::vector<std::string> outputs;
      std::unordered_set<std::string> own;
      for (int i = 0; i < proto.output_size(); ++i) {
        std::string name = proto.output(i).empty() ? fresh_output_name(proto, i) : proto.output(i);
        check_new_definition(proto, name);
        if (!own.insert(name).second) {
          fail("{} defines %{} twice", describe_node(proto), name);
        }
        outputs.push_back(name);
      }
      // The outer values the bodies read: constants go in as constants, the rest as
      // captures.
      std::vector<std::string> captures;
      std::vector<const Value*> constants;
      for (const std::string& name : node_outer_names(proto)) {
        const Value* value = graph_.find_value(name);
        if (value && value->is_constant()) {
          constants.push_back(value);
        } else {
          captures.push_back(name);
        }
      }
      BodyImport import_body = [&](const onnx::GraphProto& body, const std::string& attribute) {
        const OpSchema* schema = op_registry().find(qualified_op(proto));
        if (!schema || std::ranges::find(schema->graph_attributes, attribute) ==
                           schema->graph_attributes.end()) {
          fail("{}: attribute '{}' is a graph, which {} does not take", describe_node(proto),
               attribute, proto.op_type());
        }
        try {
          return Importer(model_, body, options_, external_).run_body(captures, constants);
        } catch (const InternalError&) {
          throw;
        } catch (const Error& error) {
          fail("{}: in its body '{}' (attribute {}): {}", describe_node(proto), body.name(),
               attribute, error.what());
        }
      };
      Node* node = graph_.add_node(qualified_op(proto), {}, outputs,
                                   convert_attributes(proto, external_, import_body),
                                   proto.name());
      if (!captures.empty()) node->attributes["captures"] = static_cast<int64_t>(captures.size());
      built.push_back({node, &proto, std::move(captures)});
    }
    // Link inputs by name now that every value exists: the node's own, then the outer
    // values its bodies read.
    for (auto& [node, proto, captures] : built) {
      std::vector<Value*> inputs;
      std::vector<std::string> names(proto->input().begin(), proto->input().end());
      names.insert(names.end(), captures.begin(), captures.end());
      for (const std::string& name : names) {
        Value* input = nullptr;
        if (!name.empty()) {
          input = graph_.find_value(name);
          if (!input) fail("{} uses %{}, which is not defined", node->describe(), name);
        }
        inputs.push_back(input);
      }
      graph_.set_inputs(node, std::move(inputs));
    }
    graph_.sort_topologically();
  }

  void add_outputs() {
    if (graph_proto_.output_size() == 0) {
      fail("{} has no outputs", &graph_proto_ == &model_.graph() ? "the model" : "the graph");
    }
    for (const onnx::ValueInfoProto& output : graph_proto_.output()) {
      Value* value = graph_.find_value(output.name());
      if (!value) {
        fail("graph output '{}' is not defined by any node, input or initializer", output.name());
      }
      graph_.add_output(value);
    }
  }

  void infer_types() {
    ShapeInferenceOptions inference;
    inference.input_value = [&](const Value& input) -> std::optional<Tensor> {
      auto it = options_.known_inputs.find(input.name());
      if (it == options_.known_inputs.end()) return std::nullopt;
      return it->second;
    };
    infer_shapes(graph_, inference);
  }

  // The model's declared output types must agree with what minic infers.
  void check_declared_outputs() {
    for (int i = 0; i < graph_proto_.output_size(); ++i) {
      const onnx::ValueInfoProto& declared = graph_proto_.output(i);
      const TensorType& inferred = graph_.outputs()[i]->type;
      const onnx::TypeProto& type = declared.type();
      if (type.value_case() == onnx::TypeProto::VALUE_NOT_SET) continue;
      if (!type.has_tensor_type()) {
        fail("output '{}' is declared in the model as a non-tensor type, but minic infers {}",
             declared.name(), type_string(inferred));
      }
      const onnx::TypeProto::Tensor& tensor = type.tensor_type();
      bool agrees = tensor.elem_type() == onnx::TensorProto::UNDEFINED ||
                    dtype_from_onnx(tensor.elem_type()) == inferred.dtype;
      if (tensor.has_shape()) {
        std::vector<ModelDim> dims = model_dims(tensor.shape());
        agrees = agrees && dims.size() == inferred.shape.size();
        for (size_t d = 0; agrees && d < dims.size(); ++d) {
          agrees = !dims[d].size || *dims[d].size == inferred.shape[d];
        }
      }
      if (!agrees) {
        fail("output '{}' is declared as {} in the model, but minic infers {}", declared.name(),
             declared_type_string(tensor), type_string(inferred));
      }
    }
  }

  const onnx::ModelProto& model_;
  const onnx::GraphProto& graph_proto_;
  const OnnxImportOptions& options_;
  ExternalDataPolicy external_;
  Graph graph_;
  std::unordered_set<std::string> model_names_;  // every name the model uses
};

}  // namespace

Graph import_onnx(const std::string& path, const OnnxImportOptions& options) {
  onnx::ModelProto model = read_model_proto(path);
  upgrade_old_opset(model, path, options.minimum_opset);
  std::vector<OnnxUnsupportedOp> unsupported = find_unsupported_ops(model);
  if (!unsupported.empty()) throw Error(unsupported_message(path, unsupported));
  try {
    return Importer(path, model, options).run();
  } catch (const Error& error) {
    throw Error(fmt::format("{}: {}", path, error.what()));
  }
}

}  // namespace minic
