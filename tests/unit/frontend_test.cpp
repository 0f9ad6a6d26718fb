// Unit tests for the ONNX frontend: reading model files, building the graph, fixing input
// shapes, summaries, and the light models. Course module 2.
//
// Models are built with the protobuf API and saved under a temporary directory; each bad
// case checks that import fails with an Error whose message names the file and the reason.
#include "minic/frontend/onnx.h"
#include "minic/frontend/onnx_ops.h"
#include "minic/ops/op.h"
#include "minic/runtime/compare.h"
#include "minic/runtime/interpreter.h"

#include "onnx_test_util.h"

#include <catch2/catch.hpp>

#include <map>
#include <random>

using namespace minic;
using namespace minic::testing;
using Catch::Contains;
using Catch::StartsWith;

namespace {

std::string error_of(const std::string& path, const OnnxImportOptions& options = {}) {
  try {
    import_onnx(path, options);
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("a tiny model imports with the right types", "[frontend]") {
  TempDir dir;
  onnx::ModelProto model = make_model(13);
  onnx::GraphProto* graph = model.mutable_graph();
  add_input(graph, "x", onnx::TensorProto::FLOAT, {"2", "3"});
  // Listed out of order: the Dropout reads the Identity's output. Its mask output is
  // unnamed in the file.
  add_node(graph, "Dropout", {"h"}, {"y", ""}, "drop");
  add_node(graph, "Identity", {"x"}, {"h"}, "id");
  add_output(graph, "y", onnx::TensorProto::FLOAT, {"2", "3"});
  Graph g = import_onnx(save_model(dir, model));

  REQUIRE(g.name == "g");
  REQUIRE(g.opset == 13);
  REQUIRE(g.inputs().size() == 1);
  REQUIRE(g.inputs()[0]->name() == "x");
  REQUIRE(g.inputs()[0]->type == TensorType{DType::f32, {2, 3}});
  std::vector<Node*> nodes = g.nodes();
  REQUIRE(nodes.size() == 2);
  REQUIRE(nodes[0]->op == "Identity");
  REQUIRE(nodes[1]->op == "Dropout");
  REQUIRE(nodes[1]->input(0) == nodes[0]->output(0));
  REQUIRE(nodes[1]->outputs().size() == 2);
  REQUIRE(nodes[1]->output(1)->name() == "drop_output1");
  REQUIRE(nodes[1]->output(1)->type == TensorType{DType::boolean, {2, 3}});
  REQUIRE(g.outputs().size() == 1);
  REQUIRE(g.outputs()[0]->name() == "y");
  REQUIRE(g.outputs()[0]->type == TensorType{DType::f32, {2, 3}});
}

TEST_CASE("a graph without a name is called main; empty inputs are omitted", "[frontend]") {
  TempDir dir;
  onnx::ModelProto model = make_model(13);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->clear_name();
  add_input(graph, "x", onnx::TensorProto::FLOAT, {"4"});
  add_node(graph, "Dropout", {"x", "", ""}, {"y"}, "drop");
  add_output(graph, "y", onnx::TensorProto::FLOAT, {"4"});
  Graph g = import_onnx(save_model(dir, model));
  REQUIRE(g.name == "main");
  Node* drop = g.nodes()[0];
  REQUIRE(drop->inputs().size() == 3);
  REQUIRE(drop->input(1) == nullptr);
  REQUIRE(drop->input(2) == nullptr);
}

TEST_CASE("unreadable files are refused with the reason", "[frontend]") {
  TempDir dir;
  std::string missing = dir.file("missing.onnx");
  REQUIRE_THROWS_WITH(import_onnx(missing), StartsWith(missing) && Contains("no such file"));
  REQUIRE_THROWS_WITH(import_onnx(dir.path().string()), Contains("directory"));

  std::string empty = dir.write("empty.onnx", "");
  REQUIRE_THROWS_WITH(import_onnx(empty), StartsWith(empty) && Contains("empty"));

  std::string full = identity_model().SerializeAsString();
  std::string truncated = dir.write("truncated.onnx", full.substr(0, full.size() / 2));
  REQUIRE_THROWS_WITH(import_onnx(truncated),
                      StartsWith(truncated) && Contains("not an ONNX model") &&
                          Contains("truncated"));

  std::mt19937 random(7);
  std::string noise(512, '\0');
  for (char& c : noise) c = static_cast<char>(random());
  std::string random_bytes = dir.write("random.onnx", noise);
  REQUIRE_THROWS_WITH(import_onnx(random_bytes),
                      StartsWith(random_bytes) && Contains("not an ONNX model"));

  std::string lfs = dir.write("lfs.onnx",
                              "version https://git-lfs.github.com/spec/v1\n"
                              "oid sha256:4d7a214614ab2935c943f9e0ff69d22e"
                              "adbb8f32b1258daaa5e2ca24d17e2393\n"
                              "size 12345\n");
  REQUIRE_THROWS_WITH(import_onnx(lfs), StartsWith(lfs) && Contains("Git LFS pointer") &&
                                            Contains("fetch the real file"));
  // summarize_onnx reads files the same way.
  REQUIRE_THROWS_WITH(summarize_onnx(lfs), Contains("Git LFS pointer"));
}

TEST_CASE("IR versions and opsets newer than minic's are refused", "[frontend]") {
  TempDir dir;
  onnx::ModelProto model = identity_model();
  model.set_ir_version(kMaxIrVersion + 1);
  std::string path = save_model(dir, model, "ir.onnx");
  REQUIRE_THROWS_WITH(import_onnx(path),
                      StartsWith(path) &&
                          Contains(fmt::format("IR version {} is newer", kMaxIrVersion + 1)));

  model = identity_model();
  model.mutable_opset_import(0)->set_version(kMaxOpset + 1);
  path = save_model(dir, model, "opset.onnx");
  REQUIRE_THROWS_WITH(import_onnx(path),
                      StartsWith(path) &&
                          Contains(fmt::format("opset {} is newer", kMaxOpset + 1)));

  model = identity_model();
  model.mutable_opset_import(0)->set_domain("com.microsoft");
  path = save_model(dir, model, "no_default.onnx");
  REQUIRE_THROWS_WITH(import_onnx(path),
                      StartsWith(path) && Contains("ops are in com.microsoft 17 only"));

  model.clear_opset_import();
  path = save_model(dir, model, "no_opset.onnx");
  REQUIRE_THROWS_WITH(import_onnx(path), StartsWith(path) && Contains("no default-domain"));

  // "ai.onnx" is the default domain spelled out.
  model = identity_model();
  model.mutable_opset_import(0)->set_domain("ai.onnx");
  REQUIRE(import_onnx(save_model(dir, model, "ai_onnx.onnx")).opset == 17);
}

TEST_CASE("every unsupported op is listed in one error", "[frontend]") {
  TempDir dir;
  onnx::ModelProto model = identity_model();
  onnx::OperatorSetIdProto* custom = model.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(2);
  onnx::GraphProto* graph = model.mutable_graph();
  add_node(graph, "FrobnicateXYZ", {"x"}, {"f1"}, "frob_a");
  add_node(graph, "FrobnicateXYZ", {"f1"}, {"f2"});  // unnamed: listed by its output
  add_node(graph, "StringNormalizer", {"x"}, {"l"}, "normalize");
  add_node(graph, "Thing", {"x"}, {"t"}, "thing")->set_domain("com.example");
  std::string path = save_model(dir, model);
  std::string message = error_of(path);
  CHECK_THAT(message, StartsWith(path) && Contains("does not support 3 of the ops"));
  CHECK_THAT(message, Contains("FrobnicateXYZ (opset 17): nodes 'frob_a', 'f2'"));
  CHECK_THAT(message, Contains("StringNormalizer (opset 17): node 'normalize'"));
  CHECK_THAT(message, Contains("com.example.Thing (opset 2): node 'thing'"));
}

TEST_CASE("graph structure errors name the node or value", "[frontend]") {
  TempDir dir;
  SECTION("an input that nothing defines") {
    onnx::ModelProto model = identity_model();
    add_node(model.mutable_graph(), "Dropout", {"x", "w"}, {"z"}, "drop");
    std::string path = save_model(dir, model);
    REQUIRE_THROWS_WITH(import_onnx(path),
                        StartsWith(path) &&
                            Contains("Dropout node 'drop' uses %w, which is not defined"));
  }
  SECTION("a cycle") {
    onnx::ModelProto model = identity_model();
    onnx::GraphProto* graph = model.mutable_graph();
    add_node(graph, "Identity", {"b"}, {"a"}, "first");
    add_node(graph, "Identity", {"a"}, {"b"}, "second");
    REQUIRE_THROWS_WITH(import_onnx(save_model(dir, model)), Contains("cycle"));
  }
  SECTION("a value defined twice") {
    onnx::ModelProto model = identity_model();
    add_node(model.mutable_graph(), "Identity", {"x"}, {"y"}, "again");
    REQUIRE_THROWS_WITH(import_onnx(save_model(dir, model)),
                        Contains("Identity node 'again' defines %y, which is already defined"));
  }
  SECTION("an output nothing defines") {
    onnx::ModelProto model = identity_model();
    add_output(model.mutable_graph(), "nowhere", onnx::TensorProto::FLOAT, {"2", "3"});
    REQUIRE_THROWS_WITH(import_onnx(save_model(dir, model)),
                        Contains("graph output 'nowhere' is not defined"));
  }
  SECTION("a graph attribute") {
    onnx::ModelProto model = identity_model();
    onnx::AttributeProto* body = model.mutable_graph()->mutable_node(0)->add_attribute();
    body->set_name("body");
    body->set_type(onnx::AttributeProto::GRAPH);
    body->mutable_g()->set_name("inner");
    REQUIRE_THROWS_WITH(import_onnx(save_model(dir, model)),
                        Contains("Identity node 'id': attribute 'body' is a graph, which "
                                 "Identity does not take"));
  }
}

TEST_CASE("declared output types must agree with the inferred ones", "[frontend]") {
  TempDir dir;
  onnx::ModelProto model = identity_model();
  set_tensor_type(model.mutable_graph()->mutable_output(0)->mutable_type(),
                  onnx::TensorProto::INT64, {"2", "3"});
  REQUIRE_THROWS_WITH(import_onnx(save_model(dir, model)),
                      Contains("output 'y' is declared as i64[2,3] in the model, but minic "
                               "infers f32[2,3]"));

  set_tensor_type(model.mutable_graph()->mutable_output(0)->mutable_type(),
                  onnx::TensorProto::FLOAT, {"2", "4"});
  REQUIRE_THROWS_WITH(import_onnx(save_model(dir, model)),
                      Contains("output 'y' is declared as f32[2,4]"));

  // Symbolic output dimensions say nothing to contradict.
  set_tensor_type(model.mutable_graph()->mutable_output(0)->mutable_type(),
                  onnx::TensorProto::FLOAT, {"n", "3"});
  REQUIRE(import_onnx(save_model(dir, model)).outputs()[0]->type ==
          TensorType{DType::f32, {2, 3}});
}

TEST_CASE("shape inference errors start with the model path and name the node", "[frontend]") {
  TempDir dir;
  onnx::ModelProto model = make_model(13);
  onnx::GraphProto* graph = model.mutable_graph();
  add_input(graph, "x", onnx::TensorProto::FLOAT, {"4"});
  onnx::TensorProto* training = graph->add_initializer();
  training->set_name("training");
  training->set_data_type(onnx::TensorProto::BOOL);
  training->add_int32_data(1);
  add_float_initializer(graph, "ratio", {}, {0.5f});
  add_node(graph, "Dropout", {"x", "ratio", "training"}, {"y"}, "drop");
  add_output(graph, "y", onnx::TensorProto::FLOAT, {"4"});
  std::string path = save_model(dir, model);
  REQUIRE_THROWS_WITH(import_onnx(path), StartsWith(path + ": Dropout node 'drop': "));
}

TEST_CASE("input shapes: symbolic dimensions need sizes from the options", "[frontend]") {
  TempDir dir;
  onnx::ModelProto model = make_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_input(graph, "x", onnx::TensorProto::FLOAT, {"batch", "3", "?"});
  add_node(graph, "Identity", {"x"}, {"y"});
  add_output(graph, "y", onnx::TensorProto::FLOAT, {"batch", "3", "?"});
  std::string path = save_model(dir, model);

  REQUIRE(error_of(path) ==
          path + ": input 'x' has symbolic dimension 'batch' (shape [batch,3,?]); give its size "
                 "with --input-shape x=1x3x1");

  OnnxImportOptions options;
  options.input_shapes["x"] = {5, 3, 7};
  Graph g = import_onnx(path, options);
  REQUIRE(g.inputs()[0]->type == TensorType{DType::f32, {5, 3, 7}});
  REQUIRE(g.outputs()[0]->type == TensorType{DType::f32, {5, 3, 7}});

  options.input_shapes["x"] = {5, 4, 7};
  REQUIRE_THROWS_WITH(import_onnx(path, options),
                      Contains("--input-shape x=5x4x7 gives dimension 1 as 4, but the model's "
                               "input 'x' has 3 there"));
  options.input_shapes["x"] = {5, 3};
  REQUIRE_THROWS_WITH(import_onnx(path, options), Contains("has rank 2") && Contains("rank 3"));
  options.input_shapes = {{"z", {1}}};
  REQUIRE_THROWS_WITH(import_onnx(path, options),
                      Contains("--input-shape names 'z', which is not an input"));

  // A known value's shape fixes the dimensions too; its dtype must match.
  OnnxImportOptions known;
  known.known_inputs["x"] = Tensor(DType::f32, {2, 3, 1});
  REQUIRE(import_onnx(path, known).inputs()[0]->type == TensorType{DType::f32, {2, 3, 1}});
  known.known_inputs["x"] = Tensor(DType::i64, {2, 3, 1});
  REQUIRE_THROWS_WITH(import_onnx(path, known),
                      Contains("input 'x' is f32 in the model, but the value given for it is i64"));

  // A missing dimension is named as such.
  set_tensor_type(graph->mutable_input(0)->mutable_type(), onnx::TensorProto::FLOAT, {"?", "3"});
  REQUIRE_THROWS_WITH(import_onnx(save_model(dir, model)),
                      Contains("input 'x' has a dimension of unknown size (shape [?,3]); give its "
                               "size with --input-shape x=1x3"));
}

TEST_CASE("a dimension of -1 is dynamic: --input-shape binds it", "[frontend]") {
  // paddle2onnx writes [-1,3,?,?] for an image of any batch and size.
  TempDir dir;
  onnx::ModelProto model = identity_model();
  set_tensor_type(model.mutable_graph()->mutable_input(0)->mutable_type(),
                  onnx::TensorProto::FLOAT, {"-1", "3"});
  const std::string path = save_model(dir, model);
  REQUIRE_THROWS_WITH(import_onnx(path),
                      Contains("input 'x' has a dimension of unknown size (shape [?,3]); give its "
                               "size with --input-shape x=1x3"));
  OnnxImportOptions options;
  options.input_shapes["x"] = {2, 3};
  Graph graph = import_onnx(path, options);
  CHECK(graph.inputs().at(0)->type == TensorType{DType::f32, {2, 3}});
}

TEST_CASE("negative and absurd input shapes are refused", "[frontend]") {
  TempDir dir;
  onnx::ModelProto model = identity_model();
  set_tensor_type(model.mutable_graph()->mutable_input(0)->mutable_type(),
                  onnx::TensorProto::FLOAT, {"2", "-3"});
  REQUIRE_THROWS_WITH(import_onnx(save_model(dir, model)),
                      Contains("input 'x' has negative dimension -3"));

  set_tensor_type(model.mutable_graph()->mutable_input(0)->mutable_type(),
                  onnx::TensorProto::FLOAT, {"1048576", "1048576", "1048576"});
  REQUIRE_THROWS_WITH(import_onnx(save_model(dir, model)),
                      Contains("input 'x'") && Contains("absurdly large"));
}

TEST_CASE("a known input that decides a shape is frozen into a constant", "[frontend]") {
  // Dropout's shape rule needs the value of training_mode: given as known, the input
  // becomes a constant; the other input stays an input.
  TempDir dir;
  onnx::ModelProto model = make_model(13);
  onnx::GraphProto* graph = model.mutable_graph();
  add_input(graph, "x", onnx::TensorProto::FLOAT, {"4"});
  add_input(graph, "training", onnx::TensorProto::BOOL, {});
  add_node(graph, "Dropout", {"x", "", "training"}, {"y"}, "drop");
  add_output(graph, "y", onnx::TensorProto::FLOAT, {"4"});
  std::string path = save_model(dir, model);

  REQUIRE_THROWS_WITH(import_onnx(path), StartsWith(path + ": Dropout node 'drop': "));
  OnnxImportOptions options;
  options.known_inputs["training"] = Tensor::scalar<bool>(false);
  Graph g = import_onnx(path, options);
  REQUIRE(g.inputs().size() == 1);
  REQUIRE(g.inputs()[0]->name() == "x");
  const Value* training = g.find_value("training");
  REQUIRE(training->is_constant());
  REQUIRE(training->constant->as_int64(0) == 0);
}

TEST_CASE("summarize_onnx describes models minic cannot import", "[frontend]") {
  TempDir dir;
  onnx::ModelProto model = make_model(15, 9);
  model.set_producer_version("1.2");
  onnx::GraphProto* graph = model.mutable_graph();
  add_input(graph, "x", onnx::TensorProto::FLOAT16, {"batch", "3", "?"});
  add_input(graph, "w", onnx::TensorProto::FLOAT, {"3"});  // an initializer: not listed
  add_float_initializer(graph, "w", {3}, {1, 2, 3});
  add_node(graph, "Identity", {"x"}, {"a"});
  add_node(graph, "Identity", {"a"}, {"b"});
  add_node(graph, "NoSuchOp", {"b"}, {"y"}, "mystery");
  add_output(graph, "y", onnx::TensorProto::COMPLEX64, {"batch"});
  OnnxModelSummary summary = summarize_onnx(save_model(dir, model));

  REQUIRE(summary.ir_version == 9);
  REQUIRE(summary.opset == 15);
  REQUIRE(summary.producer == "minic-test 1.2");
  REQUIRE(summary.inputs.size() == 1);
  REQUIRE(summary.inputs[0].name == "x");
  REQUIRE(summary.inputs[0].dtype == "f16");
  REQUIRE(summary.inputs[0].dims == std::vector<std::string>{"batch", "3", "?"});
  REQUIRE(summary.outputs[0].dtype == "COMPLEX64");
  REQUIRE(summary.op_counts == std::map<std::string, int>{{"Identity", 2}, {"NoSuchOp", 1}});
  REQUIRE(summary.unsupported.size() == 1);
  REQUIRE(summary.unsupported[0].op == "NoSuchOp");
  REQUIRE(summary.unsupported[0].opset == 15);
  REQUIRE(summary.unsupported[0].nodes == std::vector<std::string>{"mystery"});
}

TEST_CASE("the light models import with their declared types", "[frontend][models]") {
  const std::string dir = MINIC_ONNX_LIGHT_DIR;
  const std::vector<std::pair<std::string, std::string>> models = {
      {"light_bvlc_alexnet", "data_0"},      {"light_densenet121", "data_0"},
      {"light_inception_v1", "data_0"},      {"light_inception_v2", "data_0"},
      {"light_resnet50", "gpu_0/data_0"},    {"light_shufflenet", "gpu_0/data_0"},
      {"light_squeezenet", "data_0"},        {"light_vgg19", "data_0"},
      {"light_zfnet512", "gpu_0/data_0"},
  };
  // squeezenet and densenet end in [1,1000,1,1], the others in [1,1000].
  for (const auto& [name, input] : models) {
    INFO(name);
    std::string path = dir + "/" + name + ".onnx";
    OnnxModelSummary summary = summarize_onnx(path);
    REQUIRE(summary.opset == 9);
    REQUIRE(summary.inputs.size() == 1);
    REQUIRE(summary.inputs[0].name == input);
    REQUIRE(summary.inputs[0].dims == std::vector<std::string>{"1", "3", "224", "224"});
    if (!summary.unsupported.empty()) {
      // Until every op these models use is written, the import must list the missing ops.
      REQUIRE_THROWS_WITH(import_onnx(path), Contains(summary.unsupported[0].op));
      WARN(name << ": not imported yet; unsupported: " << summary.unsupported[0].op << " ...");
      continue;
    }
    Graph g = import_onnx(path);
    REQUIRE(g.inputs().size() == 1);
    REQUIRE(g.inputs()[0]->type == TensorType{DType::f32, {1, 3, 224, 224}});
    REQUIRE(g.outputs().size() == 1);
    bool four_d = name == "light_squeezenet" || name == "light_densenet121";
    Shape expected = four_d ? Shape{1, 1000, 1, 1} : Shape{1, 1000};
    REQUIRE(g.outputs()[0]->type == TensorType{DType::f32, expected});
  }
}

TEST_CASE("onnx_op_statuses lists each op once, with minic's compute rule and opsets",
          "[frontend]") {
  std::vector<OnnxOpStatus> statuses = onnx_op_statuses();
  std::map<std::string, const OnnxOpStatus*> by_op;
  for (const OnnxOpStatus& status : statuses) {
    INFO(status.op);
    CHECK(by_op.emplace(status.op, &status).second);  // listed once
    const OpSchema* ours = op_registry().find(status.op);
    const bool imported = status.op == "Constant";
    CHECK(imported == (status.support == OpSupport::imported));
    CHECK((ours == nullptr) == (status.support == OpSupport::missing || imported));
    if (ours) {
      CHECK((status.support == OpSupport::compiled) == static_cast<bool>(ours->compute));
      CHECK(status.min_opset == ours->min_opset);
      CHECK(status.max_opset == ours->max_opset);
    }
  }
  for (const std::string& op : op_registry().names()) {
    INFO(op);
    CHECK(by_op.count(op) == 1);  // every op of minic's, known to libonnx or not
  }
  // The libonnx part: ONNX's own schemas, among them the ops every CNN has.
  for (const char* op : {"Conv", "Relu", "MatMul", "LSTM", "If"}) {
    INFO(op);
    REQUIRE(by_op.count(op) == 1);
    CHECK(by_op[op]->onnx_version > 0);
  }
}

TEST_CASE("a model of opset 6 is converted by ONNX's version converter first", "[frontend]") {
  // y = x + w, w broadcast over the rows with opset 6's `broadcast` attribute.
  TempDir dir;
  onnx::ModelProto model = make_model(6, 3);
  onnx::GraphProto* graph = model.mutable_graph();
  add_input(graph, "x", onnx::TensorProto::FLOAT, {"2", "3"});
  add_input(graph, "w", onnx::TensorProto::FLOAT, {"3"});  // IR 3: initializers are inputs
  add_float_initializer(graph, "w", {3}, {1.0f, -2.0f, 0.5f});
  onnx::NodeProto* add = add_node(graph, "Add", {"x", "w"}, {"y"}, "add0");
  onnx::AttributeProto* broadcast = add->add_attribute();
  broadcast->set_name("broadcast");
  broadcast->set_type(onnx::AttributeProto::INT);
  broadcast->set_i(1);
  add_output(graph, "y", onnx::TensorProto::FLOAT, {"2", "3"});
  const std::string path = save_model(dir, model);

  Graph imported = import_onnx(path);
  CHECK(imported.opset == 7);
  const std::vector<float> x = {0, 1, 2, 3, 4, 5};
  const std::vector<float> w = {1.0f, -2.0f, 0.5f};
  std::vector<float> expected;
  for (size_t i = 0; i < x.size(); ++i) expected.push_back(x[i] + w[i % 3]);
  std::vector<Tensor> y = interpret(imported, {Tensor::from_vector<float>({2, 3}, x)});
  CHECK(compare_tensors(y.at(0), Tensor::from_vector<float>({2, 3}, expected), {0, 0}).ok());

  // Without w among the inputs (invalid at IR 3) the converter refuses, and the error says so.
  graph->mutable_input()->RemoveLast();
  REQUIRE_THROWS_WITH(import_onnx(save_model(dir, model)),
                      Contains("the model's opset 6 is older than minic reads for some of its "
                               "ops, and ONNX's version converter cannot bring it to opset 7"));
}

TEST_CASE("a node of an old opset that its schema refuses is an error before conversion",
          "[frontend]") {
  // ONNX's converter reads the second input of an opset-6 Mul unchecked; one input, or an
  // attribute the op does not have, is named before the converter runs.
  TempDir dir;
  onnx::ModelProto model = make_model(6, 3);
  onnx::GraphProto* graph = model.mutable_graph();
  add_input(graph, "x", onnx::TensorProto::FLOAT, {"2", "3"});
  onnx::NodeProto* mul = add_node(graph, "Mul", {"x"}, {"y"}, "mul0");
  add_output(graph, "y", onnx::TensorProto::FLOAT, {"2", "3"});
  REQUIRE_THROWS_WITH(import_onnx(save_model(dir, model)),
                      Contains("Mul node 'mul0' is not a valid Mul of opset 6") &&
                          Contains("input size 1"));
  mul->add_input("x");
  onnx::AttributeProto* attribute = mul->add_attribute();
  attribute->set_name("broadcst");
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(1);
  REQUIRE_THROWS_WITH(import_onnx(save_model(dir, model)),
                      Contains("Mul node 'mul0' is not a valid Mul of opset 6") &&
                          Contains("broadcst"));
  mul->mutable_attribute(0)->set_name("broadcast");
  CHECK(import_onnx(save_model(dir, model)).opset == 7);
}
