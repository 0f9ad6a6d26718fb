// Unit tests for the scatter ops: ScatterElements, Scatter, ScatterND and TensorScatter.
// Small graphs whose results are worked out by hand in the comments. Course module 2.
#include "ops_test_util.h"

#include <string>

using namespace minic;
using namespace minic::test;

namespace {

const TensorType k2x3{DType::f32, {2, 3}};
const Tensor kData2x3 = floats({2, 3}, {1, 2, 3, 4, 5, 6});

}  // namespace

// --- ScatterElements and Scatter ----------------------------------------------------------------

TEST_CASE("ScatterElements along axis 1 overwrites one element a row", "[ops][scatterelements]") {
  // indices [[2], [0]], updates [[10], [20]]: out[0][2] = 10, out[1][0] = 20.
  OneNode g(18, "ScatterElements", {k2x3}, {{"axis", int64_t{1}}},
            {int64s({2, 1}, {2, 0}), floats({2, 1}, {10, 20})});
  require_values(g.run({kData2x3}), {2, 3}, {1, 2, 10, 20, 5, 6});
}

TEST_CASE("ScatterElements along axis 0 with a negative index", "[ops][scatterelements]") {
  // indices [[-1, 0, 1]] on axis 0: column 0 goes to row -1 = 1, column 1 to row 0,
  // column 2 to row 1.
  OneNode g(18, "ScatterElements", {k2x3}, {},
            {int64s({1, 3}, {-1, 0, 1}), floats({1, 3}, {7, 8, 9})});
  require_values(g.run({kData2x3}), {2, 3}, {1, 8, 3, 7, 5, 9});
}

TEST_CASE("ScatterElements reductions combine with the data and with each other",
          "[ops][scatterelements]") {
  // Both updates go to out[0][1] = 2: add 2 + 3 + 4 = 9, mul 2 * 3 * 4 = 24,
  // max(2, 3, 4) = 4, min(2, 3, 4) = 2.
  const std::vector<std::pair<std::string, double>> cases = {
      {"add", 9}, {"mul", 24}, {"max", 4}, {"min", 2}};
  for (const auto& [reduction, expected] : cases) {
    INFO(reduction);
    OneNode g(18, "ScatterElements", {k2x3}, {{"axis", int64_t{1}}, {"reduction", reduction}},
              {int64s({1, 2}, {1, 1}), floats({1, 2}, {3, 4})});
    require_values(g.run({kData2x3}), {2, 3}, {1, expected, 3, 4, 5, 6});
  }
}

TEST_CASE("ScatterElements adds in float16 and in int32", "[ops][scatterelements]") {
  // indices [[0], [2]] on axis 1: out[0][0] and out[1][2] grow by the update,
  // 1 + 0.5 and 6 + 0.5 in float16, 1 + 2 and 6 + 2 in int32.
  OneNode half(18, "ScatterElements", {{DType::f16, {2, 3}}},
               {{"axis", int64_t{1}}, {"reduction", std::string("add")}},
               {int64s({2, 1}, {0, 2}), floats({2, 1}, {0.5f, 0.5f}).cast(DType::f16)});
  Tensor y = half.run({kData2x3.cast(DType::f16)});
  REQUIRE(y.dtype() == DType::f16);
  require_values(y, {2, 3}, {1.5, 2, 3, 4, 5, 6.5});
  OneNode ints(18, "ScatterElements", {{DType::i32, {2, 3}}},
               {{"axis", int64_t{1}}, {"reduction", std::string("add")}},
               {int64s({2, 1}, {0, 2}), int64s({2, 1}, {2, 2}).cast(DType::i32)});
  require_values(ints.run({kData2x3.cast(DType::i32)}), {2, 3}, {3, 2, 3, 4, 5, 8});
}

TEST_CASE("ScatterElements multiplies integers modulo 2^bits", "[ops][scatterelements]") {
  // int8: 100 * 3 = 300, which wraps to 300 - 256 = 44.
  OneNode g(18, "ScatterElements", {{DType::i8, {1, 2}}},
            {{"axis", int64_t{1}}, {"reduction", std::string("mul")}},
            {int64s({1, 1}, {0}), int64s({1, 1}, {3}).cast(DType::i8)});
  require_values(g.run({int64s({1, 2}, {100, 1}).cast(DType::i8)}), {1, 2}, {44, 1});
}

TEST_CASE("Scatter is ScatterElements under its opset 9 name", "[ops][scatter]") {
  OneNode g(9, "Scatter", {k2x3}, {{"axis", int64_t{1}}},
            {int64s({2, 1}, {2, 0}), floats({2, 1}, {10, 20})});
  require_values(g.run({kData2x3}), {2, 3}, {1, 2, 10, 20, 5, 6});
}

TEST_CASE("ScatterElements rejects bad indices, shapes and reductions",
          "[ops][scatterelements]") {
  OneNode out_of_range(18, "ScatterElements", {k2x3}, {{"axis", int64_t{1}}},
                       {int64s({1, 1}, {3}), floats({1, 1}, {0})});
  REQUIRE_THROWS_WITH(out_of_range.run({kData2x3}),
                      Catch::Contains("index 3 is out of range for axis 1 of size 3"));
  OneNode too_negative(18, "ScatterElements", {k2x3}, {{"axis", int64_t{1}}},
                       {int64s({1, 1}, {-4}), floats({1, 1}, {0})});
  REQUIRE_THROWS_WITH(too_negative.run({kData2x3}), Catch::Contains("index -4 is out of range"));
  OneNode mismatch(18, "ScatterElements", {k2x3}, {},
                   {int64s({1, 2}, {0, 0}), floats({1, 3}, {0, 0, 0})});
  REQUIRE_THROWS_WITH(mismatch.infer(), Catch::Contains("must have the shape of indices"));
  OneNode too_wide(18, "ScatterElements", {k2x3}, {},
                   {int64s({1, 4}, {0, 0, 0, 0}), floats({1, 4}, {0, 0, 0, 0})});
  REQUIRE_THROWS_WITH(too_wide.infer(), Catch::Contains("do not fit data"));
  OneNode bad_axis(18, "ScatterElements", {k2x3}, {{"axis", int64_t{2}}},
                   {int64s({1, 1}, {0}), floats({1, 1}, {0})});
  REQUIRE_THROWS_WITH(bad_axis.infer(), Catch::Contains("axis 2 is out of range for rank 2"));
  OneNode float_indices(18, "ScatterElements", {k2x3}, {},
                        {floats({1, 1}, {0}), floats({1, 1}, {0})});
  REQUIRE_THROWS_WITH(float_indices.infer(), Catch::Contains("indices must be i32 or i64"));
  OneNode unknown(18, "ScatterElements", {k2x3}, {{"reduction", std::string("mean")}},
                  {int64s({1, 1}, {0}), floats({1, 1}, {0})});
  REQUIRE_THROWS_WITH(unknown.infer(), Catch::Contains("reduction is 'mean'"));
  OneNode too_early(16, "ScatterElements", {k2x3}, {{"reduction", std::string("max")}},
                    {int64s({1, 1}, {0}), floats({1, 1}, {0})});
  REQUIRE_THROWS_WITH(too_early.infer(), Catch::Contains("reduction 'max' needs opset 18"));
}

// --- ScatterND ----------------------------------------------------------------------------------

TEST_CASE("ScatterND writes whole rows and single elements", "[ops][scatternd]") {
  // Tuples of one coordinate name rows: indices [[1]], updates [[7, 8, 9]] replace row 1.
  OneNode rows(18, "ScatterND", {k2x3}, {},
               {int64s({1, 1}, {1}), floats({1, 3}, {7, 8, 9})});
  require_values(rows.run({kData2x3}), {2, 3}, {1, 2, 3, 7, 8, 9});
  // Tuples of two coordinates name elements: [0, 2] <- 10 and [1, -3] = [1, 0] <- 20.
  OneNode elements(18, "ScatterND", {k2x3}, {},
                   {int64s({2, 2}, {0, 2, 1, -3}), floats({2}, {10, 20})});
  require_values(elements.run({kData2x3}), {2, 3}, {1, 2, 10, 20, 5, 6});
}

TEST_CASE("ScatterND with reduction mul multiplies repeated rows", "[ops][scatternd]") {
  // Row 0 = [1, 2, 3] is multiplied by [2, 2, 2] and then by [1, 10, 100]: [2, 40, 600].
  OneNode g(16, "ScatterND", {k2x3}, {{"reduction", std::string("mul")}},
            {int64s({2, 1}, {0, 0}), floats({2, 3}, {2, 2, 2, 1, 10, 100})});
  require_values(g.run({kData2x3}), {2, 3}, {2, 40, 600, 4, 5, 6});
}

TEST_CASE("ScatterND rejects bad indices and update shapes", "[ops][scatternd]") {
  OneNode out_of_range(18, "ScatterND", {k2x3}, {},
                       {int64s({1, 1}, {2}), floats({1, 3}, {0, 0, 0})});
  REQUIRE_THROWS_WITH(out_of_range.run({kData2x3}),
                      Catch::Contains("index 2 is out of range for axis 0 of size 2"));
  OneNode wrong_updates(18, "ScatterND", {k2x3}, {},
                        {int64s({1, 1}, {0}), floats({1, 2}, {0, 0})});
  REQUIRE_THROWS_WITH(wrong_updates.infer(), Catch::Contains("must have shape [1,3]"));
  OneNode long_tuples(18, "ScatterND", {k2x3}, {},
                      {int64s({1, 3}, {0, 0, 0}), floats({1}, {0})});
  REQUIRE_THROWS_WITH(long_tuples.infer(), Catch::Contains("name 3 coordinates"));
  OneNode too_early(13, "ScatterND", {k2x3}, {{"reduction", std::string("add")}},
                    {int64s({1, 1}, {0}), floats({1, 3}, {0, 0, 0})});
  REQUIRE_THROWS_WITH(too_early.infer(), Catch::Contains("reduction 'add' needs opset 16"));
}

// --- TensorScatter ------------------------------------------------------------------------------

TEST_CASE("TensorScatter writes each batch entry at its write index", "[ops][tensorscatter]") {
  // Cache [2 batches, 3 positions, 1] of zeros; update of length 2 along axis 1 (= -2).
  // Batch 0 starts at 0: positions 0, 1 <- 1, 2. Batch 1 starts at 1: positions 1, 2 <- 3, 4.
  OneNode g(24, "TensorScatter", {{DType::f32, {2, 3, 1}}, {DType::f32, {2, 2, 1}}}, {},
            {int64s({2}, {0, 1})});
  Tensor cache = floats({2, 3, 1}, {0, 0, 0, 0, 0, 0});
  require_values(g.run({cache, floats({2, 2, 1}, {1, 2, 3, 4})}), {2, 3, 1},
                 {1, 2, 0, 0, 3, 4});
}

TEST_CASE("TensorScatter in circular mode wraps around the cache", "[ops][tensorscatter]") {
  // Batch 1 starts at 2: positions 2 and (2 + 1) mod 3 = 0 <- 3, 4.
  OneNode g(24, "TensorScatter", {{DType::f32, {2, 3, 1}}, {DType::f32, {2, 2, 1}}},
            {{"mode", std::string("circular")}}, {int64s({2}, {0, 2})});
  Tensor cache = floats({2, 3, 1}, {0, 0, 0, 0, 0, 0});
  require_values(g.run({cache, floats({2, 2, 1}, {1, 2, 3, 4})}), {2, 3, 1},
                 {1, 2, 0, 4, 0, 3});
}

TEST_CASE("TensorScatter rejects overflowing writes, bad shapes and modes",
          "[ops][tensorscatter]") {
  const std::vector<TensorType> types = {{DType::f32, {2, 3, 1}}, {DType::f32, {2, 2, 1}}};
  Tensor cache = floats({2, 3, 1}, {0, 0, 0, 0, 0, 0});
  Tensor update = floats({2, 2, 1}, {1, 2, 3, 4});
  OneNode past_end(24, "TensorScatter", types, {}, {int64s({2}, {0, 2})});
  REQUIRE_THROWS_WITH(past_end.run({cache, update}),
                      Catch::Contains("write index 2 of batch entry 1 puts the update past"));
  OneNode bad_mode(24, "TensorScatter", types, {{"mode", std::string("ring")}});
  REQUIRE_THROWS_WITH(bad_mode.infer(), Catch::Contains("mode is 'ring'"));
  OneNode batch_axis(24, "TensorScatter", types, {{"axis", int64_t{0}}});
  REQUIRE_THROWS_WITH(batch_axis.infer(), Catch::Contains("axis is the batch axis 0"));
  OneNode too_long(24, "TensorScatter", {{DType::f32, {2, 3, 1}}, {DType::f32, {2, 4, 1}}});
  REQUIRE_THROWS_WITH(too_long.infer(), Catch::Contains("must match past_cache"));
  OneNode bad_indices(24, "TensorScatter", types, {}, {int64s({3}, {0, 0, 0})});
  REQUIRE_THROWS_WITH(bad_indices.infer(), Catch::Contains("write_indices must be i64[2]"));
}
