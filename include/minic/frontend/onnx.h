// The ONNX frontend: reads a model file into the graph IR, and writes a graph back as one.
//
// Course module 2. An ONNX model is a protobuf ModelProto; minic reads it with the
// classes generated from ONNX's own onnx.proto (Debian's libonnx-dev), so the schema is
// never copied here. Import goes: read and parse the file (refusing what is not a
// model); list every unsupported op at once; build Values for inputs and initializers
// and a Node per NodeProto; fix symbolic input dimensions from the options; infer shapes
// (src/ops/shape_inference.cpp); verify. Export (src/frontend/onnx_writer.cpp) is its
// inverse: importing an exported graph gives back the same graph, but for the few body
// details ONNX spells otherwise (that file's header names them).
//
// Chapter: docs/module2-graph-ir.md#2-the-frontend-srcfrontend
#pragma once

#include "minic/ir/graph/graph.h"

#include <map>
#include <string>
#include <vector>

namespace minic {

struct OnnxImportOptions {
  // Sizes for symbolic or missing input dimensions: input name → full shape
  // (from `--input-shape NAME=1x3x224x224`).
  std::map<std::string, Shape> input_shapes;
  // Values of graph inputs known before compiling. An input whose value decides an
  // output shape (Reshape's shape, Slice's starts, ...) is frozen to its value; other
  // inputs stay inputs. Their shapes also fix symbolic dimensions.
  std::map<std::string, Tensor> known_inputs;
  // A model of an older opset is converted to this one first, with ONNX's version
  // converter (0: only where minic lacks an op's older form).
  int minimum_opset = 0;
};

// One tensor at the model's boundary, as the file states it: dimensions may be
// symbolic ("batch") or missing ("?").
struct OnnxValueInfo {
  std::string name;
  std::string dtype;               // minic's name ("f32") or ONNX's for types minic lacks
  std::vector<std::string> dims;   // "1", "3", "batch", "?"
  bool rank_known = true;          // false if the file gives no shape at all
  bool is_tensor = true;           // false for a sequence, map, optional or sparse value
};

struct OnnxUnsupportedOp {
  std::string op;                  // "domain.Op" outside the default domain
  int opset = 0;
  std::vector<std::string> nodes;  // names (or output names) of the nodes using it
};

// What `minic inspect` shows; readable even for models minic cannot import.
struct OnnxModelSummary {
  std::string path;
  int64_t ir_version = 0;
  int opset = 0;                   // default domain
  int converted_opset = 0;         // the opset import converts it to first; 0: none
  std::string producer;
  std::vector<OnnxValueInfo> inputs;   // graph inputs that are not initializers
  std::vector<OnnxValueInfo> outputs;
  std::map<std::string, int> op_counts;
  std::vector<OnnxUnsupportedOp> unsupported;
};

// Reads and summarises a model. Throws Error if the file is not a readable model.
OnnxModelSummary summarize_onnx(const std::string& path);

// Why a graph input or output that is not a tensor (`!value.is_tensor`) cannot be used:
// "input 'x' has type sequence, not a tensor; ...". `role` is "input" or "output".
std::string not_a_tensor_message(const OnnxValueInfo& value, std::string_view role);

// Imports a model into a verified graph with every type inferred. Throws Error naming the
// file (and node, op and reason where there is one) on bad or unsupported input.
Graph import_onnx(const std::string& path, const OnnxImportOptions& options = {});

// Writes `graph` as an ONNX model file: the graph's opset (default domain), the oldest IR
// version that holds it and the element types used, producer "minic"; inputs and outputs
// with their static types, constants as initializers, every node with its attributes, and
// the bodies of If, Loop and Scan as subgraphs that read outer values by name. Value names
// stay minic's (a body value named like an outer one gets a fresh name, as ONNX wants).
// Throws Error naming the node, op and reason for what ONNX cannot hold: a fused node, an
// op of minic's own ("minic.NchwcConv"); and for a graph without an opset.
void export_onnx(const Graph& graph, const std::string& path);
// The serialised ModelProto that export_onnx writes.
std::string export_onnx_bytes(const Graph& graph);

// TensorProto files (the inputs and outputs of ONNX's backend tests).
Tensor read_tensor_proto(const std::string& path);
void write_tensor_proto(const std::string& path, const Tensor& tensor,
                        const std::string& name = "");

}  // namespace minic
