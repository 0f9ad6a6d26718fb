// Unit tests for the control-flow ops If, Loop and Scan (src/ops/control_flow.cpp,
// src/ops/scan.cpp) and their bodies (src/ops/subgraph.cpp): graphs written in the text
// form, typed by shape inference, run by the interpreter and compared with results worked
// by hand; the text form of graph attributes round-trips. Course module 2.
#include "minic/ir/graph/text.h"
#include "minic/ir/graph/verifier.h"
#include "ops_test_util.h"

using namespace minic;
using minic::test::floats;
using minic::test::int64s;
using minic::test::require_values;

namespace {

// The text, parsed, typed (with `given` as the values of graph inputs a shape
// rule may need) and verified; it prints back unchanged before typing.
Graph parse_and_type(const std::string& text, std::map<std::string, Tensor> given = {}) {
  Graph graph = parse_graph(text, "test.mgraph");
  REQUIRE(print_graph(graph) == text);
  ShapeInferenceOptions options;
  options.input_value = [given](const Value& input) -> std::optional<Tensor> {
    auto it = given.find(input.name());
    if (it == given.end()) return std::nullopt;
    return it->second;
  };
  infer_shapes(graph, options);
  verify_graph(graph);
  return graph;
}

Tensor bools(Shape shape, std::vector<bool> values) {
  return Tensor::from_vector<bool>(std::move(shape), values);
}

const char* kIfRelu = R"(graph main(%c: bool[], %x: f32[3]) -> (%y: f32[3]) opset 17 {
  %y = If(%c, %x) {captures=1, else_branch=graph e(%x: ?) -> (%o: ?) {
      %o = Neg(%x) : ?
      return %o
    }, then_branch=graph t(%x: ?) -> (%o: ?) {
      %o = Relu(%x) : ?
      return %o
    }} : f32[3]
  return %y
}
)";

}  // namespace

TEST_CASE("If runs the branch its condition picks, reading an outer value", "[ops][control]") {
  Graph graph = parse_and_type(kIfRelu);
  // Both branches give f32[3], so the condition stays an input.
  REQUIRE(graph.inputs().size() == 2);
  Tensor x = floats({3}, {-1, 0, 2});
  require_values(interpret(graph, {bools({}, {true}), x})[0], {3}, {0, 0, 2});
  require_values(interpret(graph, {bools({}, {false}), x})[0], {3}, {1, 0, -2});
}

TEST_CASE("If whose branches differ in shape is specialised to its condition", "[ops][control]") {
  const char* text = R"(graph main(%c: bool[], %x: f32[4]) -> (%y: ?) opset 17 {
  %s = const i64[2] splat<2>
  %y = If(%c, %x, %s) {captures=2, else_branch=graph e(%x: ?, %s: ?) -> (%x: ?) {
      return %x
    }, then_branch=graph t(%x: ?, %s: ?) -> (%o: ?) {
      %o, %p = Split(%x, %s) : ?, ?
      return %o
    }} : ?
  return %y
}
)";
  SECTION("the condition given: the branch it picks types the output") {
    Graph graph = parse_and_type(text, {{"c", bools({}, {true})}});
    REQUIRE(graph.inputs().size() == 1);  // %c became a constant
    require_values(interpret(graph, {floats({4}, {1, 2, 3, 4})})[0], {2}, {1, 2});
  }
  SECTION("the condition unknown: an error saying the shape depends on it") {
    Graph graph = parse_graph(text);
    REQUIRE_THROWS_WITH(infer_shapes(graph),
                        Catch::Contains("If node defining %y") &&
                            Catch::Contains("depends on the value of input 0 (%c)"));
  }
}

TEST_CASE("Loop with a trip count carries a sum and stacks each step", "[ops][control]") {
  // y = 1; for i < M: y = y + i; scan_i = y * 2.
  const char* text = R"(graph main(%m: i64[], %y0: f32[2]) -> (%y: f32[2], %s: ?) opset 17 {
  %two = const f32[] dense<[2.0]>
  %y, %s = Loop(%m, _, %y0, %two) {body=graph loop(%i: ?, %c: ?, %y: ?, %two: ?) -> (%c: ?, %n: ?, %d: ?) {
      %f = Cast(%i) {to=1} : ?
      %n = Add(%y, %f) : ?
      %d = Mul(%n, %two) : ?
      return %c, %n, %d
    }, captures=1} : f32[2], ?
  return %y, %s
}
)";
  Graph graph = parse_and_type(text, {{"m", int64s({}, {3})}});
  REQUIRE(graph.outputs()[1]->type == TensorType{DType::f32, {3, 2}});
  std::vector<Tensor> out = interpret(graph, {floats({2}, {1, 10})});
  require_values(out[0], {2}, {4, 13});
  require_values(out[1], {3, 2}, {2, 20, 4, 22, 8, 26});
}

TEST_CASE("Loop whose condition comes from its body runs while it holds", "[ops][control]") {
  // while (x < limit) x = x * 2, with each x kept: how many rows depends on the values.
  const char* text = R"(graph main(%x0: f32[], %limit: f32[]) -> (%x: f32[], %xs: ?) opset 17 {
  %two = const f32[] dense<[2.0]>
  %go = Less(%x0, %limit) : bool[]
  %x, %xs = Loop(_, %go, %x0, %limit, %two) {body=graph loop(%i: ?, %c: ?, %x: ?, %limit: ?, %two: ?) -> (%more: ?, %next: ?, %next: ?) {
      %next = Mul(%x, %two) : ?
      %more = Less(%next, %limit) : ?
      return %more, %next, %next
    }, captures=2} : f32[], ?
  return %x, %xs
}
)";
  Graph graph = parse_and_type(text, {{"x0", floats({}, {1})}, {"limit", floats({}, {20})}});
  REQUIRE(graph.inputs().empty());  // the row count came from both inputs' values
  std::vector<Tensor> out = interpret(graph, {});
  require_values(out[0], {}, {32});
  require_values(out[1], {5}, {2, 4, 8, 16, 32});
}

TEST_CASE("Loop whose body slices at the iteration number is typed for each iteration",
          "[ops][control]") {
  // The Slice's bounds are the iteration number, so its shape rule needs that value: the
  // body is typed afresh in every iteration (BodyRunner).
  const char* text = R"(graph main(%m: i64[], %x: f32[4]) -> (%acc: f32[1]) opset 17 {
  %zero = const f32[1] dense<[0.0]>
  %acc = Loop(%m, _, %zero, %x) {body=graph loop(%i: ?, %c: ?, %a: ?, %x: ?) -> (%c: ?, %n: ?) {
      %one = const i64[] dense<[1]>
      %axes = const i64[1] dense<[0]>
      %e = Add(%i, %one) : ?
      %s0 = Unsqueeze(%i, %axes) : ?
      %s1 = Unsqueeze(%e, %axes) : ?
      %r = Slice(%x, %s0, %s1) : ?
      %n = Add(%a, %r) : ?
      return %c, %n
    }, captures=1} : f32[1]
  return %acc
}
)";
  Graph graph = parse_and_type(text);
  Tensor x = floats({4}, {1, 2, 3, 4});
  require_values(interpret(graph, {int64s({}, {3}), x})[0], {1}, {6});
  require_values(interpret(graph, {int64s({}, {0}), x})[0], {1}, {0});
}

TEST_CASE("Loop refuses a carried value that changes shape, and a loop with no end",
          "[ops][control]") {
  const char* grows = R"(graph main(%m: i64[], %x: f32[1]) -> (%y: ?) opset 17 {
  %y = Loop(%m, _, %x) {body=graph loop(%i: ?, %c: ?, %x: ?) -> (%c: ?, %y: ?) {
      %y = Concat(%x, %x) {axis=0} : ?
      return %c, %y
    }} : ?
  return %y
}
)";
  Graph graph = parse_graph(grows);
  REQUIRE_THROWS_WITH(infer_shapes(graph), Catch::Contains("Loop node defining %y") &&
                                               Catch::Contains("carried value 0 from f32[1]"));
  const char* endless = R"(graph main(%x: f32[1]) -> (%y: ?) opset 17 {
  %y = Loop(_, _, %x) {body=graph loop(%i: ?, %c: ?, %x: ?) -> (%c: ?, %x: ?) {
      return %c, %x
    }} : ?
  return %y
}
)";
  Graph never = parse_graph(endless);
  infer_shapes(never);
  REQUIRE_THROWS_WITH(interpret(never, {floats({1}, {1})}),
                      Catch::Contains("neither a trip count (M) nor a condition"));
}

TEST_CASE("Scan runs forward and backward along the axes it is given", "[ops][control]") {
  // A running sum over the columns of x (axis 1), read from the right, stacked as rows
  // (output axis 0) in reverse order.
  const char* text = R"(graph main(%s0: f32[2], %x: f32[2,3]) -> (%s: ?, %ys: ?) opset 17 {
  %s, %ys = Scan(%s0, %x) {body=graph step(%s: ?, %col: ?) -> (%n: ?, %n: ?) {
      %n = Add(%s, %col) : ?
      return %n, %n
    }, num_scan_inputs=1, scan_input_axes=[1], scan_input_directions=[1], scan_output_directions=[1]} : ?, ?
  return %s, %ys
}
)";
  Graph graph = parse_and_type(text);
  REQUIRE(graph.outputs()[1]->type == TensorType{DType::f32, {3, 2}});
  // x = [[1,2,3],[4,5,6]]: columns from the right: [3,6], [2,5], [1,4].
  std::vector<Tensor> out =
      interpret(graph, {floats({2}, {0, 0}), floats({2, 3}, {1, 2, 3, 4, 5, 6})});
  require_values(out[0], {2}, {6, 15});
  // Running sums [3,6], [5,11], [6,15], stacked last first.
  require_values(out[1], {3, 2}, {6, 15, 5, 11, 3, 6});
}

TEST_CASE("Scan at opset 8 scans each batch element on its own", "[ops][control]") {
  const char* text = R"(graph main(%s0: f32[2,1], %x: f32[2,3,1]) -> (%s: ?, %ys: ?) opset 8 {
  %s, %ys = Scan(_, %s0, %x) {body=graph step(%s: ?, %v: ?) -> (%n: ?, %n: ?) {
      %n = Add(%s, %v) : ?
      return %n, %n
    }, num_scan_inputs=1} : ?, ?
  return %s, %ys
}
)";
  Graph graph = parse_and_type(text);
  REQUIRE(graph.outputs()[1]->type == TensorType{DType::f32, {2, 3, 1}});
  std::vector<Tensor> out =
      interpret(graph, {floats({2, 1}, {0, 10}), floats({2, 3, 1}, {1, 2, 3, 4, 5, 6})});
  require_values(out[0], {2, 1}, {6, 25});
  require_values(out[1], {2, 3, 1}, {1, 3, 6, 14, 19, 25});
}

TEST_CASE("A body nested in a body reads a value from two scopes out", "[ops][control]") {
  // Loop over i < M: acc += (i is odd ? x : -x), the If inside reading %x from the graph.
  const char* text = R"(graph main(%m: i64[], %x: f32[2]) -> (%acc: f32[2]) opset 17 {
  %zero = const f32[2] splat<0.0>
  %acc = Loop(%m, _, %zero, %x) {body=graph loop(%i: ?, %c: ?, %a: ?, %x: ?) -> (%c: ?, %n: ?) {
      %two = const i64[] dense<[2]>
      %one = const i64[] dense<[1]>
      %r = Mod(%i, %two) : ?
      %odd = Equal(%r, %one) : ?
      %t = If(%odd, %x) {captures=1, else_branch=graph e(%x: ?) -> (%nx: ?) {
          %nx = Neg(%x) : ?
          return %nx
        }, then_branch=graph t(%x: ?) -> (%x: ?) {
          return %x
        }} : ?
      %n = Add(%a, %t) : ?
      return %c, %n
    }, captures=1} : f32[2]
  return %acc
}
)";
  Graph graph = parse_and_type(text);
  // i = 0..4: -x + x - x + x - x = -x.
  require_values(interpret(graph, {int64s({}, {5}), floats({2}, {1, 3})})[0], {2}, {-1, -3});
}

TEST_CASE("Graph attributes print as nested graphs and parse back", "[ops][control][text]") {
  Graph graph = parse_graph(kIfRelu);
  std::string printed = print_graph(graph);
  REQUIRE(printed == kIfRelu);
  // A body value used before its definition is an error naming the line.
  std::string broken = printed;
  broken.replace(broken.find("%o = Neg(%x)"), 12, "%o = Neg(%q)");
  REQUIRE_THROWS_WITH(parse_graph(broken, "b.mgraph"),
                      Catch::StartsWith("b.mgraph:3:") && Catch::Contains("unknown value %q"));
}
