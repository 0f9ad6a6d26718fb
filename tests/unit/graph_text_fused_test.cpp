// Unit tests for fused nodes in the graph text form: a fused node prints with its body
// indented after it, parses back into a body Graph whose inputs and outputs are named like
// the node's, and print(parse(print(g))) == print(g). A text cut short or with one
// character changed either reads back as a graph that verifies and round-trips, or is an
// error naming the file, line and column. Course module 2.
#include "minic/ir/graph/text.h"
#include "minic/ir/graph/verifier.h"
#include "minic/ops/shape_inference.h"
#include "minic/runtime/interpreter.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <regex>

using namespace minic;

namespace {

// print → parse → print gives the same text, and the parsed graph verifies.
Graph require_round_trip(const Graph& graph) {
  std::string text = print_graph(graph);
  INFO(text);
  Graph parsed = parse_graph(text, "round-trip");
  REQUIRE(print_graph(parsed) == text);
  verify_graph(parsed);
  return parsed;
}

void set_type(Value* value, TensorType type) {
  value->type = std::move(type);
  value->has_type = true;
}

// main(%x: f32[1,2,4,4]) with %w, %b constants and one fused node computing
// Add(Relu(Conv(x, w, b)), x), as fuse-ops builds it.
Graph conv_relu_add_graph() {
  TensorType t{DType::f32, {1, 2, 4, 4}};
  Graph graph;
  graph.opset = 17;
  Value* x = graph.add_input("x", t);
  Value* w = graph.add_constant("w", Tensor::from_vector<float>(
                                         {2, 2, 1, 1}, {0.5f, -1.0f, 2.0f, 0.25f}));
  Value* b = graph.add_constant("b", Tensor::from_vector<float>({2}, {0.25f, -1.0f}));

  auto body = std::make_unique<Graph>();
  body->name = "conv_relu_add";
  body->opset = 17;
  Value* bx = body->add_input("x", t);
  Value* bw = body->add_input("w", w->type);
  Value* bb = body->add_input("b", b->type);
  Attributes attributes = {{"kernel_shape", std::vector<int64_t>{1, 1}}};
  Node* conv = body->add_node("Conv", {bx, bw, bb}, {"0"}, attributes, "conv1");
  set_type(conv->output(0), t);
  Node* relu = body->add_node("Relu", {conv->output(0)}, {"1"});
  set_type(relu->output(0), t);
  Node* add = body->add_node("Add", {relu->output(0), bx}, {"y"});
  set_type(add->output(0), t);
  body->add_output(add->output(0));

  Node* fused = graph.add_fused_node(std::move(body), {x, w, b}, {"y"}, "conv_relu_add");
  set_type(fused->output(0), t);
  graph.add_output(fused->output(0));
  verify_graph(graph);
  return graph;
}

// The hex digits of 80 bytes counting up from `first`.
std::string hex_ramp(int first) {
  std::string hex;
  for (int i = 0; i < 80; ++i) hex += fmt::format("{:02x}", (first + i) % 256);
  return hex;
}

}  // namespace

TEST_CASE("a fused node prints as one unit with its body indented", "[graph_text][fused]") {
  Graph graph = conv_relu_add_graph();
  REQUIRE(print_graph(graph) ==
          "graph main(%x: f32[1,2,4,4]) -> (%y: f32[1,2,4,4]) opset 17 {\n"
          "  %w = const f32[2,2,1,1] dense<[0.5, -1.0, 2.0, 0.25]>\n"
          "  %b = const f32[2] dense<[0.25, -1.0]>\n"
          "  %y = fused(%x, %w, %b) : f32[1,2,4,4] @conv_relu_add {\n"
          "    %0 = Conv(%x, %w, %b) {kernel_shape=[1,1]} : f32[1,2,4,4] @conv1\n"
          "    %1 = Relu(%0) : f32[1,2,4,4]\n"
          "    %y = Add(%1, %x) : f32[1,2,4,4]\n"
          "  }\n"
          "  return %y\n"
          "}\n");
}

TEST_CASE("a fused node parses back into the same body and computes the same",
          "[graph_text][fused]") {
  Graph graph = conv_relu_add_graph();
  Graph parsed = require_round_trip(graph);

  REQUIRE(parsed.num_nodes() == 1);
  const Node* node = parsed.nodes()[0];
  REQUIRE(node->op == kFusedOp);
  REQUIRE(node->name == "conv_relu_add");
  REQUIRE(node->is_fused());
  const Graph& body = *node->body;
  REQUIRE(body.name == "conv_relu_add");
  REQUIRE(body.opset == 17);
  // The body's inputs stand for the node's inputs: same names, same types, own Values.
  REQUIRE(body.inputs().size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    REQUIRE(body.inputs()[i]->name() == node->input(i)->name());
    REQUIRE(body.inputs()[i]->type == node->input(i)->type);
    REQUIRE(body.inputs()[i] != node->input(i));
    REQUIRE_FALSE(body.inputs()[i]->is_constant());
  }
  REQUIRE(body.outputs().size() == 1);
  REQUIRE(body.outputs()[0]->name() == "y");
  REQUIRE(body.outputs()[0]->producer()->op == "Add");
  REQUIRE(body.num_nodes() == 3);
  REQUIRE(body.nodes()[0]->name == "conv1");
  // Inside the body %x is the body input, used by Conv and by Add.
  REQUIRE(body.inputs()[0]->users().size() == 2);

  // Against a hand-computed element: the 1x1 conv at channel 0 is 0.5*x0 - 1*x1 + 0.25.
  Tensor x = Tensor::from_vector<float>({1, 2, 4, 4}, std::vector<float>(32, 0.0f));
  auto xs = x.values<float>();
  for (int i = 0; i < 32; ++i) xs[i] = 0.125f * static_cast<float>(i) - 1.0f;
  std::vector<Tensor> out = interpret(parsed, {x});
  float x0 = xs[5];
  float x1 = xs[16 + 5];
  float expected = std::max(0.5f * x0 - 1.0f * x1 + 0.25f, 0.0f) + x0;
  REQUIRE(out[0].values<float>()[5] == Approx(expected));
  REQUIRE(interpret(graph, {x})[0].identical(out[0]));
}

TEST_CASE("fused nodes round-trip: several outputs, constants and fused nodes inside, "
          "attributes, local names", "[graph_text][fused]") {
  const std::string text =
      R"(graph g(%x: f32[2,3], %"in/1": f32[2,3]) -> )"
      R"((%a: f32[2,3], %s: f32[2,1], %0: f32[2,3]) opset 17 {
  %big = const f32[20] resource<big>
  %0 = Neg(%x) : f32[2,3]
  %a, %s = fused(%0, %"in/1") {note="kept"} : f32[2,3], f32[2,1] @"group/1" {
    %two = const f32[] dense<[2.0]>
    %big = const f32[20] resource<big.1>
    %x = Mul(%0, %"in/1") : f32[2,3]
    %a = fused(%x, %two) : f32[2,3] @inner {
      %a = Add(%x, %two) : f32[2,3]
    }
    %s = ReduceMax(%a) {axes=[1]} : ?
  }
  return %a, %s, %0
}

resources {
  big: ")" + hex_ramp(0x10) + R"("
  big.1: ")" + hex_ramp(0x80) + R"("
}
)";
  Graph graph = parse_graph(text, "fused.mgraph");
  INFO(print_graph(graph));
  REQUIRE(print_graph(graph) == text);
  const Node* group = graph.nodes()[1];
  REQUIRE(group->name == "group/1");
  REQUIRE(std::get<std::string>(group->attributes.at("note")) == "kept");
  const Graph& body = *group->body;
  // Inside, %0 is the body input standing for outer %0, and %x a body value of its own.
  const Node* mul = body.nodes()[0];
  REQUIRE(mul->input(0) == body.inputs()[0]);
  REQUIRE(body.inputs()[0]->name() == "0");
  REQUIRE(body.find_value("x") == mul->output(0));
  REQUIRE(graph.find_value("x") == graph.inputs()[0]);
  REQUIRE(body.find_value("two")->is_constant());
  // The same resource name inside and outside: the body's constant got the renamed bytes.
  REQUIRE(graph.find_value("big")->constant->bytes()[1] == std::byte{0x11});
  REQUIRE(body.find_value("big")->constant->bytes()[1] == std::byte{0x81});
  REQUIRE(body.outputs().size() == 2);
  REQUIRE(body.nodes()[1]->is_fused());
  REQUIRE(body.nodes()[1]->body->outputs()[0]->producer()->op == "Add");
  // %s was written without a type inside: shape inference fills it in, and it still
  // round-trips.
  infer_shapes(graph);
  verify_graph(graph);
  REQUIRE(group->output(1)->type == TensorType{DType::f32, {2, 1}});
  require_round_trip(graph);
}

TEST_CASE("an op named like the keyword prints quoted", "[graph_text][fused]") {
  Graph graph;
  Value* x = graph.add_input("x", {DType::f32, {2}});
  Node* node = graph.add_node("fused", {x}, {"y"});
  graph.add_output(node->output(0));
  std::string text = print_graph(graph);
  REQUIRE_THAT(text, Catch::Contains("%y = \"fused\"(%x) : ?\n"));
  Graph parsed = parse_graph(text);
  REQUIRE(parsed.nodes()[0]->op == "fused");
  REQUIRE_FALSE(parsed.nodes()[0]->is_fused());
}

namespace {

std::string parse_error(const std::string& body_lines) {
  std::string text = "graph g(%x: f32[2], %z: f32[2]) -> (%y: f32[2]) {\n" + body_lines +
                     "  return %y\n}\n";
  try {
    parse_graph(text, "bad.mgraph");
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("fused node parse errors say what is wrong and where", "[graph_text][fused]") {
  REQUIRE(parse_error("  %y = fused(%x, %x) : f32[2] {\n    %y = Add(%x, %x) : f32[2]\n  }\n") ==
          "bad.mgraph:2:18: %x is given twice; a fused node's inputs are distinct values");
  REQUIRE(parse_error("  %y = fused(%x, _) : f32[2] {\n    %y = Relu(%x) : f32[2]\n  }\n") ==
          "bad.mgraph:2:18: a fused node cannot omit an input");
  REQUIRE(parse_error("  %y = fused(%x) : f32[2] {\n    %w = Relu(%x) : f32[2]\n  }\n") ==
          "bad.mgraph:2:3: the body of this fused node does not define %y");
  REQUIRE(parse_error("  %y = fused(%x) : f32[2] {\n    %y = Relu(%x) : f32[3]\n  }\n") ==
          "bad.mgraph:2:3: %y is f32[2] here but f32[3] in the body");
  REQUIRE(parse_error("  %y = fused(%x) : f32[2] {\n    %y = Relu(%x) : f32[2]\n"
                      "    return %y\n  }\n") ==
          "bad.mgraph:4:5: a fused node's body has no 'return': its outputs are the values "
          "named like the node's outputs");
  // The body sees only its own values: an outer value that is not an input is unknown.
  REQUIRE(parse_error("  %y = fused(%x) : f32[2] {\n    %y = Add(%x, %z) : f32[2]\n  }\n") ==
          "bad.mgraph:3:18: unknown value %z (values must be defined before they are used)");
  // ... and the body's values are not seen outside.
  REQUIRE(parse_error("  %y = fused(%x) : f32[2] {\n    %t = Neg(%x) : f32[2]\n"
                      "    %y = Neg(%t) : f32[2]\n  }\n  %u = Neg(%t) : f32[2]\n") ==
          "bad.mgraph:6:12: unknown value %t (values must be defined before they are used)");
  REQUIRE(parse_error("  %y = fused(%x) : f32[2] {\n    %y = Relu(%x) : f32[2]\n") ==
          "bad.mgraph:4:3: a fused node's body has no 'return': its outputs are the values "
          "named like the node's outputs");
  REQUIRE(parse_error("  %y = fused(%x) : f32[2] {\n    %y = Relu(%x) : f32[2]\n    =\n  }\n") ==
          "bad.mgraph:4:5: expected a statement or '}', found '='");
}

TEST_CASE("the verifier holds fused bodies to the naming rule the text form relies on",
          "[graph_text][fused]") {
  TensorType t{DType::f32, {2}};
  Graph graph;
  Value* x = graph.add_input("x", t);
  auto body = std::make_unique<Graph>();
  Value* in = body->add_input("in0", t);
  Node* relu = body->add_node("Relu", {in}, {"y"});
  set_type(relu->output(0), t);
  body->add_output(relu->output(0));
  Node* fused = graph.add_fused_node(std::move(body), {x}, {"y"});
  set_type(fused->output(0), t);
  graph.add_output(fused->output(0));
  REQUIRE_THROWS_WITH(verify_graph(graph),
                      Catch::Contains("body input 0 is %in0 but the node's input is %x"));
}

namespace {

// The parser's error for `text` read from `source`: "SOURCE:LINE:COLUMN: reason", where
// LINE is a line of `text`.
void check_error_names_the_place(const Error& error, const std::string& text,
                                 const std::string& source) {
  const std::string message = error.what();
  INFO(message);
  static const std::regex kPlace(R"(([^:]+):(\d+):(\d+): .+)");
  std::smatch match;
  REQUIRE(std::regex_match(message, match, kPlace));
  CHECK(match[1].str() == source);
  const int64_t lines = std::count(text.begin(), text.end(), '\n') + 1;
  CHECK(std::stoll(match[2].str()) >= 1);
  CHECK(std::stoll(match[2].str()) <= lines);
  CHECK(std::stoll(match[3].str()) >= 1);
}

}  // namespace

TEST_CASE("the parser rejects every truncation of a fused node, naming the place",
          "[graph_text][fused]") {
  const std::string text = print_graph(conv_relu_add_graph());
  size_t complete = text.rfind("\n}\n") + 2;
  for (size_t length = 0; length < complete; ++length) {
    INFO("prefix of " << length << " characters");
    const std::string prefix = text.substr(0, length);
    try {
      parse_graph(prefix, "truncated.mgraph");
      FAIL("the prefix parsed");
    } catch (const Error& error) {
      check_error_names_the_place(error, prefix, "truncated.mgraph");
    }
  }
}

TEST_CASE("a fused node with one character changed parses to a graph that round-trips, "
          "or is an error naming the place", "[graph_text][fused]") {
  const std::string text = print_graph(conv_relu_add_graph());
  int parsed = 0;
  int refused = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    for (char c : {'{', '}', '%', '=', ',', '\n'}) {
      std::string broken = text;
      broken[i] = c;
      INFO("character " << i << " made '" << c << "':\n" << broken);
      std::optional<Graph> graph;
      try {
        graph = parse_graph(broken, "mutated.mgraph");
      } catch (const Error& error) {
        check_error_names_the_place(error, broken, "mutated.mgraph");
        ++refused;
        continue;
      }
      // Read: a graph that verifies and prints to text that reads back the same.
      verify_graph(*graph);
      std::string printed = print_graph(*graph);
      CHECK(print_graph(parse_graph(printed, "printed.mgraph")) == printed);
      ++parsed;
    }
  }
  // Both outcomes occur (a changed character of a name or a number can still parse).
  CHECK(parsed > 0);
  CHECK(refused > 0);
}

TEST_CASE("fused bodies nested absurdly deep are an error, not a stack overflow", "[graph_text]") {
  auto nested = [](int depth) {
    std::string text = "graph main(%x: f32[2]) -> (%y: f32[2]) {\n";
    for (int i = 0; i < depth; ++i) text += "%y = fused(%x) : f32[2] {\n";
    text += "%y = Relu(%x) : f32[2]\n" + std::string(depth, '}') + "\nreturn %y\n}\n";
    return text;
  };
  REQUIRE_NOTHROW(parse_graph(nested(3), "nested.mgraph"));
  REQUIRE_THROWS_WITH(parse_graph(nested(20000), "deep.mgraph"),
                      Catch::Contains("bodies nested more than"));
}
