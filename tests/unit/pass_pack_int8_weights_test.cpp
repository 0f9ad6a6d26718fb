// The pack-int8-weights pass (src/passes/graph/pack_int8_weights.cpp) and the ops it makes,
// minic.MatMulIntegerWords and minic.ConvIntegerWords (include/minic/ops/int8_words.h):
// words packed and unpacked, random int8 matrix products and convolutions through the
// interpreter before and after the pass (the int32 sums must be equal), and compiled after
// it against the interpreter before. Course module 7.
#include "driver_test_util.h"
#include "pass_test_util.h"

#include "minic/ops/int8_words.h"
#include "minic/passes/graph/pack_int8_weights.h"

#include <random>

namespace minic {
namespace {

using testing::count_op;
using testing::graph_from_text;

// A tensor of `type` (int8 or uint8) of uniformly random bytes.
Tensor random_bytes(const TensorType& type, std::mt19937& random) {
  Tensor tensor(type);
  std::uniform_int_distribution<int> byte(0, 255);
  for (std::byte& b : tensor.bytes()) b = static_cast<std::byte>(byte(random));
  return tensor;
}

// "dense<[...]>" of a tensor's elements.
std::string dense(const Tensor& tensor) {
  return fmt::format("dense<[{}]>", fmt::join(tensor.to_int64_vector(), ", "));
}

// The exact equality of two int32 results.
void check_equal(const Tensor& actual, const Tensor& expected) {
  REQUIRE(actual.type() == expected.type());
  CHECK(actual.to_int64_vector() == expected.to_int64_vector());
}

// The graph of `text` (one `op` on constant weights) through the interpreter before and
// after the pass, which must make `packed` of it, and compiled with the default pipeline,
// which packs the weights the same way: the same int32 results each time.
void check_packing(const std::string& text, const std::vector<Tensor>& inputs,
                   const std::string& op, const std::string& packed) {
  INFO(text);
  Graph graph = graph_from_text(text);
  std::vector<Tensor> before = interpret(graph, inputs);
  pack_int8_weights(graph, codegen::host_target());
  verify_graph(graph);
  CHECK(count_op(graph, op) == 0);
  CHECK(count_op(graph, packed) == 1);
  check_equal(interpret(graph, inputs)[0], before[0]);
  std::unique_ptr<CompiledModel> model = compile_model(graph_from_text(text), {});
  CHECK(model->stats().compiled_kernels == model->stats().kernels);
  check_equal(model->run(inputs)[0], before[0]);
}

}  // namespace

TEST_CASE("pack_words puts four elements in a word, the first lowest, and unpacks them",
          "[ops][int8-words]") {
  Tensor q = Tensor::from_vector<int8_t>({5, 2}, {1, -1, 2, 0, 3, 0, 4, 0, 5, 127});
  Tensor words = pack_words(q, 0);
  REQUIRE(words.type() == TensorType{DType::i32, {2, 2}});
  // Column 0: bytes 1, 2, 3, 4 and 5, 0, 0, 0; column 1: 0xff, 0, 0, 0 and 127, 0, 0, 0.
  CHECK(words.to_int64_vector() == std::vector<int64_t>{0x04030201, 0xff, 5, 127});
  CHECK(unpack_words(words, 0, 5, DType::i8).to_int64_vector() == q.to_int64_vector());
  CHECK(column_sums(q).to_int64_vector() == std::vector<int64_t>{15, 126});

  std::mt19937 random(3);
  for (int64_t axis = 0; axis < 3; ++axis) {
    for (int64_t length : {1, 4, 7, 9}) {
      Shape shape = {3, 2, 5};
      shape[axis] = length;
      for (DType type : {DType::i8, DType::u8}) {
        Tensor tensor = random_bytes({type, shape}, random);
        Tensor packed = pack_words(tensor, axis);
        CHECK(packed.shape()[axis] == (length + 3) / 4);
        CHECK(unpack_words(packed, axis, length, type).to_int64_vector() ==
              tensor.to_int64_vector());
      }
    }
  }
}

TEST_CASE("pack-int8-weights keeps the int32 sums of random int8 matrix products, "
          "interpreted and compiled",
          "[passes][pack-int8-weights]") {
  std::mt19937 random(29);
  struct Case {
    Shape a;
    int64_t n;
    std::string a_type;  // u8 or i8
    std::string zero;    // A's zero point: "", "scalar" or "row"
  };
  const Case cases[] = {
      {{4, 8}, 16, "u8", "scalar"}, {{5, 7}, 3, "u8", ""},       {{3, 64}, 40, "i8", "scalar"},
      {{2, 6, 9}, 17, "u8", "row"}, {{1, 1}, 5, "i8", ""},       {{16, 67}, 33, "u8", "row"},
      {{2, 3, 20}, 48, "i8", "row"},
  };
  for (const Case& c : cases) {
    const int64_t k = c.a.back();
    const int64_t m = c.a[c.a.size() - 2];
    Shape out = c.a;
    out.back() = c.n;
    const DType a_type = c.a_type == "u8" ? DType::u8 : DType::i8;
    std::string text = fmt::format("graph g(%a: {}[{}]) -> (%y: i32[{}]) opset 21 {{\n",
                                   c.a_type, fmt::join(c.a, ","), fmt::join(out, ","));
    text += fmt::format("  %b = const i8[{},{}] {}\n", k, c.n,
                        dense(random_bytes({DType::i8, {k, c.n}}, random)));
    std::string za;
    if (!c.zero.empty()) {
      Shape zero_shape = c.zero == "row" ? Shape{m} : Shape{};
      text += fmt::format("  %za = const {}[{}] {}\n", c.a_type, fmt::join(zero_shape, ","),
                          dense(random_bytes({a_type, zero_shape}, random)));
      za = ", %za";
    }
    text += fmt::format("  %y = MatMulInteger(%a, %b{})\n  return %y\n}}\n", za);
    check_packing(text, {random_bytes({a_type, c.a}, random)}, "MatMulInteger",
                  kMatMulIntegerWordsOp);
  }
}

TEST_CASE("pack-int8-weights keeps the int32 sums of random int8 convolutions, "
          "interpreted and compiled",
          "[passes][pack-int8-weights]") {
  std::mt19937 random(31);
  struct Case {
    int64_t channels, outputs, kernel, size;  // size: the input's height and width
    int64_t pad, stride, dilation;
    std::string x_type;  // u8 or i8
    bool zero;           // x_zero_point given
  };
  const Case cases[] = {
      {6, 8, 3, 7, 1, 1, 1, "u8", true},   {3, 16, 7, 12, 3, 2, 1, "u8", true},
      {16, 5, 1, 5, 0, 1, 1, "i8", false}, {9, 32, 3, 9, 0, 1, 2, "i8", true},
      {4, 16, 3, 16, 1, 1, 1, "u8", false},
  };
  for (const Case& c : cases) {
    const DType x_type = c.x_type == "u8" ? DType::u8 : DType::i8;
    const Shape x_shape = {1, c.channels, c.size, c.size};
    const Shape w_shape = {c.outputs, c.channels, c.kernel, c.kernel};
    const int64_t size =
        (c.size + 2 * c.pad - c.dilation * (c.kernel - 1) - 1) / c.stride + 1;
    const Shape y_shape = {1, c.outputs, size, size};
    std::string text = fmt::format("graph g(%x: {}[{}]) -> (%y: i32[{}]) opset 21 {{\n",
                                   c.x_type, fmt::join(x_shape, ","), fmt::join(y_shape, ","));
    text += fmt::format("  %w = const i8[{}] {}\n", fmt::join(w_shape, ","),
                        dense(random_bytes({DType::i8, w_shape}, random)));
    std::string zx;
    if (c.zero) {
      text += fmt::format("  %zx = const {}[] {}\n", c.x_type,
                          dense(random_bytes({x_type, {}}, random)));
      zx = ", %zx";
    }
    text += fmt::format(
        "  %y = ConvInteger(%x, %w{0}) {{pads=[{3}, {3}, {3}, {3}], strides=[{1}, {1}], "
        "dilations=[{2}, {2}]}}\n  return %y\n}}\n",
        zx, c.stride, c.dilation, c.pad);
    check_packing(text, {random_bytes({x_type, x_shape}, random)}, "ConvInteger",
                  kConvIntegerWordsOp);
  }
}

TEST_CASE("minic.MatMulIntegerWords and ConvIntegerWords refuse words and sums that do not "
          "fit their activations or each other",
          "[ops][int8-words]") {
  // B_words needs ceil(5 / 4) = 2 rows for K = 5.
  CHECK_THROWS_WITH(graph_from_text(R"(
graph g(%a: u8[2,5], %w: i32[1,3], %s: i32[3]) -> (%y: i32[2,3]) opset 21 {
  %y = minic.MatMulIntegerWords(%a, %w, %s)
  return %y
})"),
                    Catch::Contains("B_words is i32[1,3]; for A u8[2,5] it must be int32 [2, N]"));
  CHECK_THROWS_WITH(graph_from_text(R"(
graph g(%a: u8[2,5], %w: i32[2,3], %s: i32[4]) -> (%y: i32[2,3]) opset 21 {
  %y = minic.MatMulIntegerWords(%a, %w, %s)
  return %y
})"),
                    Catch::Contains("B_column_sums is i32[4]; it must be int32 [3]"));
  // W_words needs ceil(6 / 4) = 2 input channel words for X's 6 channels.
  CHECK_THROWS_WITH(graph_from_text(R"(
graph g(%x: u8[1,6,5,5], %w: i32[4,1,3,3], %s: i32[4]) -> (%y: i32[1,4,3,3]) opset 21 {
  %y = minic.ConvIntegerWords(%x, %w, %s)
  return %y
})"),
                    Catch::Contains("W_words is i32[4,1,3,3]; for X u8[1,6,5,5] it must be "
                                    "int32 [M, 2, KH, KW]"));
  // Column sums that are not B's: the reference kernel says so.
  Graph graph = graph_from_text(R"(
graph g(%a: u8[1,4]) -> (%y: i32[1,1]) opset 21 {
  %w = const i32[1,1] dense<[16909060]>
  %s = const i32[1] dense<[0]>
  %y = minic.MatMulIntegerWords(%a, %w, %s)
  return %y
})");
  CHECK_THROWS_WITH(interpret(graph, {Tensor::from_vector<uint8_t>({1, 4}, {1, 1, 1, 1})}),
                    Catch::Contains("B_column_sums are not the column sums"));
  Graph conv = graph_from_text(R"(
graph g(%x: u8[1,4,1,1]) -> (%y: i32[1,1,1,1]) opset 21 {
  %w = const i32[1,1,1,1] dense<[16909060]>
  %s = const i32[1] dense<[0]>
  %y = minic.ConvIntegerWords(%x, %w, %s)
  return %y
})");
  CHECK_THROWS_WITH(interpret(conv, {Tensor::from_vector<uint8_t>({1, 4, 1, 1}, {1, 1, 1, 1})}),
                    Catch::Contains("W_sums are not the sums"));
}

}  // namespace minic
