// Unit tests for the graph text form: printing, parsing, and their round trip on
// hand-built graphs; hand-written text; parse errors with their line and column.
// Course module 2.
#include "minic/ir/graph/text.h"
#include "minic/ir/graph/verifier.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

using namespace minic;

namespace {

// Bitwise equality of attribute values (so that NaN equals the same NaN).
bool same_attribute(const AttributeValue& a, const AttributeValue& b) {
  if (a.index() != b.index()) return false;
  if (auto* x = std::get_if<float>(&a)) {
    return std::bit_cast<uint32_t>(*x) == std::bit_cast<uint32_t>(std::get<float>(b));
  }
  if (auto* x = std::get_if<std::vector<float>>(&a)) {
    const auto& y = std::get<std::vector<float>>(b);
    return std::equal(x->begin(), x->end(), y.begin(), y.end(), [](float p, float q) {
      return std::bit_cast<uint32_t>(p) == std::bit_cast<uint32_t>(q);
    });
  }
  if (auto* x = std::get_if<Tensor>(&a)) return x->identical(std::get<Tensor>(b));
  if (auto* x = std::get_if<int64_t>(&a)) return *x == std::get<int64_t>(b);
  if (auto* x = std::get_if<std::string>(&a)) return *x == std::get<std::string>(b);
  if (auto* x = std::get_if<std::vector<int64_t>>(&a)) {
    return *x == std::get<std::vector<int64_t>>(b);
  }
  return std::get<std::vector<std::string>>(a) == std::get<std::vector<std::string>>(b);
}

std::string name_of(const Value* value) { return value ? value->name() : "_"; }

// Everything the text form carries, compared field by field, constants bit for bit.
void require_same_graph(const Graph& a, const Graph& b) {
  REQUIRE(a.name == b.name);
  REQUIRE(a.opset == b.opset);
  REQUIRE(a.inputs().size() == b.inputs().size());
  for (size_t i = 0; i < a.inputs().size(); ++i) {
    REQUIRE(a.inputs()[i]->name() == b.inputs()[i]->name());
    REQUIRE(a.inputs()[i]->type == b.inputs()[i]->type);
  }
  REQUIRE(a.outputs().size() == b.outputs().size());
  for (size_t i = 0; i < a.outputs().size(); ++i) {
    REQUIRE(a.outputs()[i]->name() == b.outputs()[i]->name());
  }
  for (const Value* value : a.values()) {
    if (!value->is_constant()) continue;
    const Value* other = b.find_value(value->name());
    REQUIRE(other);
    REQUIRE(other->is_constant());
    REQUIRE(other->type == value->type);
    REQUIRE(other->constant->identical(*value->constant));
  }
  REQUIRE(a.num_nodes() == b.num_nodes());
  for (size_t n = 0; n < a.num_nodes(); ++n) {
    const Node* x = a.nodes()[n];
    const Node* y = b.nodes()[n];
    REQUIRE(x->op == y->op);
    REQUIRE(x->name == y->name);
    REQUIRE(x->inputs().size() == y->inputs().size());
    for (size_t i = 0; i < x->inputs().size(); ++i) {
      REQUIRE(name_of(x->input(i)) == name_of(y->input(i)));
    }
    REQUIRE(x->outputs().size() == y->outputs().size());
    for (size_t i = 0; i < x->outputs().size(); ++i) {
      REQUIRE(x->output(i)->name() == y->output(i)->name());
      REQUIRE(x->output(i)->has_type == y->output(i)->has_type);
      if (x->output(i)->has_type) REQUIRE(x->output(i)->type == y->output(i)->type);
    }
    REQUIRE(x->attributes.size() == y->attributes.size());
    for (const auto& [key, value] : x->attributes) {
      INFO("attribute " << key << " of " << x->describe());
      REQUIRE(y->attributes.count(key));
      REQUIRE(same_attribute(value, y->attributes.find(key)->second));
    }
  }
}

// print → parse → print: the graph and the text both survive.
void require_round_trip(const Graph& graph) {
  std::string text = print_graph(graph);
  INFO(text);
  Graph parsed = parse_graph(text, "round-trip");
  require_same_graph(graph, parsed);
  REQUIRE(print_graph(parsed) == text);
}

// A tensor of `dtype` and `shape` whose element i is `pattern(i)` converted from double.
Tensor make_tensor(DType dtype, Shape shape, double (*pattern)(int64_t)) {
  Tensor source(DType::f64, shape);
  auto values = source.values<double>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = pattern(static_cast<int64_t>(i));
  return source.cast(dtype);
}

double ramp(int64_t i) { return static_cast<double>(i % 7) - 3 + (i % 3) * 0.25; }
double constant_three(int64_t) { return 3.0; }

}  // namespace

TEST_CASE("the graph text form parses hand-written text", "[graph_text]") {
  const std::string text = R"(
graph main(%x: f32[1,2,4,4], %y: i64[2]) -> (%out: f32[1,2,4,4]) opset 17 {
  %w = const f32[2,2,1,1] resource<w>    // bytes at the end
  %b = const f32[2] splat<0.5>
  %s = const i64[2] dense<[1, -1]>
  %0 = Conv(%x, %w, %b) {kernel_shape=[1,1], pads=[0,0,0,0]} : f32[1,2,4,4] @"conv/1"
  %a, %m = Dropout(%0, _, _) : f32[1,2,4,4], bool[1,2,4,4]
  %"odd name" = LeakyRelu(%a) {alpha=0.2} : f32[1,2,4,4]
  %out = Add(%"odd name", %x) : f32[1,2,4,4]
  return %out
}

resources {
  w: "0000803f000000000000000000000040"   // [1, 0, 0, 2]
}
)";
  Graph graph = parse_graph(text, "example.mgraph");
  verify_graph(graph);
  REQUIRE(graph.name == "main");
  REQUIRE(graph.opset == 17);
  REQUIRE(graph.inputs().size() == 2);
  REQUIRE(graph.inputs()[1]->type == TensorType{DType::i64, {2}});
  REQUIRE(graph.find_value("w")->constant->to_double_vector() == std::vector<double>{1, 0, 0, 2});
  REQUIRE(graph.find_value("b")->constant->to_double_vector() == std::vector<double>{0.5, 0.5});
  REQUIRE(graph.find_value("s")->constant->to_int64_vector() == std::vector<int64_t>{1, -1});
  std::vector<Node*> nodes = graph.nodes();
  REQUIRE(nodes.size() == 4);
  REQUIRE(nodes[0]->name == "conv/1");
  REQUIRE(std::get<std::vector<int64_t>>(nodes[0]->attributes.at("pads")) ==
          std::vector<int64_t>{0, 0, 0, 0});
  REQUIRE(nodes[1]->inputs().size() == 3);
  REQUIRE((nodes[1]->input(1) == nullptr && nodes[1]->input(2) == nullptr));
  REQUIRE(nodes[1]->output(1)->type == TensorType{DType::boolean, {1, 2, 4, 4}});
  REQUIRE(std::get<float>(nodes[2]->attributes.at("alpha")) == 0.2f);
  REQUIRE(nodes[3]->input(0)->name() == "odd name");
  REQUIRE(graph.outputs()[0] == nodes[3]->output(0));

  // The printed form: comments gone, the 4-element constant inline, names as written.
  REQUIRE(print_graph(graph) ==
          "graph main(%x: f32[1,2,4,4], %y: i64[2]) -> (%out: f32[1,2,4,4]) opset 17 {\n"
          "  %w = const f32[2,2,1,1] dense<[1.0, 0.0, 0.0, 2.0]>\n"
          "  %b = const f32[2] splat<0.5>\n"
          "  %s = const i64[2] dense<[1, -1]>\n"
          "  %0 = Conv(%x, %w, %b) {kernel_shape=[1,1], pads=[0,0,0,0]} : f32[1,2,4,4] "
          "@\"conv/1\"\n"
          "  %a, %m = Dropout(%0, _, _) : f32[1,2,4,4], bool[1,2,4,4]\n"
          "  %\"odd name\" = LeakyRelu(%a) {alpha=0.2} : f32[1,2,4,4]\n"
          "  %out = Add(%\"odd name\", %x) : f32[1,2,4,4]\n"
          "  return %out\n"
          "}\n");
  GraphPrintOptions small;
  small.max_inline_elements = 2;
  REQUIRE_THAT(print_graph(graph, small),
               Catch::Contains("%w = const f32[2,2,1,1] resource<w>\n") &&
                   Catch::EndsWith("\nresources {\n"
                                   "  w: \"0000803f000000000000000000000040\"\n}\n"));
}

TEST_CASE("every attribute kind round-trips", "[graph_text]") {
  Graph graph;
  graph.name = "attributes";
  graph.opset = 21;
  Value* x = graph.add_input("x", {DType::f32, {3}});
  Attributes attributes;
  attributes["int"] = int64_t{-7};
  attributes["big"] = std::numeric_limits<int64_t>::min();
  attributes["float_one"] = 1.0f;
  attributes["float_tiny"] = 1e-45f;
  attributes["float_big"] = 3.4028235e38f;
  attributes["float_third"] = 1.0f / 3.0f;
  attributes["negative_zero"] = -0.0f;
  attributes["infinity"] = -std::numeric_limits<float>::infinity();
  attributes["quiet_nan"] = std::numeric_limits<float>::quiet_NaN();
  attributes["odd_nan"] = std::bit_cast<float>(0xffc00001u);
  attributes["string"] = std::string("a \"quoted\"\\ path\n\twith\x01 bytes");
  attributes["ints"] = std::vector<int64_t>{1, -2, 3};
  attributes["floats"] = std::vector<float>{0.5f, 2.0f, std::numeric_limits<float>::infinity()};
  attributes["strings"] = std::vector<std::string>{"a", "", "c d"};
  attributes["no_ints"] = std::vector<int64_t>{};
  attributes["no_floats"] = std::vector<float>{};
  attributes["no_strings"] = std::vector<std::string>{};
  attributes["tensor_dense"] = Tensor::from_vector<int64_t>({2}, {4, -5});
  attributes["tensor_splat"] = make_tensor(DType::f16, {2, 3}, constant_three);
  attributes["tensor_large"] = make_tensor(DType::f32, {5, 7}, ramp);
  attributes["tensor_scalar"] = Tensor::scalar<bool>(true);
  attributes["tensor_empty"] = Tensor(DType::u8, {0, 3});
  attributes["odd/name"] = int64_t{1};
  Node* node = graph.add_node("Custom", {x}, {"y"}, attributes, "custom node");
  node->output(0)->type = {DType::f32, {3}};
  node->output(0)->has_type = true;
  graph.add_output(node->output(0));
  verify_graph(graph);
  require_round_trip(graph);

  std::string text = print_graph(graph);
  REQUIRE_THAT(text, Catch::Contains("int=-7, ints=[1,-2,3]"));
  REQUIRE_THAT(text, Catch::Contains("float_one=1.0,"));
  REQUIRE_THAT(text, Catch::Contains("negative_zero=-0.0,"));
  REQUIRE_THAT(text, Catch::Contains("infinity=-inf,"));
  REQUIRE_THAT(text, Catch::Contains("quiet_nan=nan,"));
  REQUIRE_THAT(text, Catch::Contains("odd_nan=nan(0xffc00001),"));
  REQUIRE_THAT(text, Catch::Contains("floats=[0.5, 2.0, inf]"));
  REQUIRE_THAT(text, Catch::Contains("no_floats=floats[], no_ints=ints[], no_strings=strings[]"));
  REQUIRE_THAT(text, Catch::Contains(R"(string="a \"quoted\"\\ path\n\twith\x01 bytes")"));
  REQUIRE_THAT(text, Catch::Contains(R"(strings=["a", "", "c d"])"));
  REQUIRE_THAT(text, Catch::Contains("tensor_dense=tensor<i64[2] dense<[4, -5]>>"));
  REQUIRE_THAT(text, Catch::Contains("tensor_splat=tensor<f16[2,3] splat<3.0>>"));
  REQUIRE_THAT(text, Catch::Contains("tensor_large=tensor<f32[5,7] resource<y.tensor_large>>"));
  REQUIRE_THAT(text, Catch::Contains("tensor_empty=tensor<u8[0,3] dense<[]>>"));
  REQUIRE_THAT(text, Catch::Contains("tensor_scalar=tensor<bool[] dense<[true]>>"));
  REQUIRE_THAT(text, Catch::Contains("\"odd/name\"=1"));
  REQUIRE_THAT(text, Catch::Contains("} : f32[3] @\"custom node\"\n"));
}

TEST_CASE("constants of every dtype round-trip bit for bit", "[graph_text]") {
  Graph graph;
  Value* x = graph.add_input("x", {DType::f32, {2}});
  for (int d = 0; d <= static_cast<int>(DType::boolean); ++d) {
    auto dtype = static_cast<DType>(d);
    std::string name(dtype_name(dtype));
    graph.add_constant(name + "_splat", make_tensor(dtype, {4, 2}, constant_three));
    graph.add_constant(name + "_dense", make_tensor(dtype, {2, 3}, ramp));
    graph.add_constant(name + "_resource", make_tensor(dtype, {3, 11}, ramp));
    graph.add_constant(name + "_scalar", make_tensor(dtype, {}, ramp));
    graph.add_constant(name + "_empty", Tensor(dtype, {2, 0}));
  }
  // Integer extremes, which a detour through double would lose.
  graph.add_constant("i64_extremes", Tensor::from_vector<int64_t>(
                                         {2}, {std::numeric_limits<int64_t>::min(),
                                               std::numeric_limits<int64_t>::max()}));
  graph.add_constant("u64_max", Tensor::from_vector<uint64_t>(
                                    {2}, {std::numeric_limits<uint64_t>::max(), 0}));
  // Special floats: signed zeros, infinities, NaN with and without a payload, subnormals.
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> special = {-0.0f,
                                0.0f,
                                inf,
                                -inf,
                                std::nanf(""),
                                std::bit_cast<float>(0x7fc00123u),
                                std::bit_cast<float>(0xffc00000u),
                                1e-45f,
                                0.1f,
                                16777217.0f};
  graph.add_constant("f32_special", Tensor::from_vector<float>({10}, special));
  std::vector<double> special64 = {-0.0, 0.1, 5e-324, std::nan(""),
                                   std::bit_cast<double>(0x7ff0000000000001u)};
  graph.add_constant("f64_special", Tensor::from_vector<double>({5}, special64));
  Tensor halves(DType::f16, {4});
  std::vector<uint16_t> half_bits = {0x8000, 0x7e00, 0x7c01, 0x0001};  // -0, nan, snan, tiny
  std::memcpy(halves.bytes().data(), half_bits.data(), 8);
  graph.add_constant("f16_special", halves);
  Tensor bhalves(DType::bf16, {3});
  std::vector<uint16_t> bhalf_bits = {0x8000, 0x7fc0, 0xff81};
  std::memcpy(bhalves.bytes().data(), bhalf_bits.data(), 6);
  graph.add_constant("bf16_special", bhalves);
  graph.add_output(x);
  verify_graph(graph);
  require_round_trip(graph);

  std::string text = print_graph(graph);
  REQUIRE_THAT(text, Catch::Contains("%f32_splat = const f32[4,2] splat<3.0>\n"));
  REQUIRE_THAT(text, Catch::Contains("%i8_splat = const i8[4,2] splat<3>\n"));
  REQUIRE_THAT(text, Catch::Contains("%bool_splat = const bool[4,2] splat<true>\n"));
  REQUIRE_THAT(text, Catch::Contains("%i32_dense = const i32[2,3] dense<[-3, -1, 0, 0, 1, 2]>\n"));
  REQUIRE_THAT(text, Catch::Contains("%f64_dense = const f64[2,3] dense<[-3.0, -1.75, -0.5, 0.0, "
                                     "1.25, 2.5]>\n"));
  REQUIRE_THAT(text, Catch::Contains("%u8_resource = const u8[3,11] resource<u8_resource>\n"));
  REQUIRE_THAT(text, Catch::Contains("%f16_empty = const f16[2,0] dense<[]>\n"));
  REQUIRE_THAT(text, Catch::Contains("%f32_scalar = const f32[] dense<[-3.0]>\n"));
  REQUIRE_THAT(text, Catch::Contains("dense<[-9223372036854775808, 9223372036854775807]>"));
  REQUIRE_THAT(text, Catch::Contains("dense<[18446744073709551615, 0]>"));
  REQUIRE_THAT(text, Catch::Contains("dense<[-0.0, 0.0, inf, -inf, nan, nan(0x7fc00123), "
                                     "nan(0xffc00000), 1e-45, 0.1, 16777216.0]>"));
  REQUIRE_THAT(text, Catch::Contains("dense<[-0.0, 0.1, 5e-324, nan, nan(0x7ff0000000000001)]>"));
  REQUIRE_THAT(text, Catch::Contains("dense<[-0.0, nan, nan(0x7c01), 5.9604645e-08]>"));
  REQUIRE_THAT(text, Catch::Contains("dense<[-0.0, nan, nan(0xff81)]>"));
}

TEST_CASE("quoted names, omitted inputs, several outputs and missing types round-trip",
          "[graph_text]") {
  Graph graph;
  graph.name = "torch-jit-export";
  graph.opset = 13;
  Value* x = graph.add_input("input:0", {DType::f32, {1, 8}});
  Value* w = graph.add_constant("conv1/7x7_s2_1 \"w\"\\", make_tensor(DType::f32, {8}, ramp));
  Node* add = graph.add_node("Add", {x, w}, {"sum/0"}, {}, "Add_1");
  Node* split = graph.add_node("Split", {add->output(0), nullptr}, {"a", "b"},
                               {{"axis", int64_t{1}}});
  split->output(0)->type = {DType::f32, {1, 4}};
  split->output(0)->has_type = true;
  Node* opt = graph.add_node("Clip", {split->output(1), nullptr, w}, {"clipped"});
  Node* odd_op = graph.add_node("return", {opt->output(0)}, {});
  (void)odd_op;
  graph.add_node("com.example.Op", {x, x}, {"twice"});
  graph.add_output(split->output(0));
  graph.add_output(x);
  graph.add_output(split->output(0));
  require_round_trip(graph);

  std::string text = print_graph(graph);
  REQUIRE_THAT(text, Catch::StartsWith("graph \"torch-jit-export\"(%\"input:0\": f32[1,8]) -> "
                                       "(%a: f32[1,4], %\"input:0\": f32[1,8], %a: f32[1,4]) "
                                       "opset 13 {\n"));
  REQUIRE_THAT(text, Catch::Contains(R"(%"conv1/7x7_s2_1 \"w\"\\" = const)"));
  REQUIRE_THAT(text, Catch::Contains(R"(%"sum/0" = Add(%"input:0", %"conv1/7x7_s2_1 \"w\"\\"))"
                                     R"( : ? @Add_1)"));
  REQUIRE_THAT(text, Catch::Contains(R"(%a, %b = Split(%"sum/0", _) {axis=1} : f32[1,4], ?)"));
  REQUIRE_THAT(text, Catch::Contains("%clipped = Clip(%b, _, %\"conv1/7x7_s2_1"));
  REQUIRE_THAT(text, Catch::Contains("\n  \"return\"(%clipped)\n"));
  REQUIRE_THAT(text, Catch::Contains("%twice = com.example.Op(%\"input:0\", %\"input:0\") : ?\n"));
  REQUIRE_THAT(text, Catch::Contains("  return %a, %\"input:0\", %a\n}\n"));
}

TEST_CASE("elided constants print a summary", "[graph_text]") {
  Graph graph;
  Value* w = graph.add_constant("w", make_tensor(DType::f32, {64, 64}, ramp));
  graph.add_output(w);
  GraphPrintOptions options;
  options.elide_large_constants = true;
  std::string text = print_graph(graph, options);
  REQUIRE_THAT(text, Catch::Contains("%w = const f32[64,64] dense<...elided, 4096 elements>\n"));
  REQUIRE_THAT(text, !Catch::Contains("resources"));
  REQUIRE_THROWS_AS(parse_graph(text), Error);
}

TEST_CASE("the parser accepts what a person writes", "[graph_text]") {
  Graph graph = parse_graph(R"(graph g(%x: f16[2]) -> (%y: f16[2]) {  // no opset: 0
    %c = const f16[2] dense<[0.1, -inf]>
    %y = Mul(%x, %c) {scales=[1, 0.5], zero=floats[], sizes=ints[2,3]} // no `: type`
    %z = Neg(%y)
    return %y
  })");
  REQUIRE(graph.opset == 0);
  const Node* mul = graph.nodes()[0];
  // %y takes its type from the signature; %z stays untyped.
  REQUIRE(mul->output(0)->type == TensorType{DType::f16, {2}});
  REQUIRE_FALSE(graph.find_value("z")->has_type);
  REQUIRE(std::get<std::vector<float>>(mul->attributes.at("scales")) ==
          std::vector<float>{1.0f, 0.5f});
  REQUIRE(std::get<std::vector<int64_t>>(mul->attributes.at("sizes")) ==
          std::vector<int64_t>{2, 3});
  const Tensor& c = *graph.find_value("c")->constant;
  REQUIRE(c.values<Half>()[0].bits == Half(0.1f).bits);
  REQUIRE(std::isinf(c.as_double(1)));
}

namespace {

// The message parse_graph throws for `text`.
std::string parse_error(const std::string& text) {
  try {
    parse_graph(text, "bad.mgraph");
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("parse errors name the line, the column and what was expected", "[graph_text]") {
  const std::string head = "graph g(%x: f32[2]) -> (%y: f32[2]) {\n";
  REQUIRE(parse_error(head + "  %y = Relu(%x : f32[2]\n  return %y\n}") ==
          "bad.mgraph:2:16: expected ')', found ':'");
  REQUIRE(parse_error(head + "  %y = Relu(%z) : f32[2]\n  return %y\n}") ==
          "bad.mgraph:2:13: unknown value %z (values must be defined before they are used)");
  REQUIRE(parse_error(head + "  %x = Relu(%x) : f32[2]\n  return %x\n}") ==
          "bad.mgraph:2:3: %x is already defined at line 1");
  REQUIRE(parse_error(head + "  %y = Relu(%x) : f33[2]\n  return %y\n}") ==
          "bad.mgraph:2:19: unknown dtype 'f33' (expected one of f32, f64, f16, bf16, i8, i16, "
          "i32, i64, u8, u16, u32, u64, bool)");
  REQUIRE(parse_error(head + "  %y = Relu(%x) : f32[2,-1]\n  return %y\n}") ==
          "bad.mgraph:2:25: dimension -1 is negative");
  // Constants, then a body that is fine.
  const std::string tail = "  %y = Relu(%x) : f32[2]\n  return %y\n}\n";
  REQUIRE(parse_error(head + "  %c = const f32[3] dense<[1.0, 2.0]>\n" + tail) ==
          "bad.mgraph:2:21: dense<...> has 2 elements, but f32[3] has 3");
  REQUIRE(parse_error(head + "  %c = const u8[1] dense<[256]>\n" + tail) ==
          "bad.mgraph:2:27: 256 does not fit in u8");
  REQUIRE(parse_error(head + "  %c = const i32[1] dense<[1.5]>\n" + tail) ==
          "bad.mgraph:2:28: expected an integer (i32 element), found number 1.5");
  REQUIRE(parse_error(head + "  %c = const f32[2] resource<w>\n" + tail) ==
          "bad.mgraph:2:21: no resource 'w' in the resources section");
  REQUIRE(parse_error(head + "  %c = const f32[2] resource<w>\n" + tail +
                      "resources {\n  w: \"00\"\n}") ==
          "bad.mgraph:2:21: resource w holds 2 hex digits, but f32[2] needs 8 bytes (16 digits)");
  REQUIRE(parse_error(head + "  %c = const f32[1] resource<w>\n" + tail +
                      "resources {\n  w: \"0000zz00\"\n}") ==
          "bad.mgraph:7:6: resource data has 'z' at offset 4, which is not a hex digit");
  REQUIRE(parse_error(head + "  %y = Relu(%x) {a=[]} : f32[2]\n  return %y\n}") ==
          "bad.mgraph:2:21: an empty list needs its kind: ints[], floats[] or strings[]");
  REQUIRE(parse_error(head + "  %y = Relu(%x) : f32[2]\n  return %x\n}") ==
          "bad.mgraph:3:10: return value 0 is %x, but the signature names %y");
  REQUIRE(parse_error(head + "  %y = Relu(%x) : f32[3]\n  return %y\n}") ==
          "bad.mgraph:1:25: the signature gives %y type f32[2], but it is defined with type "
          "f32[3]");
  REQUIRE(parse_error(head + "  %y = Relu(%x) : f32[2]\n}") ==
          "bad.mgraph:3:1: expected a statement or 'return', found '}'");
  REQUIRE(parse_error(head + "  %y = Relu(%x) : f32[2]\n  return %y\n") ==
          "bad.mgraph:4:1: expected '}', found end of input");
  REQUIRE(parse_error(head + "  %y = Relu(%x) {name=\"a\n") ==
          "bad.mgraph:2:25: this string does not end (missing '\"')");
  REQUIRE(parse_error("graph g() -> () { return } $") ==
          "bad.mgraph:1:28: unexpected character '$'");
}

TEST_CASE("the parser rejects every truncation of a valid text with an Error", "[graph_text]") {
  const std::string text =
      "graph g(%x: f32[2]) -> (%y: f32[2], %m: bool[2]) opset 13 {\n"
      "  %w = const f32[20] resource<w>\n"
      "  %s = const f16[2] dense<[nan(0x7e01), -inf]>\n"
      "  %y, %m = Dropout(%x, _, _) {ratio=0.5, \"odd name\"=floats[], "
      "t=tensor<i8[2] splat<-1>>} : f32[2], bool[2] @\"d/1\"\n"
      "  return %y, %m\n"
      "}\n"
      "\n"
      "resources {\n"
      "  w: \"" + std::string(160, '0') + "\"\n"
      "}\n";
  Graph graph = parse_graph(text);
  REQUIRE(print_graph(parse_graph(print_graph(graph))) == print_graph(graph));
  // Every proper prefix that cuts before the last '}' of the graph is incomplete.
  size_t complete = text.find("\n}\n") + 2;
  for (size_t length = 0; length < complete; ++length) {
    INFO("prefix of " << length << " characters");
    REQUIRE_THROWS_AS(parse_graph(text.substr(0, length)), Error);
  }
  // Replacing any one character by a stray one never crashes: it parses or throws Error.
  for (size_t i = 0; i < text.size(); ++i) {
    for (char c : {'(', '%', '"', '9', '-', '\n'}) {
      std::string broken = text;
      broken[i] = c;
      try {
        parse_graph(broken);
      } catch (const Error&) {
      }
    }
  }
}
