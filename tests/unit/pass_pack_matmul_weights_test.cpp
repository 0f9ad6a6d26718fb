// The pack-matmul-weights pass (src/passes/graph/pack_matmul_weights.cpp) and the op it
// makes, minic.MatMulPanels (include/minic/ops/matmul_panels.h): panels packed and
// unpacked, random matrix products through the interpreter before and after the pass (the
// same products in the same order: equal results), and compiled with the default pipeline,
// which packs them, against the interpreter before. Course module 4.
#include "driver_test_util.h"
#include "pass_test_util.h"

#include "minic/codegen/llvm.h"
#include "minic/ops/matmul_panels.h"
#include "minic/passes/graph/pack_matmul_weights.h"

#include <random>

namespace minic {
namespace {

using testing::count_op;
using testing::graph_from_text;
using testing::random_constant;

// The text of a graph of one MatMul, or of a Gemm with a bias of shape `bias`, on random
// constant weights B [k, n].
std::string product_text(const Shape& a, int64_t n, const std::string& op, const Shape& bias,
                         std::mt19937& random) {
  const int64_t k = a.back();
  Shape y = a;
  y.back() = n;
  std::string text = fmt::format("graph g(%a: f32[{}]) -> (%y: f32[{}]) opset 21 {{\n",
                                 fmt::join(a, ","), fmt::join(y, ","));
  text += random_constant("b", {k, n}, random);
  if (op == "MatMul") {
    text += "  %y = MatMul(%a, %b)\n";
  } else {
    text += random_constant("c", bias, random);
    text += "  %y = Gemm(%a, %b, %c)\n";
  }
  return text + "  return %y\n}\n";
}

}  // namespace

TEST_CASE("pack_panels stores B's columns in panels, zero past the last, and unpacks them",
          "[ops][matmul-panels]") {
  // B [2, 3] in panels of 2: columns 0-1 of both rows, then column 2 and a zero.
  Tensor b = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor panels = pack_panels(b, 2);
  REQUIRE(panels.type() == TensorType{DType::f32, {2, 2, 2}});
  CHECK(panels.to_double_vector() == std::vector<double>{1, 2, 4, 5, 3, 0, 6, 0});
  CHECK(unpack_panels(panels, 3).to_double_vector() == b.to_double_vector());

  std::mt19937 random(7);
  for (int64_t n : {1, 5, 16, 17, 40}) {
    for (int64_t width : {1, 4, 16, 32}) {
      Tensor matrix(TensorType{DType::i64, {3, n}});
      for (int64_t& x : matrix.values<int64_t>()) x = static_cast<int64_t>(random());
      Tensor packed = pack_panels(matrix, width);
      CHECK(packed.shape() == Shape{(n + width - 1) / width, 3, width});
      CHECK(unpack_panels(packed, n).to_int64_vector() == matrix.to_int64_vector());
    }
  }
}

TEST_CASE("pack-matmul-weights keeps the results of random matrix products, interpreted "
          "and compiled",
          "[passes][pack-matmul-weights]") {
  std::mt19937 random(41);
  struct Case {
    Shape a;
    int64_t n;
    std::string op;
    Shape bias;  // a Gemm's C
  };
  // Columns of whole tiles, of a shorter last tile, of less than one vector; a batch of A.
  const Case cases[] = {
      {{8, 16}, 64, "MatMul", {}},     {{6, 5}, 70, "MatMul", {}},
      {{2, 7, 9}, 200, "MatMul", {}},  {{4, 6}, 10, "MatMul", {}},
      {{9, 12}, 33, "Gemm", {33}},     {{5, 8}, 48, "Gemm", {5, 1}},
      {{16, 3}, 128, "Gemm", {1, 128}},
  };
  for (const Case& c : cases) {
    const std::string text = product_text(c.a, c.n, c.op, c.bias, random);
    INFO(text);
    Graph graph = graph_from_text(text);
    std::vector<Tensor> inputs = testing::random_inputs(graph, 3);
    std::vector<Tensor> before = interpret(graph, inputs);
    pack_matmul_weights(graph, codegen::host_target());
    verify_graph(graph);
    CHECK(count_op(graph, c.op) == 0);
    CHECK(count_op(graph, kMatMulPanelsOp) == 1);
    CHECK(interpret(graph, inputs)[0].to_double_vector() == before[0].to_double_vector());
    testing::check_against_interpreter(text);
  }
}

TEST_CASE("minic.MatMulPanels refuses panels that do not fit A or its columns",
          "[ops][matmul-panels]") {
  // A graph of one minic.MatMulPanels of the given types.
  auto product = [](const std::string& a, const std::string& panels, const std::string& y,
                    int64_t columns) {
    return graph_from_text(fmt::format(R"(
graph g(%a: {}, %p: {}) -> (%y: {}) opset 21 {{
  %y = minic.MatMulPanels(%a, %p) {{columns={}}}
  return %y
}})", a, panels, y, columns));
  };
  // K = 5 rows in each panel for A's 5 columns.
  CHECK_THROWS_WITH(product("f32[2,5]", "f32[2,4,8]", "f32[2,10]", 10),
                    Catch::Contains("B_panels is f32[2,4,8]; for A f32[2,5] it must be "
                                    "[panels, 5, width]"));
  // Two panels of 8 hold 9 to 16 columns.
  CHECK_THROWS_WITH(product("f32[2,5]", "f32[2,5,8]", "f32[2,8]", 8),
                    Catch::Contains("columns = 8 does not fit B_panels f32[2,5,8]: 2 panels "
                                    "of 8 hold 9 to 16 columns"));
  CHECK_THROWS_WITH(product("f32[2,5]", "f64[2,5,8]", "f32[2,10]", 10),
                    Catch::Contains("B_panels is f64[2,5,8] but A is f32[2,5]"));
  CHECK_THROWS_WITH(product("f32[5]", "f32[2,5,8]", "f32[10]", 10),
                    Catch::Contains("A is f32[5]; it must have rows and columns"));
}

}  // namespace minic
