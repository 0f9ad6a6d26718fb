// Unit tests for the graph verifier: a valid graph passes; each broken invariant is
// reported with the node and value it concerns. Course module 2.
#include "minic/ir/graph/verifier.h"

#include <catch2/catch.hpp>

using namespace minic;

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
    set_type(relu->outputs[0], {DType::f32, {4}});
    add = graph.add_node("Add", {relu->outputs[0], c}, {"z"}, {}, "add_1");
    set_type(add->outputs[0], {DType::f32, {4}});
    graph.add_output(add->outputs[0]);
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
  set_type(clip->outputs[0], {DType::f32, {4}});
  g.graph.add_constant("unused", Tensor::scalar<int64_t>(3));
  g.graph.add_output(g.x);
  REQUIRE_NOTHROW(verify_graph(g.graph));
}

TEST_CASE("the verifier finds a use before the definition", "[verifier]") {
  Graph graph;
  Value* x = graph.add_input("x", {DType::f32, {4}});
  Node* relu = graph.add_node("Relu", {x}, {"b"});
  Node* neg = graph.add_node("Neg", {x}, {"a"});
  set_type(relu->outputs[0], {DType::f32, {4}});
  set_type(neg->outputs[0], {DType::f32, {4}});
  // Relu now reads Neg's output, but comes first in the node list.
  relu->inputs[0] = neg->outputs[0];
  x->users = {neg};
  neg->outputs[0]->users = {relu};
  graph.add_output(relu->outputs[0]);
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
  g.x->users.push_back(g.relu);  // listed twice, used once
  REQUIRE(verify_error(g.graph) == "graph 'main': %x lists Relu node defining %y as a user 2 "
                                   "times, but the node uses it 1 times");
  g.x->users.clear();  // used, not listed
  REQUIRE(verify_error(g.graph) == "graph 'main': %x does not list Relu node defining %y as a "
                                   "user, but the node uses it 1 times");
  g.x->users = {g.relu};
  g.c->users.push_back(g.relu);  // listed, not used
  REQUIRE(verify_error(g.graph) == "graph 'main': %c lists Relu node defining %y as a user 1 "
                                   "times, but the node uses it 0 times");
  g.c->users = {g.add};
  Node stranger;
  stranger.op = "Neg";
  g.c->users.push_back(&stranger);
  REQUIRE(verify_error(g.graph) == "graph 'main': %c lists a user that is not a node of the graph");
}

TEST_CASE("the verifier requires every value to have a valid type", "[verifier]") {
  SmallGraph g;
  g.relu->outputs[0]->has_type = false;
  REQUIRE(verify_error(g.graph) == "graph 'main': Relu node defining %y: output 0 %y has no type");
  g.relu->outputs[0]->has_type = true;
  g.x->type.shape = {4, -1};
  REQUIRE(verify_error(g.graph) == "graph 'main': graph input %x of type f32[4,-1]: negative "
                                   "dimension -1 in shape [4,-1]");
}

TEST_CASE("the verifier checks producers, names and definitions", "[verifier]") {
  SmallGraph g;
  g.add->outputs[0]->producer_output = 1;
  REQUIRE(verify_error(g.graph) == "graph 'main': Add node 'add_1': output 0 %z does not name "
                                   "this node (output 0) as its producer");
  g.add->outputs[0]->producer_output = 0;

  g.relu->outputs[0]->name = std::string("x");  // now two values are called %x
  REQUIRE(verify_error(g.graph) == "graph 'main': Relu node defining %x: output 0 %x has the "
                                   "same name as another value");
  g.relu->outputs[0]->name = std::string("y");

  // A value that belongs to another graph is not defined here.
  Graph other;
  Value* foreign = other.add_input("w", {DType::f32, {4}});
  g.add->inputs[1] = foreign;
  REQUIRE(verify_error(g.graph) ==
          "graph 'main': Add node 'add_1': input 1 %w is not defined in the graph");
  g.add->inputs[1] = g.c;

  g.graph.add_output(foreign);
  REQUIRE(verify_error(g.graph) == "graph 'main': graph output 1 %w is not defined by an input, "
                                   "a constant or a node");
}
