// Custom operators (include/minic/ops/custom_op.h): an op of another domain registered from
// C++ is imported, interpreted, fused, lowered and compiled like a built-in one, and writes
// back to ONNX with its domain; bad registrations and unregistered domains are errors that
// name the op. Course module 8.
#include "minic/ops/compute.h"
#include "minic/ops/custom_op.h"

#include "minic/frontend/onnx.h"
#include "minic/ir/graph/text.h"
#include "minic/ops/shape_inference.h"
#include "minic/runtime/interpreter.h"

#include "custom_op_test_util.h"
#include "driver_test_util.h"
#include "onnx_test_util.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace minic;

namespace {

// com.test.Softsign: y = x / (1 + |x|), elementwise on f32.
OpSchema softsign_schema() { return testing::softsign_schema("com.test.Softsign"); }

// Registers com.test.Softsign once for the whole test program.
void register_softsign() {
  static const bool registered = [] {
    register_custom_op(softsign_schema());
    return true;
  }();
  (void)registered;
}

Graph typed(const std::string& text) {
  Graph graph = parse_graph(text, "<custom op test>");
  infer_shapes(graph);
  return graph;
}

const char* const kMatMulSoftsign = R"(graph g(%a: f32[32,48], %b: f32[48,64]) -> (%y: f32[32,64]) opset 17 {
  %m = MatMul(%a, %b)
  %y = com.test.Softsign(%m)
  return %y
})";

}  // namespace

TEST_CASE("a custom op runs on the interpreter and compiled, fused into a GEMM epilogue",
          "[custom_op]") {
  register_softsign();
  CHECK(is_custom_op("com.test.Softsign"));
  const std::string kernels = testing::check_against_interpreter(kMatMulSoftsign);
  // One kernel: the MatMul with the Softsign as its epilogue, the formula in loop IR.
  std::unique_ptr<CompiledModel> model = compile_model(typed(kMatMulSoftsign));
  CHECK(model->stats().kernels == 1);
  CHECK(model->stats().compiled_kernels == 1);
  CHECK_THAT(kernels, Catch::Contains("fabs("));
}

TEST_CASE("the importer accepts a registered domain, and names an unregistered op",
          "[custom_op]") {
  register_softsign();
  testing::TempDir dir;
  auto model_with = [&](const std::string& domain, const std::string& op) {
    onnx::ModelProto model = testing::make_model(17);
    onnx::OperatorSetIdProto* import = model.add_opset_import();
    import->set_domain(domain);
    import->set_version(3);
    onnx::GraphProto* graph = model.mutable_graph();
    testing::add_input(graph, "x", onnx::TensorProto::FLOAT, {"2", "5"});
    testing::add_output(graph, "y", onnx::TensorProto::FLOAT, {"2", "5"});
    testing::add_node(graph, op, {"x"}, {"y"}, "soft")->set_domain(domain);
    return dir.write(domain + op + ".onnx", model.SerializeAsString());
  };
  Graph graph = import_onnx(model_with("com.test", "Softsign"));
  REQUIRE(graph.nodes().size() == 1);
  CHECK(graph.nodes()[0]->op == "com.test.Softsign");
  Tensor x = Tensor::from_vector<float>({2, 5}, {-4, -1, 0, 1, 4, 0.5f, -0.5f, 2, -2, 9});
  Tensor y = interpret(graph, {x})[0];
  CHECK(y.values<float>()[0] == Approx(-0.8));
  CHECK(y.values<float>()[9] == Approx(0.9));

  // Written back, the node keeps its domain and the model imports it.
  const std::string written = dir.file("written.onnx");
  export_onnx(graph, written);
  Graph again = import_onnx(written);
  CHECK(again.nodes()[0]->op == "com.test.Softsign");

  CHECK_THROWS_WITH(import_onnx(model_with("com.nobody", "Softsign")),
                    Catch::Contains("com.nobody.Softsign"));
}

TEST_CASE("a custom op that cannot be registered is an error naming it", "[custom_op]") {
  register_softsign();
  auto renamed = [](const std::string& name) {
    OpSchema schema = softsign_schema();
    schema.name = name;
    return schema;
  };
  CHECK_THROWS_WITH(register_custom_op(renamed("Softsign")),
                    Catch::Contains("must be DOMAIN.NAME"));
  CHECK_THROWS_WITH(register_custom_op(renamed("minic.Softsign")),
                    Catch::Contains("minic's own"));
  CHECK_THROWS_WITH(register_custom_op(renamed("ai.onnx.Relu")),
                    Catch::Contains("ONNX's default"));
  CHECK_THROWS_WITH(register_custom_op(renamed("com.test.Softsign")),
                    Catch::Contains("registered already"));
  OpSchema no_rule = renamed("com.test.NoRule");
  no_rule.compute = {};
  CHECK_THROWS_WITH(register_custom_op(no_rule), Catch::Contains("needs a compute rule"));
  OpSchema no_kernel = renamed("com.test.NoKernel");
  no_kernel.kernel = {};
  CHECK_THROWS_WITH(register_custom_op(no_kernel), Catch::Contains("reference kernel"));
  CHECK_THROWS_WITH(load_custom_op_library("/nowhere/libops.so"),
                    Catch::Contains("/nowhere/libops.so"));
}
