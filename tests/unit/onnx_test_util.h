// Helpers for the frontend tests: build small ONNX models with the protobuf API and save
// them in a temporary directory. Course module 2.
#pragma once

#include "minic/frontend/onnx.h"
#include "minic/support/error.h"

#include <onnx/onnx_pb.h>

#include <atomic>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace minic::testing {

// A fresh directory under the system's temporary directory, removed with its contents when
// the object goes away.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            fmt::format("minic-test-{}-{}", getpid(), counter++);
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code error;
    std::filesystem::remove_all(path_, error);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

  std::string write(const std::string& name, const std::string& bytes) const {
    std::string full = file(name);
    std::ofstream stream(full, std::ios::binary | std::ios::trunc);
    stream.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return full;
  }

 private:
  std::filesystem::path path_;
};

// How an ONNX node test folder's model is imported for a test: the inputs of
// test_data_set_0, bound by position to the model's graph inputs, as known values.
inline OnnxImportOptions node_case_import_options(const std::filesystem::path& folder) {
  OnnxModelSummary summary = summarize_onnx((folder / "model.onnx").string());
  OnnxImportOptions options;
  for (size_t k = 0; k < summary.inputs.size(); ++k) {
    std::filesystem::path file = folder / "test_data_set_0" / fmt::format("input_{}.pb", k);
    if (!std::filesystem::exists(file)) break;
    options.known_inputs[summary.inputs[k].name] = read_tensor_proto(file.string());
  }
  return options;
}

// The names of a case list (tests/onnx/node_cases.tsv, tests/onnx/expected_pass.txt): the
// first column of each line, tab-separated; '#' starts a comment.
inline std::vector<std::string> read_case_names(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot read the case list " + path);
  std::vector<std::string> names;
  for (std::string line; std::getline(file, line);) {
    std::string name = line.substr(0, line.find_first_of("#\t"));
    if (!name.empty()) names.push_back(name);
  }
  return names;
}

// A model with an empty graph named "g" that imports the default opset `opset`.
inline onnx::ModelProto make_model(int64_t opset = 17, int64_t ir_version = 8) {
  onnx::ModelProto model;
  model.set_ir_version(ir_version);
  model.set_producer_name("minic-test");
  onnx::OperatorSetIdProto* import = model.add_opset_import();
  import->set_domain("");
  import->set_version(opset);
  model.mutable_graph()->set_name("g");
  return model;
}

// Sets (replaces) a tensor type: dims are numbers ("3"), symbolic names ("batch") or "?" (missing).
inline void set_tensor_type(onnx::TypeProto* type, int32_t elem_type,
                            const std::vector<std::string>& dims) {
  onnx::TypeProto::Tensor* tensor = type->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  shape->clear_dim();
  for (const std::string& dim : dims) {
    onnx::TensorShapeProto::Dimension* d = shape->add_dim();
    if (dim == "?") continue;
    if (std::isdigit(static_cast<unsigned char>(dim[0])) || dim[0] == '-') {
      d->set_dim_value(std::stoll(dim));
    } else {
      d->set_dim_param(dim);
    }
  }
}

inline void add_input(onnx::GraphProto* graph, const std::string& name, int32_t elem_type,
                      const std::vector<std::string>& dims) {
  onnx::ValueInfoProto* info = graph->add_input();
  info->set_name(name);
  set_tensor_type(info->mutable_type(), elem_type, dims);
}

inline void add_output(onnx::GraphProto* graph, const std::string& name, int32_t elem_type,
                       const std::vector<std::string>& dims) {
  onnx::ValueInfoProto* info = graph->add_output();
  info->set_name(name);
  set_tensor_type(info->mutable_type(), elem_type, dims);
}

inline onnx::NodeProto* add_node(onnx::GraphProto* graph, const std::string& op,
                                 const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& outputs,
                                 const std::string& name = "") {
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type(op);
  node->set_name(name);
  for (const std::string& input : inputs) node->add_input(input);
  for (const std::string& output : outputs) node->add_output(output);
  return node;
}

// An initializer of type FLOAT with its values in float_data.
inline onnx::TensorProto* add_float_initializer(onnx::GraphProto* graph, const std::string& name,
                                                const std::vector<int64_t>& dims,
                                                const std::vector<float>& values) {
  onnx::TensorProto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : dims) tensor->add_dims(dim);
  for (float value : values) tensor->add_float_data(value);
  return tensor;
}

// x: f32[2,3] → Identity (node "id") → y: f32[2,3].
inline onnx::ModelProto identity_model() {
  onnx::ModelProto model = make_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_input(graph, "x", onnx::TensorProto::FLOAT, {"2", "3"});
  add_node(graph, "Identity", {"x"}, {"y"}, "id");
  add_output(graph, "y", onnx::TensorProto::FLOAT, {"2", "3"});
  return model;
}

inline std::string save_model(const TempDir& dir, const onnx::ModelProto& model,
                              const std::string& name = "model.onnx") {
  return dir.write(name, model.SerializeAsString());
}

}  // namespace minic::testing
