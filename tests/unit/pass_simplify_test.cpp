// The pass simplify: every rule must keep the graph's outputs (the interpreter on random
// inputs, before and after) and remove the node it promises to; the cases that must not
// fire must leave the graph as it is; graph outputs keep their names. Course module 2.
#include "../../src/passes/graph/graph_edit.h"
#include "pass_test_util.h"

#include "minic/passes/graph/simplify.h"

namespace minic {
namespace {

using testing::check_pass_preserves_outputs;
using testing::graph_from_text;
using testing::PassCase;
using testing::run_case;

// Each case wraps one rule's pattern between a Relu (so the rule's input is a node result)
// and a Neg (so its result is read), unless the rule needs the graph input itself.
std::string around(const std::string& input_type, const std::string& output_type,
                   const std::string& body, int opset = 17) {
  return fmt::format(
      "graph g(%x: {0}) -> (%y: {1}) opset {2} {{\n  %r = Relu(%x)\n{3}  %y = Neg(%s)\n"
      "  return %y\n}}",
      input_type, output_type, opset, body);
}

TEST_CASE("simplify: Identity, inference-time Dropout and a Cast to the same type go",
          "[passes][simplify]") {
  const std::vector<PassCase> cases = {
      {"Identity(x) → x", around("f32[2,3]", "f32[2,3]", "  %s = Identity(%r)\n"), 2,
       "Identity", 0},
      {"Dropout(x) → x (opset 13, no training_mode)",
       around("f32[2,3]", "f32[2,3]", "  %s = Dropout(%r)\n", 13), 2, "Dropout", 0},
      {"Dropout(x) → x (training_mode a constant false, mask unread)",
       around("f32[2,3]", "f32[2,3]",
              "  %t = const bool[] dense<[false]>\n  %p = const f32[] dense<[0.3]>\n"
              "  %s, %m = Dropout(%r, %p, %t)\n",
              13),
       2, "Dropout", 0},
      {"Dropout(x) → x (opset 10)", around("f32[2,3]", "f32[2,3]", "  %s = Dropout(%r)\n", 10),
       2, "Dropout", 0},
      {"Cast to the same type → x", around("f32[2,3]", "f32[2,3]", "  %s = Cast(%r) {to=1}\n"),
       2, "Cast", 0},
  };
  for (const PassCase& test : cases) run_case(test, simplify);
}

TEST_CASE("simplify: arithmetic with a neutral constant goes", "[passes][simplify]") {
  const std::vector<PassCase> cases = {
      {"x * 1 → x", around("f32[2,3]", "f32[2,3]",
                           "  %c = const f32[3] splat<1.0>\n  %s = Mul(%r, %c)\n"),
       2, "Mul", 0},
      {"1 * x → x", around("f32[2,3]", "f32[2,3]",
                           "  %c = const f32[] dense<[1.0]>\n  %s = Mul(%c, %r)\n"),
       2, "Mul", 0},
      {"x + 0 → x", around("f32[2,3]", "f32[2,3]",
                           "  %c = const f32[1,1] dense<[0.0]>\n  %s = Add(%r, %c)\n"),
       2, "Add", 0},
      {"0 + x → x", around("f32[2,3]", "f32[2,3]",
                           "  %c = const f32[2,3] splat<-0.0>\n  %s = Add(%c, %r)\n"),
       2, "Add", 0},
      {"x - 0 → x", around("f32[2,3]", "f32[2,3]",
                           "  %c = const f32[] dense<[0.0]>\n  %s = Sub(%r, %c)\n"),
       2, "Sub", 0},
      {"x / 1 → x", around("f32[2,3]", "f32[2,3]",
                           "  %c = const f32[] dense<[1.0]>\n  %s = Div(%r, %c)\n"),
       2, "Div", 0},
  };
  for (const PassCase& test : cases) run_case(test, simplify);
}

TEST_CASE("simplify: Reshape, Flatten, Squeeze and Unsqueeze that cancel go or merge",
          "[passes][simplify]") {
  const std::vector<PassCase> cases = {
      {"Reshape to the same shape → x",
       around("f32[2,3]", "f32[2,3]",
              "  %c = const i64[2] dense<[-1, 3]>\n  %s = Reshape(%r, %c)\n"),
       2, "Reshape", 0},
      {"Reshape(Reshape(x)) → Reshape(x)",
       around("f32[2,3,4]", "f32[6,2,2]",
              "  %c = const i64[2] dense<[6, 4]>\n  %d = const i64[3] dense<[0, 2, -1]>\n"
              "  %t = Reshape(%r, %c)\n  %s = Reshape(%t, %d)\n"),
       3, "Reshape", 1},
      {"Reshape(Reshape(x)) → x",
       around("f32[2,3,4]", "f32[2,3,4]",
              "  %c = const i64[2] dense<[6, 4]>\n  %d = const i64[3] dense<[2, 3, 4]>\n"
              "  %t = Reshape(%r, %c)\n  %s = Reshape(%t, %d)\n"),
       2, "Reshape", 0},
      {"Reshape(Flatten(x)) → Reshape(x) (opset 4: the target is an attribute)",
       around("f32[2,3,4]", "f32[6,2,2]",
              "  %t = Flatten(%r) {axis=2}\n  %s = Reshape(%t) {shape=[0,2,-1]}\n", 4),
       3, "Flatten", 0},
      {"Squeeze(Unsqueeze(x)) → x (opset 13: axes inputs)",
       around("f32[2,3]", "f32[2,3]",
              "  %a = const i64[2] dense<[0, -1]>\n  %t = Unsqueeze(%r, %a)\n"
              "  %s = Squeeze(%t, %a)\n"),
       2, "Squeeze", 0},
      {"Unsqueeze(Squeeze(x)) → x (opset 11: axes attributes)",
       around("f32[2,1,3]", "f32[2,1,3]",
              "  %t = Squeeze(%r) {axes=[1]}\n  %s = Unsqueeze(%t) {axes=[1]}\n", 11),
       2, "Unsqueeze", 0},
      {"Squeeze that removes nothing → x", around("f32[2,3]", "f32[2,3]", "  %s = Squeeze(%r)\n"),
       2, "Squeeze", 0},
      {"Flatten of a matrix → x", around("f32[2,3]", "f32[2,3]", "  %s = Flatten(%r)\n"), 2,
       "Flatten", 0},
  };
  for (const PassCase& test : cases) run_case(test, simplify);
}

TEST_CASE("simplify: Transpose, Expand, Concat, Pad and Slice that change nothing go",
          "[passes][simplify]") {
  const std::vector<PassCase> cases = {
      {"Transpose with the identity perm → x",
       around("f32[2,3,4]", "f32[2,3,4]", "  %s = Transpose(%r) {perm=[0,1,2]}\n"), 2,
       "Transpose", 0},
      {"Transpose(Transpose(x)) → Transpose(x)",
       around("f32[2,3,4]", "f32[3,4,2]",
              "  %t = Transpose(%r) {perm=[2,0,1]}\n  %s = Transpose(%t) {perm=[2,0,1]}\n"),
       3, "Transpose", 1},
      {"Transpose(Transpose(x)) → x",
       around("f32[2,3,4]", "f32[2,3,4]",
              "  %t = Transpose(%r) {perm=[2,0,1]}\n  %s = Transpose(%t) {perm=[1,2,0]}\n"),
       2, "Transpose", 0},
      {"Expand to the same shape → x",
       around("f32[2,3]", "f32[2,3]",
              "  %c = const i64[2] dense<[1, 3]>\n  %s = Expand(%r, %c)\n"),
       2, "Expand", 0},
      {"Concat of one input → x", around("f32[2,3]", "f32[2,3]", "  %s = Concat(%r) {axis=1}\n"),
       2, "Concat", 0},
      {"Pad by zeros → x",
       around("f32[2,3]", "f32[2,3]",
              "  %c = const i64[4] splat<0>\n  %s = Pad(%r, %c) {mode=\"reflect\"}\n"),
       2, "Pad", 0},
      {"Slice of everything → x",
       around("f32[2,3]", "f32[2,3]",
              "  %b = const i64[2] dense<[0, -5]>\n  %e = const i64[2] dense<[9, 3]>\n"
              "  %s = Slice(%r, %b, %e)\n"),
       2, "Slice", 0},
  };
  for (const PassCase& test : cases) run_case(test, simplify);
}

TEST_CASE("simplify: rules that must not fire", "[passes][simplify]") {
  const std::vector<PassCase> cases = {
      {"x * 1 that broadcasts x to a larger shape",
       around("f32[3,1]", "f32[3,3]", "  %c = const f32[1,3] splat<1.0>\n  %s = Mul(%r, %c)\n"),
       3, "Mul", 1},
      {"x + 0 that adds an axis",
       around("f32[3]", "f32[2,3]", "  %c = const f32[2,1] splat<0.0>\n  %s = Add(%r, %c)\n"), 3,
       "Add", 1},
      {"x * c with c not all 1",
       around("f32[2,2]", "f32[2,2]",
              "  %c = const f32[2] dense<[1.0, 1.5]>\n  %s = Mul(%r, %c)\n"),
       3, "Mul", 1},
      {"0 - x and 1 / x", around("f32[2,2]", "f32[2,2]",
                                 "  %z = const f32[] dense<[0.0]>\n  %o = const f32[] "
                                 "dense<[1.0]>\n  %t = Sub(%z, %r)\n  %s = Div(%o, %t)\n"),
       4, "Div", 1},
      {"Cast to another type and back",
       around("f32[2,2]", "f32[2,2]", "  %t = Cast(%r) {to=10}\n  %s = Cast(%t) {to=1}\n"), 4,
       "Cast", 2},
      {"Transposes that do not cancel",
       around("f32[2,3,4]", "f32[3,4,2]", "  %s = Transpose(%r) {perm=[1,2,0]}\n"), 3,
       "Transpose", 1},
      {"Slice that reverses an axis",
       around("f32[2,3]", "f32[2,3]",
              "  %b = const i64[1] dense<[-1]>\n  %e = const i64[1] dense<[-9]>\n"
              "  %a = const i64[1] dense<[1]>\n  %t = const i64[1] dense<[-1]>\n"
              "  %s = Slice(%r, %b, %e, %a, %t)\n"),
       3, "Slice", 1},
      {"Pad that shifts (-1 before, +1 after)",
       around("f32[2,3]", "f32[2,3]",
              "  %c = const i64[4] dense<[0, -1, 0, 1]>\n  %s = Pad(%r, %c)\n"),
       3, "Pad", 1},
      {"Dropout whose mask is read",
       "graph g(%x: f32[2,3]) -> (%y: f32[2,3], %m: bool[2,3]) opset 13 {\n"
       "  %y, %m = Dropout(%x)\n  return %y, %m\n}",
       1, "Dropout", 1},
  };
  for (const PassCase& test : cases) run_case(test, simplify);
}

TEST_CASE("simplify keeps the names of graph outputs", "[passes][simplify]") {
  Graph graph = graph_from_text(R"(
graph g(%x: f32[2,3]) -> (%logits: f32[2,3], %same: f32[2,3]) opset 17 {
  %a = Relu(%x)
  %logits = Identity(%a)
  %same = Identity(%x)
  return %logits, %same
})");
  check_pass_preserves_outputs(graph, simplify);
  REQUIRE(graph.num_nodes() == 1);
  // The Relu now defines %logits; an Identity of a graph input leaves the input as output.
  CHECK(graph.outputs()[0]->name() == "logits");
  CHECK(graph.outputs()[0]->producer()->op == "Relu");
  CHECK(graph.outputs()[1] == graph.inputs()[0]);
  CHECK(graph.find_value("a") == nullptr);
}

TEST_CASE("edit::replace_node hands a graph output's name to the replacement's producer",
          "[passes][simplify]") {
  Graph graph = graph_from_text(R"(
graph g(%x: f32[4]) -> (%y: f32[4], %z: f32[4]) opset 17 {
  %a = Relu(%x)
  %b = Neg(%a)
  %y = Identity(%a)
  %z = Abs(%y)
  return %y, %z
})");
  Node* identity = graph.find_value("y")->producer();
  edit::replace_node(graph, identity, identity->output(0), graph.find_value("a"));
  verify_graph(graph);
  Value* y = graph.find_value("y");
  REQUIRE(y->producer()->op == "Relu");
  // Every reader of %a and of %y now reads %y.
  CHECK(y->users().size() == 2);
  CHECK(graph.find_value("b")->producer()->input(0) == y);
  CHECK(graph.find_value("z")->producer()->input(0) == y);
  CHECK(graph.find_value("a")->users().empty());
  CHECK(graph.find_value("a")->producer() == nullptr);
}

}  // namespace
}  // namespace minic
