// Unit tests for Shrink and Swish (src/ops/activation.cpp): small cases worked out by hand,
// the errors for bad inputs and attributes, and their compute rules lowered and run against
// the reference kernels on random inputs. Course modules 2 and 3.
#include "lower_test_util.h"
#include "ops_test_util.h"

#include "minic/ir/graph/text.h"

using namespace minic;
using namespace minic::test;

namespace {

// Lowers every node of the graph in `text` and compares it with its reference kernel on
// random inputs (lower_test_util.h).
void require_rules_agree(const std::string& text) {
  Graph graph = parse_graph(text);
  infer_shapes(graph);
  testing::require_kernels_agree(graph);
}

}  // namespace

// --- Shrink ------------------------------------------------------------------------------------

TEST_CASE("Shrink zeroes [-lambd, lambd] and moves the rest toward 0 by bias",
          "[ops][shrink]") {
  // lambd 1.5, bias 0.5: -2 < -1.5 -> -2 + 0.5; -1, 0, 1 -> 0; 2 > 1.5 -> 2 - 0.5.
  OneNode g(9, "Shrink", {{DType::f32, {5}}}, {{"lambd", 1.5f}, {"bias", 0.5f}});
  require_values(g.run({floats({5}, {-2, -1, 0, 1, 2})}), {5}, {-1.5, 0, 0, 0, 1.5});
}

TEST_CASE("Shrink takes integers and keeps their type", "[ops][shrink]") {
  // Default lambd 0.5, bias 1: -3 -> -2, 0 -> 0, 3 -> 2.
  OneNode g(9, "Shrink", {{DType::i64, {3}}}, {{"bias", 1.0f}});
  Tensor y = g.run({int64s({3}, {-3, 0, 3})});
  REQUIRE(y.dtype() == DType::i64);
  require_values(y, {3}, {-2, 0, 2});
}

TEST_CASE("Shrink rejects bool", "[ops][shrink]") {
  OneNode bools(9, "Shrink", {{DType::boolean, {2}}});
  REQUIRE_THROWS_WITH(bools.infer(), Catch::Contains("takes a numeric tensor"));
}

// --- Swish -------------------------------------------------------------------------------------

TEST_CASE("Swish is x * sigmoid(alpha * x)", "[ops][swish]") {
  // alpha 1: swish(1) = 1 / (1 + e^-1) = 0.731059, swish(-1) = -1 / (1 + e) = -0.268941.
  OneNode g(24, "Swish", {{DType::f32, {3}}});
  require_values(g.run({floats({3}, {0, 1, -1})}), {3}, {0, 0.731059, -0.268941});
  // alpha 2: swish(1) = 1 / (1 + e^-2) = 0.880797.
  OneNode twice(24, "Swish", {{DType::f32, {1}}}, {{"alpha", 2.0f}});
  require_values(twice.run({floats({1}, {1})}), {1}, {0.880797});
}

TEST_CASE("Swish rejects integers", "[ops][swish]") {
  OneNode ints(24, "Swish", {{DType::i32, {2}}});
  REQUIRE_THROWS_WITH(ints.infer(), Catch::Contains("takes a floating-point tensor"));
}

// --- compute rules -----------------------------------------------------------------------------

TEST_CASE("the Shrink and Swish rules agree with their kernels", "[ops][shrink][swish]") {
  require_rules_agree(R"(
graph activations(%x: f32[3,4], %h: f16[5], %i: i32[6]) -> (%s: f32[3,4], %t: f16[5],
                  %u: i32[6], %w: f32[3,4], %v: f16[5]) opset 24 {
  %s = Shrink(%x) {lambd=0.7, bias=0.25}
  %t = Shrink(%h)
  %u = Shrink(%i) {lambd=1.0, bias=0.5}
  %w = Swish(%x) {alpha=1.5}
  %v = Swish(%h)
  return %s, %t, %u, %w, %v
}
)");
}
