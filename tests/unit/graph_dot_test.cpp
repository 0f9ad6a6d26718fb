// Unit tests for graph_to_dot, the Graphviz view of the graph IR. Course module 2.
#include "minic/ir/graph/dot.h"

#include "minic/ir/graph/verifier.h"
#include "minic/ops/shape_inference.h"

#include <catch2/catch.hpp>

#include <memory>

using namespace minic;

namespace {

// x: f32[2,8] → fused { s = Add(x, c); r = Relu(s) } → y = Mul(r, w) → out = Add(y, half)
// with c a small constant (8 elements, drawn), w a large one (16 elements, not drawn) and
// half a splat (drawn).
Graph graph_with_fused_node() {
  Graph graph;
  graph.name = "g";
  graph.opset = 17;
  const TensorType type{DType::f32, {2, 8}};
  Value* x = graph.add_input("x", type);
  Value* c = graph.add_constant(
      "c", Tensor::from_vector<float>({8}, {0.5f, 1, 2, 3, 4, 5, 6, -7.25f}));
  std::vector<float> weights(16);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<float>(i);
  Value* w = graph.add_constant("w", Tensor::from_vector<float>({2, 8}, weights));
  Value* half =
      graph.add_constant("half", Tensor::from_vector<float>({2, 8}, std::vector<float>(16, 0.5f)));

  auto body = std::make_unique<Graph>();
  body->opset = 17;
  Value* body_x = body->add_input("x", type);
  Value* body_c = body->add_input("c", {DType::f32, {8}});
  Node* add = body->add_node("Add", {body_x, body_c}, {"s"});
  Node* relu = body->add_node("Relu", {add->output(0)}, {"r"});
  body->add_output(relu->output(0));
  Node* fused = graph.add_fused_node(std::move(body), {x, c}, {"r"}, "add_relu");

  Node* mul = graph.add_node("Mul", {fused->output(0), w}, {"y"});
  Node* out = graph.add_node("Add", {mul->output(0), half}, {"out"});
  graph.add_output(out->output(0));
  infer_shapes(graph);
  verify_graph(graph);
  return graph;
}

}  // namespace

TEST_CASE("graph_to_dot draws a fused node as a cluster around its body", "[graph][dot]") {
  Graph graph = graph_with_fused_node();
  // Written out by hand from the rules in graph_dot.h: the body's nodes are n0_n0, n0_n1
  // inside cluster_n0; the edges into the group go from x and c straight to the body's
  // Add, and the edge out of it from the body's Relu to Mul; w (16 elements) is not
  // drawn, so Mul has one incoming edge. (Lines of DOT text run past 100 columns.)
  const std::string expected = R"(digraph "g" {
  rankdir=TB;
  graph [fontname="Helvetica"];
  node [fontname="Helvetica", fontsize=10];
  edge [fontname="Helvetica", fontsize=8, color="#555555"];
  in0 [label="%x\nf32[2,8]", shape=ellipse, style=filled, fillcolor="#d9ead3"];
  c0 [label="%c\nf32[8]\n[0.5, 1, 2, 3, 4, 5, 6, -7.25]", shape=note, fontsize=8, style=filled, fillcolor="#fff2cc"];
  c2 [label="%half\nf32[2,8]\nsplat 0.5", shape=note, fontsize=8, style=filled, fillcolor="#fff2cc"];
  subgraph cluster_n0 {
    label="Fused %r @add_relu";
    style="rounded,dashed";
    color="#3b6ea5";
    fontcolor="#3b6ea5";
    n0_n0 [label="Add\nf32[2,8]", shape=box, style="rounded,filled", fillcolor="#dae8fc"];
    n0_n1 [label="Relu\nf32[2,8]", shape=box, style="rounded,filled", fillcolor="#dae8fc"];
  }
  n1 [label="Mul\nf32[2,8]", shape=box, style="rounded,filled", fillcolor="#eeeeee"];
  n2 [label="Add\nf32[2,8]", shape=box, style="rounded,filled", fillcolor="#eeeeee"];
  out0 [label="%out\nf32[2,8]", shape=ellipse, style=filled, fillcolor="#fce5cd"];
  labelloc=t;
  label="g (opset 17)\n1 large constant not drawn";
  in0 -> n0_n0 [label="f32[2,8]"];
  c0 -> n0_n0 [label="f32[8]"];
  n0_n0 -> n0_n1 [label="f32[2,8]"];
  n0_n1 -> n1 [label="f32[2,8]"];
  n1 -> n2 [label="f32[2,8]"];
  c2 -> n2 [label="f32[2,8]"];
  n2 -> out0 [label="f32[2,8]"];
}
)";
  CHECK(graph_to_dot(graph) == expected);
  // Deterministic: the same graph gives the same text.
  CHECK(graph_to_dot(graph) == graph_to_dot(graph_with_fused_node()));
}

TEST_CASE("graph_to_dot draws large constants when the limit allows", "[graph][dot]") {
  Graph graph = graph_with_fused_node();
  GraphDotOptions options;
  options.max_constant_elements = 16;
  std::string dot = graph_to_dot(graph, options);
  CHECK(dot.find("c1 [label=\"%w\\nf32[2,8]\\n[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, "
                 "14, 15]\"") != std::string::npos);
  CHECK(dot.find("c1 -> n1 [label=\"f32[2,8]\"];") != std::string::npos);
  CHECK(dot.find("not drawn") == std::string::npos);
}

TEST_CASE("graph_to_dot escapes names and draws unused inputs and integer constants",
          "[graph][dot]") {
  Graph graph;
  graph.name = "a \"quoted\" graph";
  graph.opset = 13;
  Value* x = graph.add_input("in\\put", {DType::f32, {6}});
  graph.add_input("unused", {DType::boolean, {}});
  Value* shape = graph.add_constant("shape", Tensor::from_vector<int64_t>({2}, {2, -1}));
  Node* reshape = graph.add_node("Reshape", {x, shape}, {"y"});
  graph.add_output(reshape->output(0));
  infer_shapes(graph);
  std::string dot = graph_to_dot(graph);
  CHECK(dot.find("digraph \"a \\\"quoted\\\" graph\" {") == 0);
  CHECK(dot.find("in0 [label=\"%in\\\\put\\nf32[6]\"") != std::string::npos);
  CHECK(dot.find("in1 [label=\"%unused\\nbool[]\"") != std::string::npos);
  CHECK(dot.find("c0 [label=\"%shape\\ni64[2]\\n[2, -1]\"") != std::string::npos);
  CHECK(dot.find("n0 [label=\"Reshape\\nf32[2,3]\"") != std::string::npos);
  CHECK(dot.find("c0 -> n0 [label=\"i64[2]\"];") != std::string::npos);
  CHECK(dot.find("n0 -> out0 [label=\"f32[2,3]\"];") != std::string::npos);
}

TEST_CASE("graph_to_dot nests the cluster of a fused node inside a fused body",
          "[graph][dot]") {
  const TensorType type{DType::f32, {4}};
  auto inner = std::make_unique<Graph>();
  Value* inner_x = inner->add_input("x", type);
  inner->add_output(inner->add_node("Neg", {inner_x}, {"n"})->output(0));

  auto outer = std::make_unique<Graph>();
  Value* outer_x = outer->add_input("x", type);
  Node* inner_node = outer->add_fused_node(std::move(inner), {outer_x}, {"n"});
  outer->add_output(outer->add_node("Abs", {inner_node->output(0)}, {"a"})->output(0));

  Graph graph;
  graph.opset = 17;
  Value* x = graph.add_input("x", type);
  graph.add_output(graph.add_fused_node(std::move(outer), {x}, {"a"})->output(0));
  infer_shapes(graph);
  verify_graph(graph);

  std::string dot = graph_to_dot(graph);
  CHECK(dot.find("  subgraph cluster_n0 {\n") != std::string::npos);
  CHECK(dot.find("    subgraph cluster_n0_n0 {\n") != std::string::npos);
  CHECK(dot.find("      n0_n0_n0 [label=\"Neg\\nf32[4]\"") != std::string::npos);
  CHECK(dot.find("    n0_n1 [label=\"Abs\\nf32[4]\"") != std::string::npos);
  // The edges cross both cluster borders: x to Neg, Neg to Abs, Abs to the output.
  CHECK(dot.find("  in0 -> n0_n0_n0 [label=\"f32[4]\"];\n"
                 "  n0_n0_n0 -> n0_n1 [label=\"f32[4]\"];\n"
                 "  n0_n1 -> out0 [label=\"f32[4]\"];\n") != std::string::npos);
}
