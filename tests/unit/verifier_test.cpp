// Unit tests for the graph verifier: a valid graph passes; each broken invariant is
// reported with the node and value it concerns. Course module 2.
#include "minic/ir/graph/verifier.h"

#include <catch2/catch.hpp>

namespace minic {

// Graph keeps names, producers and users lists right by construction; these tests break
// them on purpose, through the fields Value and Node keep private, to see the verifier
// report each break.
struct GraphTestAccess {
  static std::vector<Node*>& users(Value* value) { return value->users_; }
  static int& producer_output(Value* value) { return value->producer_output_; }
  static std::string& name(Value* value) { return value->name_; }
  static std::vector<Value*>& inputs(Node* node) { return node->inputs_; }
  static std::unique_ptr<Node> stray_node() { return std::unique_ptr<Node>(new Node()); }
};

}  // namespace minic

using namespace minic;
using Access = GraphTestAccess;

namespace {

void set_type(Value* value, TensorType type) {
  value->type = std::move(type);
  value->has_type = true;
}

// graph main(%x: f32[4]) -> (%z) { %c = const; %y = Relu(%x); %z = Add(%y, %c) }
struct SmallGraph {
  Graph graph;
  Value* x;
  Value* c;
  Node* relu;
  Node* add;

  SmallGraph() {
    x = graph.add_input("x", {DType::f32, {4}});
    c = graph.add_constant("c", Tensor::from_vector<float>({4}, {1, 2, 3, 4}));
    relu = graph.add_node("Relu", {x}, {"y"});
    set_type(relu->output(0), {DType::f32, {4}});
    add = graph.add_node("Add", {relu->output(0), c}, {"z"}, {}, "add_1");
    set_type(add->output(0), {DType::f32, {4}});
    graph.add_output(add->output(0));
  }
};

std::string verify_error(const Graph& graph) {
  try {
    verify_graph(graph);
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a well-formed graph verifies", "[verifier]") {
  SmallGraph g;
  REQUIRE_NOTHROW(verify_graph(g.graph));
  // An omitted input, a value used twice by one node, an unused constant, a graph input
  // that is also a graph output: all fine.
  Node* clip = g.graph.add_node("Clip", {g.x, nullptr, g.x}, {"clipped"});
  set_type(clip->output(0), {DType::f32, {4}});
  g.graph.add_constant("unused", Tensor::scalar<int64_t>(3));
  g.graph.add_output(g.x);
  REQUIRE_NOTHROW(verify_graph(g.graph));
}

TEST_CASE("the verifier finds a use before the definition", "[verifier]") {
  Graph graph;
  Value* x = graph.add_input("x", {DType::f32, {4}});
  Node* relu = graph.add_node("Relu", {x}, {"b"});
  Node* neg = graph.add_node("Neg", {x}, {"a"});
  set_type(relu->output(0), {DType::f32, {4}});
  set_type(neg->output(0), {DType::f32, {4}});
  // Relu now reads Neg's output, but comes first in the node list.
  graph.set_input(relu, 0, neg->output(0));
  graph.add_output(relu->output(0));
  REQUIRE(verify_error(graph) == "graph 'main': Relu node defining %b: input 0 %a is used before "
                                 "its definition by Neg node defining %a");
  graph.sort_topologically();
  REQUIRE_NOTHROW(verify_graph(graph));
}

TEST_CASE("the verifier finds a constant whose data does not match its type", "[verifier]") {
  SmallGraph g;
  g.c->type = {DType::f32, {5}};
  REQUIRE(verify_error(g.graph) ==
          "graph 'main': constant %c holds data of type f32[4], but its type is f32[5]");
  g.c->type = {DType::i64, {4}};
  REQUIRE(verify_error(g.graph) ==
          "graph 'main': constant %c holds data of type f32[4], but its type is i64[4]");
}

TEST_CASE("the verifier checks user lists against the uses", "[verifier]") {
  SmallGraph g;
  Access::users(g.x).push_back(g.relu);  // listed twice, used once
  REQUIRE(verify_error(g.graph) == "graph 'main': %x lists Relu node defining %y as a user 2 "
                                   "times, but the node uses it 1 times");
  Access::users(g.x).clear();  // used, not listed
  REQUIRE(verify_error(g.graph) == "graph 'main': %x does not list Relu node defining %y as a "
                                   "user, but the node uses it 1 times");
  Access::users(g.x) = {g.relu};
  Access::users(g.c).push_back(g.relu);  // listed, not used
  REQUIRE(verify_error(g.graph) == "graph 'main': %c lists Relu node defining %y as a user 1 "
                                   "times, but the node uses it 0 times");
  Access::users(g.c) = {g.add};
  std::unique_ptr<Node> stranger = Access::stray_node();
  stranger->op = "Neg";
  Access::users(g.c).push_back(stranger.get());
  REQUIRE(verify_error(g.graph) == "graph 'main': %c lists a user that is not a node of the graph");
  Access::users(g.c) = {g.add};
  REQUIRE_NOTHROW(verify_graph(g.graph));
}

TEST_CASE("the verifier requires every value to have a valid type", "[verifier]") {
  SmallGraph g;
  g.relu->output(0)->has_type = false;
  REQUIRE(verify_error(g.graph) == "graph 'main': Relu node defining %y: output 0 %y has no type");
  g.relu->output(0)->has_type = true;
  g.x->type.shape = {4, -1};
  REQUIRE(verify_error(g.graph) == "graph 'main': graph input %x of type f32[4,-1]: negative "
                                   "dimension -1 in shape [4,-1]");
}

TEST_CASE("the verifier checks producers, names and definitions", "[verifier]") {
  SmallGraph g;
  Access::producer_output(g.add->output(0)) = 1;
  REQUIRE(verify_error(g.graph) == "graph 'main': Add node 'add_1': output 0 %z does not name "
                                   "this node (output 0) as its producer");
  Access::producer_output(g.add->output(0)) = 0;

  Access::name(g.relu->output(0)) = "x";  // now two values are called %x
  REQUIRE(verify_error(g.graph) == "graph 'main': Relu node defining %x: output 0 %x has the "
                                   "same name as another value");
  Access::name(g.relu->output(0)) = "y";

  // A value that belongs to another graph is not defined here.
  Graph other;
  Value* foreign = other.add_input("w", {DType::f32, {4}});
  Access::inputs(g.add)[1] = foreign;
  REQUIRE(verify_error(g.graph) ==
          "graph 'main': Add node 'add_1': input 1 %w is not defined in the graph");
  Access::inputs(g.add)[1] = g.c;

  g.graph.add_output(foreign);
  REQUIRE(verify_error(g.graph) == "graph 'main': graph output 1 %w is not defined by an input, "
                                   "a constant or a node");
}
