// Internal to src/frontend: the pieces of the ONNX frontend that work on protobuf classes.
//
// Course module 2. The generated classes (namespace onnx, from Debian's libonnx-dev) stay
// inside src/frontend: public headers speak only minic's types. This header connects the
// files of the frontend:
//   onnx_reader.cpp      file → checked ModelProto; unsupported ops; summarize_onnx
//   tensor_proto.cpp     TensorProto ↔ Tensor (raw, typed and external data); .pb files
//   onnx_attributes.cpp  AttributeProto → Attribute; Constant nodes → Tensor
//   onnx_importer.cpp    ModelProto → Graph (import_onnx), bodies of control-flow ops too
//   onnx_writer.cpp      Graph → ModelProto (export_onnx), the importer's inverse
//
// Chapter: docs/module2-graph-ir.md#2-the-frontend-srcfrontend
#pragma once

#include "minic/frontend/onnx.h"
#include "minic/tensor/tensor.h"
#include "minic/support/file.h"

// onnx_pb.h defines ONNX_API, then includes onnx-ml.pb.h (ONNX_ML comes with onnx_proto).
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace minic {

// --- element types (tensor_proto.cpp) ------------------------------------------------------

// The DType of an ONNX TensorProto.DataType value, or nullopt for types minic lacks
// (STRING, COMPLEX64, COMPLEX128).
std::optional<DType> dtype_from_onnx(int32_t onnx_type);
int32_t dtype_to_onnx(DType type);
// ONNX's name of a DataType value: "FLOAT", "FLOAT8E4M3FN", "INT4"; "type 99" if unknown.
std::string onnx_type_name(int32_t onnx_type);
// The DType of `onnx_type`, or Error "<what> has element type STRING, which minic does
// not support".
DType require_dtype(int32_t onnx_type, std::string_view what);

// --- tensors (tensor_proto.cpp) ------------------------------------------------------------

// Where a tensor's external data may live: only inside `directory` (the model's own).
struct ExternalDataPolicy {
  std::filesystem::path directory;
};

// The tensor a TensorProto holds. `what` names it in messages ("initializer 'w'").
Tensor tensor_from_proto(const onnx::TensorProto& proto, const ExternalDataPolicy& external,
                         std::string_view what);
// A TensorProto holding `tensor` in raw_data (little-endian).
onnx::TensorProto tensor_to_proto(const Tensor& tensor, const std::string& name);

// --- models (onnx_reader.cpp) --------------------------------------------------------------

// Reads and parses a model file and checks what minic needs before looking inside: a real
// file (not a Git LFS pointer), a ModelProto, IR version and default opset in range.
// Errors name the file.
onnx::ModelProto read_model_proto(const std::string& path);
// The version of the default-domain ("" or "ai.onnx") opset the model imports.
int default_opset(const onnx::ModelProto& model);
bool is_default_domain(const std::string& domain);
// The name of a node's op as minic's graph and registry name it: "Conv", or
// "com.example.Gelu" outside the default domain.
std::string qualified_op(const onnx::NodeProto& node);
// True if minic has the node's op: in the default domain at `opset`, or another domain's
// op registered as a custom op (include/minic/ops/custom_op.h).
bool is_supported(const onnx::NodeProto& node, int opset);
// Calls `visit` on every node of `graph` and of the bodies in its graph attributes, at any
// depth, each before the nodes of its bodies.
void for_each_node(const onnx::GraphProto& graph,
                   const std::function<void(const onnx::NodeProto&)>& visit);
// Every op the graph (bodies included) uses that minic cannot import, sorted by name, with
// its nodes.
std::vector<OnnxUnsupportedOp> find_unsupported_ops(const onnx::ModelProto& model);
// A graph input or output as OnnxValueInfo: its name, element type and dims.
OnnxValueInfo summarize_value(const onnx::ValueInfoProto& info);
// "Conv node 'conv1'" or "Conv node defining %y": the same form as Node::describe().
std::string describe_node(const onnx::NodeProto& node);

// --- old opsets (onnx_upgrade.cpp) ---------------------------------------------------------

// When some op of the model is older than minic reads (Add with the `broadcast` attribute
// of opset 6), converts the model in place with ONNX's version converter to the lowest
// opset at which minic has all its ops, and at least to `minimum` (a caller that needs a
// newer op, as `minic quantize` needs opset 13's per-axis DequantizeLinear); else leaves
// it as it is. Returns the model's default-domain opset after. Error naming the file if
// the conversion fails.
int upgrade_old_opset(onnx::ModelProto& model, const std::string& path, int minimum = 0);

// --- nodes (onnx_attributes.cpp) -----------------------------------------------------------

// Imports the body held in graph attribute `attribute` of a node (the importer's, which
// knows the scope the body reads outer values from).
using BodyImport = std::function<GraphAttribute(const onnx::GraphProto& body,
                                                const std::string& attribute)>;
// The node's attributes; graph attributes go through `import_body`.
Attributes convert_attributes(const onnx::NodeProto& node, const ExternalDataPolicy& external,
                              const BodyImport& import_body);
// The value of a Constant node (attribute value, value_float(s) or value_int(s)).
Tensor constant_node_value(const onnx::NodeProto& node, const ExternalDataPolicy& external);

}  // namespace minic
