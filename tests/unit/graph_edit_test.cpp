// Unit tests for the graph's editing methods: each keeps every users list exactly the uses
// (checked against a count taken from the node inputs, and by the verifier), refuses what
// would break an invariant, and, as a rewrite, leaves the graph's outputs unchanged on
// random inputs. Course module 2.
#include "minic/ir/graph/graph.h"
#include "pass_test_util.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>

using namespace minic;

namespace {

// The uses of each value, counted from the nodes' inputs: (value, reader) -> times read.
std::map<std::pair<const Value*, const Node*>, int> uses_from_inputs(const Graph& graph) {
  std::map<std::pair<const Value*, const Node*>, int> uses;
  for (const Node* node : graph.nodes()) {
    for (const Value* input : node->inputs()) {
      if (input) ++uses[{input, node}];
    }
  }
  return uses;
}

// The same count, taken from the values' users lists.
std::map<std::pair<const Value*, const Node*>, int> uses_from_users(const Graph& graph) {
  std::map<std::pair<const Value*, const Node*>, int> uses;
  for (const Value* value : graph.values()) {
    for (const Node* user : value->users()) ++uses[{value, user}];
  }
  return uses;
}

void require_users_exact(const Graph& graph) {
  REQUIRE(uses_from_users(graph) == uses_from_inputs(graph));
  REQUIRE_NOTHROW(verify_graph(graph));
}

void set_type(Value* value, TensorType type) {
  value->type = std::move(type);
  value->has_type = true;
}

// graph(%x: f32[4]) -> (%s) { %a = Neg(%x); %s = Add(%a, %a) }
struct TwiceRead {
  Graph graph;
  Value* x;
  Node* neg;
  Node* add;

  TwiceRead() {
    x = graph.add_input("x", {DType::f32, {4}});
    neg = graph.add_node("Neg", {x}, {"a"});
    set_type(neg->output(0), {DType::f32, {4}});
    add = graph.add_node("Add", {neg->output(0), neg->output(0)}, {"s"});
    set_type(add->output(0), {DType::f32, {4}});
    graph.add_output(add->output(0));
  }
};

}  // namespace

TEST_CASE("set_input moves exactly one use", "[graph]") {
  TwiceRead g;
  Value* a = g.neg->output(0);
  REQUIRE(a->users() == std::vector<Node*>{g.add, g.add});

  g.graph.set_input(g.add, 1, g.x);  // one of the two uses of %a moves to %x
  REQUIRE(g.add->inputs() == std::vector<Value*>{a, g.x});
  REQUIRE(a->users() == std::vector<Node*>{g.add});
  REQUIRE(g.x->users() == std::vector<Node*>{g.neg, g.add});
  require_users_exact(g.graph);

  g.graph.set_input(g.add, 1, g.x);  // the same value again: nothing changes
  REQUIRE(g.x->users().size() == 2);

  g.graph.set_input(g.add, 0, g.x);  // now %x is read twice by Add, %a by nobody
  REQUIRE(g.x->users() == std::vector<Node*>{g.neg, g.add, g.add});
  REQUIRE(a->users().empty());
  require_users_exact(g.graph);
}

TEST_CASE("set_input to null omits an input, and past the end extends the list", "[graph]") {
  Graph graph;
  Value* x = graph.add_input("x", {DType::f32, {4}});
  Value* low = graph.add_constant("low", Tensor::scalar<float>(0));
  Node* clip = graph.add_node("Clip", {x, low}, {"y"});
  set_type(clip->output(0), {DType::f32, {4}});
  graph.add_output(clip->output(0));

  graph.set_input(clip, 1, nullptr);
  REQUIRE(clip->inputs() == std::vector<Value*>{x, nullptr});
  REQUIRE(clip->input(1) == nullptr);
  REQUIRE_FALSE(clip->has_input(1));
  REQUIRE(low->users().empty());
  require_users_exact(graph);

  graph.set_input(clip, 2, low);  // index 2 of 2: the list grows
  REQUIRE(clip->inputs() == std::vector<Value*>{x, nullptr, low});
  REQUIRE(low->users() == std::vector<Node*>{clip});
  require_users_exact(graph);

  // input() past the end reads as omitted, like a trailing optional input left out.
  REQUIRE(clip->input(5) == nullptr);
  REQUIRE_FALSE(clip->has_input(5));
}

TEST_CASE("set_inputs replaces the whole input list", "[graph]") {
  TwiceRead g;
  Value* a = g.neg->output(0);
  g.graph.set_inputs(g.add, {g.x, a, nullptr});
  REQUIRE(g.add->inputs() == std::vector<Value*>{g.x, a, nullptr});
  REQUIRE(a->users() == std::vector<Node*>{g.add});
  REQUIRE(g.x->users() == std::vector<Node*>{g.neg, g.add});
  g.graph.set_inputs(g.add, {});
  REQUIRE(a->users().empty());
  REQUIRE(g.x->users() == std::vector<Node*>{g.neg});
  REQUIRE(uses_from_users(g.graph) == uses_from_inputs(g.graph));
}

TEST_CASE("replace_all_uses_with moves every use and the graph outputs", "[graph]") {
  TwiceRead g;
  Value* a = g.neg->output(0);
  Value* s = g.add->output(0);
  g.graph.add_output(a);  // %a is a graph output too, and Add reads it twice
  Node* relu = g.graph.add_node("Relu", {g.x}, {"r"});
  set_type(relu->output(0), {DType::f32, {4}});

  g.graph.replace_all_uses_with(a, relu->output(0));
  REQUIRE(a->users().empty());
  REQUIRE(relu->output(0)->users() == std::vector<Node*>{g.add, g.add});
  REQUIRE(g.add->inputs() == std::vector<Value*>{relu->output(0), relu->output(0)});
  REQUIRE(g.graph.outputs() == std::vector<Value*>{s, relu->output(0)});
  REQUIRE_FALSE(g.graph.is_graph_output(a));
  // The node list is no longer in order (Relu comes last); sorting restores it.
  g.graph.sort_topologically();
  require_users_exact(g.graph);

  g.graph.erase_node(g.neg);
  REQUIRE(g.x->users() == std::vector<Node*>{relu});
  require_users_exact(g.graph);
}

TEST_CASE("swap_producers makes two results trade places", "[graph]") {
  Graph graph;
  Value* x = graph.add_input("x", {DType::f32, {4}});
  Node* split = graph.add_node("Split", {x}, {"p", "q"});
  Node* neg = graph.add_node("Neg", {split->output(1)}, {"n"});
  Value* p = split->output(0);
  Value* n = neg->output(0);
  graph.swap_producers(p, n);
  REQUIRE(split->outputs() == std::vector<Value*>{n, split->output(1)});
  REQUIRE(neg->outputs() == std::vector<Value*>{p});
  REQUIRE((n->producer() == split && n->producer_output() == 0));
  REQUIRE((p->producer() == neg && p->producer_output() == 0));
  REQUIRE(split->output(1)->users() == std::vector<Node*>{neg});  // uses stay
}

TEST_CASE("erase_node refuses a node whose results are used, and changes nothing", "[graph]") {
  TwiceRead g;
  Value* a = g.neg->output(0);
  REQUIRE_THROWS_WITH(g.graph.erase_node(g.neg), Catch::Contains("internal error"));
  REQUIRE(g.graph.num_nodes() == 2);
  REQUIRE(a->producer() == g.neg);
  REQUIRE(g.x->users() == std::vector<Node*>{g.neg});
  require_users_exact(g.graph);
  // A graph output is a use too.
  REQUIRE_THROWS_WITH(g.graph.erase_node(g.add), Catch::Contains("internal error"));
  REQUIRE(g.graph.num_nodes() == 2);
  require_users_exact(g.graph);
}

TEST_CASE("rename_value keeps find_value right and refuses a taken name", "[graph]") {
  TwiceRead g;
  Value* a = g.neg->output(0);
  g.graph.rename_value(a, "negated");
  REQUIRE(a->name() == "negated");
  REQUIRE(g.graph.find_value("negated") == a);
  REQUIRE(g.graph.find_value("a") == nullptr);
  REQUIRE(g.graph.unique_name("a") == "a");  // the old name is free again

  REQUIRE_THROWS_WITH(g.graph.rename_value(a, "x"),
                      "graph 'main': cannot rename %negated to %x: the name is taken");
  REQUIRE(a->name() == "negated");
  REQUIRE(g.graph.find_value("x") == g.x);
  REQUIRE(g.graph.find_value("negated") == a);

  g.graph.rename_value(a, "negated");  // its own name: nothing changes
  REQUIRE(g.graph.find_value("negated") == a);
  REQUIRE_NOTHROW(verify_graph(g.graph));
}

TEST_CASE("random input edits keep every users list exact", "[graph]") {
  // A chain of binary nodes; each edit rewires one input to an earlier value, or omits it,
  // so the node order stays topological and the verifier can check the whole graph.
  std::mt19937_64 random(7);
  Graph graph;
  Value* x = graph.add_input("x", {DType::f32, {4}});
  Value* c = graph.add_constant("c", Tensor::from_vector<float>({4}, {1, 2, 3, 4}));
  std::vector<Value*> values = {x, c};
  std::vector<Node*> nodes;
  for (int k = 0; k < 8; ++k) {
    Node* node = graph.add_node("Add", {values[random() % values.size()], values.back()},
                                {fmt::format("v{}", k)});
    set_type(node->output(0), {DType::f32, {4}});
    nodes.push_back(node);
    values.push_back(node->output(0));
  }
  graph.add_output(values.back());
  for (int edit = 0; edit < 200; ++edit) {
    const size_t k = random() % nodes.size();
    const size_t slot = random() % 3;  // slot 2 grows the list, then is rewired in place
    // Values before node k: x, c and the results of nodes 0..k-1.
    Value* value = random() % 5 == 0 ? nullptr : values[random() % (k + 2)];
    graph.set_input(nodes[k], slot, value);
    INFO("edit " << edit);
    REQUIRE(uses_from_users(graph) == uses_from_inputs(graph));
  }
  // Any node may have three inputs now, which Add does not take: the verifier checks the
  // structure, not the op's arity.
  REQUIRE_NOTHROW(verify_graph(graph));
}

TEST_CASE("a rewrite through replace_all_uses_with keeps the outputs", "[graph]") {
  // Every Identity is bypassed and erased; an Identity that defines the graph output is
  // kept out of the way by replace_all_uses_with moving the output to its input.
  Graph graph = testing::graph_from_text(R"(
graph g(%x: f32[2,3], %y: f32[2,3]) -> (%out: f32[2,3]) opset 17 {
  %a = Identity(%x)
  %b = Mul(%a, %a)
  %c = Identity(%b)
  %d = Add(%c, %y)
  %out = Identity(%d)
  return %out
})");
  testing::check_pass_preserves_outputs(graph, [](Graph& g) {
    for (Node* node : g.nodes()) {
      if (node->op != "Identity") continue;
      g.replace_all_uses_with(node->output(0), node->input(0));
      g.erase_node(node);
    }
    g.remove_unused_values();
  });
  REQUIRE(testing::count_op(graph, "Identity") == 0);
  REQUIRE(graph.outputs()[0]->name() == "d");
  require_users_exact(graph);
}
