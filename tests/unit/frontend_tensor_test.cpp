// Unit tests for tensors in the ONNX frontend: element types, initializers from raw and
// typed data, external data and its directory rule, Constant nodes. Course module 2.
#include "minic/frontend/onnx.h"

#include "onnx_test_util.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <functional>

using namespace minic;
using namespace minic::testing;
using Catch::Contains;
using Catch::StartsWith;

namespace {

// x: f32[n] + initializer → Identity(initializer) → y; returns the imported initializer.
onnx::ModelProto model_with_initializer(const onnx::TensorProto& tensor) {
  onnx::ModelProto model = make_model();
  onnx::GraphProto* graph = model.mutable_graph();
  *graph->add_initializer() = tensor;
  add_node(graph, "Identity", {tensor.name()}, {"y"}, "id");
  onnx::ValueInfoProto* output = graph->add_output();
  output->set_name("y");
  return model;
}

Tensor import_initializer(const TempDir& dir, const onnx::TensorProto& tensor,
                          const std::string& file = "model.onnx") {
  Graph g = import_onnx(save_model(dir, model_with_initializer(tensor), file));
  const Value* value = g.find_value(tensor.name());
  REQUIRE(value != nullptr);
  REQUIRE(value->is_constant());
  return *value->constant;
}

onnx::TensorProto make_tensor(const std::string& name, int32_t type,
                              const std::vector<int64_t>& dims) {
  onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(type);
  for (int64_t dim : dims) tensor.add_dims(dim);
  return tensor;
}

// A tensor whose data lives in `location`.
onnx::TensorProto external_tensor(const std::string& location, int64_t offset, int64_t length) {
  onnx::TensorProto tensor = make_tensor("w", onnx::TensorProto::FLOAT, {2});
  tensor.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const std::string& key, const std::string& value) {
    onnx::StringStringEntryProto* entry = tensor.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  };
  add("location", location);
  add("offset", std::to_string(offset));
  add("length", std::to_string(length));
  return tensor;
}

std::string float_bytes(const std::vector<float>& values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

}  // namespace

TEST_CASE("initializers from typed fields", "[frontend][tensor]") {
  TempDir dir;
  onnx::TensorProto f = make_tensor("f", onnx::TensorProto::FLOAT, {2});
  f.add_float_data(1.5f);
  f.add_float_data(-2.0f);
  REQUIRE(import_initializer(dir, f).to_double_vector() == std::vector<double>{1.5, -2.0});

  onnx::TensorProto i8 = make_tensor("i8", onnx::TensorProto::INT8, {3});
  for (int v : {-128, 0, 127}) i8.add_int32_data(v);
  Tensor t = import_initializer(dir, i8);
  REQUIRE(t.dtype() == DType::i8);
  REQUIRE(t.to_int64_vector() == std::vector<int64_t>{-128, 0, 127});

  onnx::TensorProto b = make_tensor("b", onnx::TensorProto::BOOL, {3});
  for (int v : {1, 0, 5}) b.add_int32_data(v);
  REQUIRE(import_initializer(dir, b).to_int64_vector() == std::vector<int64_t>{1, 0, 1});

  // float16 1.0 is 0x3c00 and -2.0 is 0xc000; bfloat16 1.0 is 0x3f80.
  onnx::TensorProto h = make_tensor("h", onnx::TensorProto::FLOAT16, {2});
  h.add_int32_data(0x3c00);
  h.add_int32_data(0xc000);
  REQUIRE(import_initializer(dir, h).to_double_vector() == std::vector<double>{1.0, -2.0});
  onnx::TensorProto bf = make_tensor("bf", onnx::TensorProto::BFLOAT16, {1});
  bf.add_int32_data(0x3f80);
  REQUIRE(import_initializer(dir, bf).to_double_vector() == std::vector<double>{1.0});

  onnx::TensorProto i64 = make_tensor("i64", onnx::TensorProto::INT64, {2});
  i64.add_int64_data(int64_t{1} << 40);
  i64.add_int64_data(-3);
  REQUIRE(import_initializer(dir, i64).to_int64_vector() ==
          std::vector<int64_t>{int64_t{1} << 40, -3});

  onnx::TensorProto u32 = make_tensor("u32", onnx::TensorProto::UINT32, {1});
  u32.add_uint64_data(4000000000u);
  Tensor u = import_initializer(dir, u32);
  REQUIRE(u.dtype() == DType::u32);
  REQUIRE(u.values<uint32_t>()[0] == 4000000000u);

  onnx::TensorProto d = make_tensor("d", onnx::TensorProto::DOUBLE, {});
  d.add_double_data(0.1);
  Tensor scalar = import_initializer(dir, d);
  REQUIRE(scalar.shape().empty());
  REQUIRE(scalar.values<double>()[0] == 0.1);
}

TEST_CASE("initializers from raw_data, and size mismatches", "[frontend][tensor]") {
  TempDir dir;
  onnx::TensorProto raw = make_tensor("r", onnx::TensorProto::FLOAT, {3});
  raw.set_raw_data(float_bytes({1, 2, 3}));
  REQUIRE(import_initializer(dir, raw).to_double_vector() == std::vector<double>{1, 2, 3});

  onnx::TensorProto i16 = make_tensor("s", onnx::TensorProto::INT16, {2});
  i16.set_raw_data(std::string("\x01\x00\xff\xff", 4));  // 1, -1 little-endian
  REQUIRE(import_initializer(dir, i16).to_int64_vector() == std::vector<int64_t>{1, -1});

  raw.set_raw_data(float_bytes({1, 2}));
  REQUIRE_THROWS_WITH(import_initializer(dir, raw),
                      Contains("initializer 'r' has 8 bytes of raw_data but its type f32[3] "
                               "needs 12"));

  onnx::TensorProto typed = make_tensor("t", onnx::TensorProto::FLOAT, {2, 2});
  typed.add_float_data(1);
  REQUIRE_THROWS_WITH(import_initializer(dir, typed),
                      Contains("initializer 't' has 1 values in float_data but its shape "
                               "needs 4"));

  onnx::TensorProto negative = make_tensor("n", onnx::TensorProto::FLOAT, {-1});
  REQUIRE_THROWS_WITH(import_initializer(dir, negative),
                      Contains("initializer 'n': negative dimension"));
}

TEST_CASE("element types minic lacks are named", "[frontend][tensor]") {
  TempDir dir;
  onnx::TensorProto text = make_tensor("words", onnx::TensorProto::STRING, {1});
  text.add_string_data("hello");
  REQUIRE_THROWS_WITH(import_initializer(dir, text),
                      Contains("initializer 'words' has element type STRING, which minic does "
                               "not support"));
  REQUIRE_THROWS_WITH(
      import_initializer(dir, make_tensor("c", onnx::TensorProto::COMPLEX64, {1})),
      Contains("initializer 'c' has element type COMPLEX64"));
}

TEST_CASE("the storage-only element types import", "[frontend][tensor]") {
  TempDir dir;
  // Newer types arrive as plain integers with ONNX 1.12's schema; minic stores them.
  const std::vector<std::pair<int32_t, DType>> newer = {
      {17, DType::f8e4m3fn}, {18, DType::f8e4m3fnuz}, {19, DType::f8e5m2},
      {20, DType::f8e5m2fnuz}, {21, DType::u4}, {22, DType::i4}, {23, DType::f4e2m1},
      {24, DType::f8e8m0}, {25, DType::u2}, {26, DType::i2}};
  for (const auto& [type, dtype] : newer) {
    onnx::ModelProto model = identity_model();
    set_tensor_type(model.mutable_graph()->mutable_input(0)->mutable_type(), type, {"2"});
    set_tensor_type(model.mutable_graph()->mutable_output(0)->mutable_type(), type, {"2"});
    Graph g = import_onnx(save_model(dir, model));
    REQUIRE(g.find_value("x")->type == TensorType{dtype, {2}});
  }
}

TEST_CASE("external data is read from inside the model's directory only", "[frontend][tensor]") {
  TempDir dir;
  dir.write("weights.bin", "abcd" + float_bytes({3.5f, -1.0f}));
  Tensor tensor = import_initializer(dir, external_tensor("weights.bin", 4, 8));
  REQUIRE(tensor.to_double_vector() == std::vector<double>{3.5, -1.0});

  std::filesystem::create_directories(dir.path() / "sub");
  dir.write("sub/w.bin", float_bytes({7, 8}));
  REQUIRE(import_initializer(dir, external_tensor("sub/w.bin", 0, 8)).to_double_vector() ==
          std::vector<double>{7, 8});

  REQUIRE_THROWS_WITH(import_initializer(dir, external_tensor("../weights.bin", 0, 8)),
                      Contains("contains '..'"));
  REQUIRE_THROWS_WITH(import_initializer(dir, external_tensor("sub/../weights.bin", 0, 8)),
                      Contains("contains '..'"));
  REQUIRE_THROWS_WITH(import_initializer(dir, external_tensor(dir.file("weights.bin"), 0, 8)),
                      Contains("is an absolute path"));
  REQUIRE_THROWS_WITH(import_initializer(dir, external_tensor("missing.bin", 0, 8)),
                      Contains("does not exist"));
  REQUIRE_THROWS_WITH(import_initializer(dir, external_tensor("weights.bin", 8, 8)),
                      Contains("too short"));
  REQUIRE_THROWS_WITH(import_initializer(dir, external_tensor("weights.bin", 0, 4)),
                      Contains("length 4 does not match"));

  // A symlink inside the directory that points outside it.
  TempDir outside;
  std::string secret = outside.write("secret.bin", float_bytes({1, 2}));
  std::filesystem::create_symlink(secret, dir.path() / "link.bin");
  REQUIRE_THROWS_WITH(import_initializer(dir, external_tensor("link.bin", 0, 8)),
                      Contains("leaves the model's directory"));
  // A symlink to a directory outside.
  std::filesystem::create_directory_symlink(outside.path(), dir.path() / "out");
  REQUIRE_THROWS_WITH(import_initializer(dir, external_tensor("out/secret.bin", 0, 8)),
                      Contains("leaves the model's directory"));
}

TEST_CASE("initializers listed among inputs are constants", "[frontend][tensor]") {
  TempDir dir;
  onnx::ModelProto model = identity_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_input(graph, "w", onnx::TensorProto::FLOAT, {"2"});
  add_float_initializer(graph, "w", {2}, {4, 5});
  add_node(graph, "Identity", {"w"}, {"w_copy"}, "copy");
  add_output(graph, "w_copy", onnx::TensorProto::FLOAT, {"2"});
  Graph g = import_onnx(save_model(dir, model));
  REQUIRE(g.inputs().size() == 1);
  REQUIRE(g.inputs()[0]->name() == "x");
  REQUIRE(g.find_value("w")->is_constant());
  REQUIRE(g.outputs()[1]->type == TensorType{DType::f32, {2}});
}

TEST_CASE("Constant nodes become constant values", "[frontend][tensor]") {
  TempDir dir;
  auto constant_model = [](const std::function<void(onnx::AttributeProto*)>& set) {
    onnx::ModelProto model = make_model();
    onnx::GraphProto* graph = model.mutable_graph();
    onnx::NodeProto* node = add_node(graph, "Constant", {}, {"c"}, "const");
    set(node->add_attribute());
    add_node(graph, "Identity", {"c"}, {"y"}, "id");
    graph->add_output()->set_name("y");
    return model;
  };
  auto constant_of = [&](const onnx::ModelProto& model) {
    Graph g = import_onnx(save_model(dir, model));
    REQUIRE(g.num_nodes() == 1);  // the Constant is a value, not a node
    return *g.find_value("c")->constant;
  };

  Tensor floats = constant_of(constant_model([](onnx::AttributeProto* a) {
    a->set_name("value_floats");
    a->set_type(onnx::AttributeProto::FLOATS);
    a->add_floats(0.5f);
    a->add_floats(2.0f);
  }));
  REQUIRE(floats.type() == TensorType{DType::f32, {2}});
  REQUIRE(floats.to_double_vector() == std::vector<double>{0.5, 2.0});

  Tensor one_int = constant_of(constant_model([](onnx::AttributeProto* a) {
    a->set_name("value_int");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(-7);
  }));
  REQUIRE(one_int.type() == TensorType{DType::i64, {}});
  REQUIRE(one_int.as_int64(0) == -7);

  Tensor value = constant_of(constant_model([](onnx::AttributeProto* a) {
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    onnx::TensorProto* t = a->mutable_t();
    t->set_data_type(onnx::TensorProto::INT32);
    t->add_dims(2);
    t->add_int32_data(3);
    t->add_int32_data(4);
  }));
  REQUIRE(value.type() == TensorType{DType::i32, {2}});
  REQUIRE(value.to_int64_vector() == std::vector<int64_t>{3, 4});

  REQUIRE_THROWS_WITH(import_onnx(save_model(dir, constant_model([](onnx::AttributeProto* a) {
                        a->set_name("value_string");
                        a->set_type(onnx::AttributeProto::STRING);
                        a->set_s("text");
                      }))),
                      Contains("Constant node 'const'") && Contains("string"));
  REQUIRE_THROWS_WITH(import_onnx(save_model(dir, constant_model([](onnx::AttributeProto* a) {
                        a->set_name("sparse_value");
                        a->set_type(onnx::AttributeProto::SPARSE_TENSOR);
                      }))),
                      Contains("Constant node 'const'") && Contains("sparse"));
}

TEST_CASE("node attributes of every supported kind", "[frontend][tensor]") {
  TempDir dir;
  onnx::ModelProto model = identity_model();
  onnx::NodeProto* node = model.mutable_graph()->mutable_node(0);
  auto add = [&](const std::string& name, onnx::AttributeProto::AttributeType type) {
    onnx::AttributeProto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(type);
    return a;
  };
  add("i", onnx::AttributeProto::INT)->set_i(3);
  add("f", onnx::AttributeProto::FLOAT)->set_f(0.25f);
  add("s", onnx::AttributeProto::STRING)->set_s("same");
  onnx::AttributeProto* ints = add("ints", onnx::AttributeProto::INTS);
  ints->add_ints(1);
  ints->add_ints(-1);
  add("floats", onnx::AttributeProto::FLOATS)->add_floats(1.5f);
  add("strings", onnx::AttributeProto::STRINGS)->add_strings("a");
  add("empty", onnx::AttributeProto::INTS);
  onnx::TensorProto* t = add("t", onnx::AttributeProto::TENSOR)->mutable_t();
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_int64_data(9);
  // Before IR version 2 `type` could be unset; the field that holds a value tells.
  node->add_attribute()->set_name("untyped");
  node->mutable_attribute(node->attribute_size() - 1)->set_i(11);

  Graph g = import_onnx(save_model(dir, model));
  const Attributes& attributes = g.nodes()[0]->attributes;
  REQUIRE(std::get<int64_t>(attributes.at("i")) == 3);
  REQUIRE(std::get<float>(attributes.at("f")) == 0.25f);
  REQUIRE(std::get<std::string>(attributes.at("s")) == "same");
  REQUIRE(std::get<std::vector<int64_t>>(attributes.at("ints")) == std::vector<int64_t>{1, -1});
  REQUIRE(std::get<std::vector<float>>(attributes.at("floats")) == std::vector<float>{1.5f});
  REQUIRE(std::get<std::vector<std::string>>(attributes.at("strings")) ==
          std::vector<std::string>{"a"});
  REQUIRE(std::get<std::vector<int64_t>>(attributes.at("empty")).empty());
  REQUIRE(std::get<Tensor>(attributes.at("t")).as_int64(0) == 9);
  REQUIRE(std::get<int64_t>(attributes.at("untyped")) == 11);
}
