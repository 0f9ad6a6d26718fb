// Reading an ONNX model file, and what can be said about a model without importing it.
// Course module 2.
//
// read_model_proto refuses, with a message naming the file, everything that is not a model
// minic can read: a missing or empty file, a Git LFS pointer (a clone without `git lfs
// pull` holds these instead of the model), bytes that do not parse as a ModelProto, an IR
// version or a default-domain opset newer than minic knows. ONNX 1.12's generated classes
// parse models from newer exporters: fields they do not know land in unknown fields.
//
// find_unsupported_ops lists every op at once, so that a user learns the whole gap in one
// run instead of one op per attempt. summarize_onnx (`minic inspect`) works on any model
// that parses, including those with unsupported ops.
//
// Chapter: docs/module2-graph-ir.md#2-the-frontend-srcfrontend
#include "onnx_proto.h"

#include "minic/ops/op.h"

#include <climits>
#include <map>
#include <set>

namespace minic {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kLfsPointerStart = "version https://git-lfs.github.com/spec/v1";

int domain_opset(const onnx::ModelProto& model, const std::string& domain) {
  for (const onnx::OperatorSetIdProto& import : model.opset_import()) {
    if (import.domain() == domain) return static_cast<int>(import.version());
  }
  return 0;
}

// The name by which a node is listed: its own, else its first output's.
std::string node_label(const onnx::NodeProto& node) {
  if (!node.name().empty()) return node.name();
  for (const std::string& output : node.output()) {
    if (!output.empty()) return output;
  }
  return "(unnamed)";
}

std::string type_description(const onnx::TypeProto& type) {
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType: {
      int32_t elem = type.tensor_type().elem_type();
      std::optional<DType> dtype = dtype_from_onnx(elem);
      return dtype ? std::string(dtype_name(*dtype)) : onnx_type_name(elem);
    }
    case onnx::TypeProto::kSequenceType: return "sequence";
    case onnx::TypeProto::kMapType: return "map";
    case onnx::TypeProto::kOptionalType: return "optional";
    case onnx::TypeProto::kSparseTensorType: return "sparse_tensor";
    default: return "?";
  }
}

}  // namespace

OnnxValueInfo summarize_value(const onnx::ValueInfoProto& info) {
  OnnxValueInfo summary;
  summary.name = info.name();
  summary.dtype = type_description(info.type());
  const onnx::TypeProto& type = info.type();
  summary.is_tensor = type.has_tensor_type();
  summary.rank_known = summary.is_tensor && type.tensor_type().has_shape();
  if (summary.rank_known) {
    for (const onnx::TensorShapeProto::Dimension& dim : type.tensor_type().shape().dim()) {
      if (dim.has_dim_value()) {
        summary.dims.push_back(std::to_string(dim.dim_value()));
      } else if (dim.has_dim_param() && !dim.dim_param().empty()) {
        summary.dims.push_back(dim.dim_param());
      } else {
        summary.dims.push_back("?");
      }
    }
  }
  return summary;
}

std::string not_a_tensor_message(const OnnxValueInfo& value, std::string_view role) {
  return fmt::format("{} '{}' has type {}, not a tensor; minic supports tensor inputs and outputs "
                     "only (ONNX's sequences, maps and optionals are outside its scope)",
                     role, value.name, value.dtype);
}

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

std::string qualified_op(const onnx::NodeProto& node) {
  if (is_default_domain(node.domain())) return node.op_type();
  return fmt::format("{}.{}", node.domain(), node.op_type());
}

bool is_supported(const onnx::NodeProto& node, int opset) {
  // An op of another domain is supported once it is registered (a custom op, under its
  // qualified name), at any version of its domain.
  if (!is_default_domain(node.domain())) {
    return op_registry().find(qualified_op(node)) != nullptr;
  }
  if (node.op_type() == "Constant") return true;
  const OpSchema* schema = op_registry().find(node.op_type());
  return schema && opset >= schema->min_opset && opset <= schema->max_opset;
}

int default_opset(const onnx::ModelProto& model) {
  int version = 0;
  for (const onnx::OperatorSetIdProto& import : model.opset_import()) {
    if (is_default_domain(import.domain())) version = static_cast<int>(import.version());
  }
  return version;
}

std::string describe_node(const onnx::NodeProto& node) {
  if (!node.name().empty()) return fmt::format("{} node '{}'", node.op_type(), node.name());
  for (const std::string& output : node.output()) {
    if (!output.empty()) return fmt::format("{} node defining %{}", node.op_type(), output);
  }
  return fmt::format("{} node", node.op_type());
}

onnx::ModelProto read_model_proto(const std::string& path) {
  std::error_code error;
  uintmax_t size = fs::file_size(path, error);
  if (!error && size > static_cast<uintmax_t>(INT_MAX)) {
    fail("{}: the file is over 2 GiB, more than one protobuf message can hold; such models keep "
         "their weights as external data",
         path);
  }
  std::string bytes = read_file(path);
  if (bytes.empty()) fail("{}: the file is empty", path);
  if (std::string_view(bytes).starts_with(kLfsPointerStart)) {
    fail("{}: this is a Git LFS pointer file, not the model itself; fetch the real file "
         "(for example with `git lfs pull`)",
         path);
  }

  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    fail("{}: not an ONNX model: the file is truncated or is not a protobuf message", path);
  }
  if (model.ir_version() <= 0) fail("{}: not an ONNX model: it has no IR version", path);
  if (!model.has_graph()) fail("{}: not an ONNX model: it has no graph", path);
  if (model.ir_version() > kMaxIrVersion) {
    fail("{}: IR version {} is newer than minic supports (up to {})", path, model.ir_version(),
         kMaxIrVersion);
  }

  std::set<int64_t> default_versions;
  std::vector<std::string> other_domains;
  for (const onnx::OperatorSetIdProto& import : model.opset_import()) {
    if (is_default_domain(import.domain())) {
      default_versions.insert(import.version());
    } else {
      other_domains.push_back(fmt::format("{} {}", import.domain(), import.version()));
    }
  }
  if (default_versions.empty() && other_domains.empty()) {
    fail("{}: the model imports no default-domain (ai.onnx) opset, so its ops have no version",
         path);
  }
  if (default_versions.empty()) {
    fail("{}: the model's ops are in {} only; minic supports the default domain (ai.onnx)",
         path, fmt::join(other_domains, ", "));
  }
  if (default_versions.size() > 1) {
    fail("{}: the model imports the default-domain opset with different versions ({})", path,
         fmt::join(default_versions, ", "));
  }
  int64_t opset = *default_versions.begin();
  if (opset > kMaxOpset) {
    fail("{}: default-domain opset {} is newer than minic supports (up to {})", path, opset,
         kMaxOpset);
  }
  if (opset < 1) fail("{}: default-domain opset {} is not a valid version", path, opset);
  return model;
}

void for_each_node(const onnx::GraphProto& graph,
                   const std::function<void(const onnx::NodeProto&)>& visit) {
  for (const onnx::NodeProto& node : graph.node()) {
    visit(node);
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.has_g()) for_each_node(attribute.g(), visit);
      for (const onnx::GraphProto& body : attribute.graphs()) for_each_node(body, visit);
    }
  }
}

std::vector<OnnxUnsupportedOp> find_unsupported_ops(const onnx::ModelProto& model) {
  std::map<std::string, OnnxUnsupportedOp> by_op;
  for_each_node(model.graph(), [&](const onnx::NodeProto& node) {
    if (is_supported(node, default_opset(model))) return;
    std::string op = qualified_op(node);
    OnnxUnsupportedOp& entry = by_op[op];
    if (entry.op.empty()) {
      entry.op = op;
      entry.opset = is_default_domain(node.domain()) ? default_opset(model)
                                                     : domain_opset(model, node.domain());
    }
    entry.nodes.push_back(node_label(node));
  });
  std::vector<OnnxUnsupportedOp> result;
  for (auto& [name, entry] : by_op) result.push_back(std::move(entry));
  return result;
}

OnnxModelSummary summarize_onnx(const std::string& path) {
  onnx::ModelProto model = read_model_proto(path);
  const onnx::GraphProto& graph = model.graph();
  OnnxModelSummary summary;
  summary.path = path;
  summary.ir_version = model.ir_version();
  summary.opset = default_opset(model);
  summary.producer = model.producer_name();
  if (!model.producer_version().empty()) summary.producer += " " + model.producer_version();

  std::set<std::string> initializers;
  for (const onnx::TensorProto& tensor : graph.initializer()) initializers.insert(tensor.name());
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (!initializers.count(input.name())) summary.inputs.push_back(summarize_value(input));
  }
  for (const onnx::ValueInfoProto& output : graph.output()) {
    summary.outputs.push_back(summarize_value(output));
  }
  for (const onnx::NodeProto& node : graph.node()) ++summary.op_counts[qualified_op(node)];
  // What import would see: the model after ONNX's version converter, where it converts.
  try {
    int opset = upgrade_old_opset(model, path);
    if (opset != summary.opset) summary.converted_opset = opset;
  } catch (const Error&) {
    // A conversion that fails leaves the nodes as they were: their ops are listed below.
  }
  summary.unsupported = find_unsupported_ops(model);
  return summary;
}

}  // namespace minic
