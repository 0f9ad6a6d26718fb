// Unit tests for the graph IR data structures. Course module 2.
#include "minic/ir/graph/graph.h"

#include <catch2/catch.hpp>

using namespace minic;

TEST_CASE("a node's outputs know their producer and inputs their users", "[graph]") {
  Graph graph;
  Value* x = graph.add_input("x", {DType::f32, {2, 3}});
  Node* relu = graph.add_node("Relu", {x}, {"y"});
  graph.add_output(relu->output(0));
  REQUIRE(relu->output(0)->producer() == relu);
  REQUIRE(x->users() == std::vector<Node*>{relu});
  REQUIRE(graph.find_value("y") == relu->output(0));
}

TEST_CASE("replace_all_uses_with moves users and graph outputs", "[graph]") {
  Graph graph;
  Value* x = graph.add_input("x", {DType::f32, {4}});
  Node* a = graph.add_node("Identity", {x}, {"a"});
  Node* b = graph.add_node("Add", {a->output(0), a->output(0)}, {"b"});
  graph.add_output(b->output(0));
  graph.replace_all_uses_with(a->output(0), x);
  REQUIRE(b->input(0) == x);
  REQUIRE(b->input(1) == x);
  REQUIRE(a->output(0)->users().empty());
  graph.erase_node(a);
  REQUIRE(graph.num_nodes() == 1);
  REQUIRE(x->users().size() == 2);
}

TEST_CASE("sort_topologically orders producers first and finds cycles", "[graph]") {
  Graph graph;
  Value* x = graph.add_input("x", {DType::f32, {4}});
  // Build b before a, then make b read a's output.
  Node* b = graph.add_node("Relu", {x}, {"b"});
  Node* a = graph.add_node("Neg", {x}, {"a"});
  graph.set_input(b, 0, a->output(0));
  graph.sort_topologically();
  REQUIRE(graph.nodes() == std::vector<Node*>{a, b});

  graph.set_input(a, 0, b->output(0));
  REQUIRE_THROWS_WITH(graph.sort_topologically(), Catch::Contains("cycle"));
}

TEST_CASE("names are unique", "[graph]") {
  Graph graph;
  graph.add_input("x", {DType::f32, {1}});
  REQUIRE_THROWS_AS(graph.add_input("x", {DType::f32, {1}}), Error);
  REQUIRE(graph.unique_name("x") == "x_1");
}

TEST_CASE("float16 and bfloat16 round trip through float", "[dtype]") {
  for (float value : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f}) {
    REQUIRE(static_cast<float>(Half(value)) == value);
  }
  REQUIRE(static_cast<float>(Half(1e6f)) == std::numeric_limits<float>::infinity());
  for (float value : {0.0f, 1.0f, -2.5f, 3.140625f}) {
    REQUIRE(static_cast<float>(BFloat16(value)) == value);
  }
}

TEST_CASE("tensors check their shapes", "[tensor]") {
  REQUIRE_THROWS_WITH(Tensor(DType::f32, {2, -1}), Catch::Contains("negative dimension"));
  REQUIRE_THROWS_WITH(Tensor(DType::f32, {1 << 20, 1 << 20, 1 << 20}),
                      Catch::Contains("absurdly large"));
  Tensor t = Tensor::from_vector<float>({2}, {1.5f, -2.0f});
  REQUIRE(t.cast(DType::i32).to_int64_vector() == std::vector<int64_t>{1, -2});
}
