// Unit tests for RotaryEmbedding: rotations worked out by hand in the comments, and the
// errors for inputs and attributes that do not fit. Course module 2.
#include "ops_test_util.h"

using namespace minic;
using namespace minic::test;

namespace {

TensorType f32(Shape shape) { return {DType::f32, std::move(shape)}; }

// One token of one head, x = [1, 2, 3, 4]; caches without position_ids, [1, 1, 2]:
// pair 0 turns by 90 degrees (cos 0, sin 1), pair 1 not at all (cos 1, sin 0).
const Tensor kX = floats({1, 1, 1, 4}, {1, 2, 3, 4});
const Tensor kCos = floats({1, 1, 2}, {0, 1});
const Tensor kSin = floats({1, 1, 2}, {1, 0});

}  // namespace

TEST_CASE("RotaryEmbedding rotates the pairs (k, k + D/2)", "[ops][rotary_embedding]") {
  // Pairs (x0, x2) = (1, 3) and (x1, x3) = (2, 4):
  //   pair 0: y0 = 0 * 1 - 1 * 3 = -3, y2 = 1 * 1 + 0 * 3 = 1;  pair 1 stays (2, 4).
  OneNode g(23, "RotaryEmbedding", {f32({1, 1, 1, 4}), f32({1, 1, 2}), f32({1, 1, 2})});
  require_values(g.run({kX, kCos, kSin}), {1, 1, 1, 4}, {-3, 2, 1, 4});
}

TEST_CASE("RotaryEmbedding interleaved rotates the pairs (2k, 2k + 1)",
          "[ops][rotary_embedding]") {
  // Pairs (x0, x1) = (1, 2) and (x2, x3) = (3, 4):
  //   pair 0: y0 = 0 * 1 - 1 * 2 = -2, y1 = 1 * 1 + 0 * 2 = 1;  pair 1 stays (3, 4).
  OneNode g(23, "RotaryEmbedding", {f32({1, 1, 1, 4}), f32({1, 1, 2}), f32({1, 1, 2})},
            {{"interleaved", int64_t{1}}});
  require_values(g.run({kX, kCos, kSin}), {1, 1, 1, 4}, {-2, 1, 3, 4});
}

TEST_CASE("RotaryEmbedding of 3-D input with position_ids and a partial rotation",
          "[ops][rotary_embedding]") {
  // X [1, 2, 4]: two tokens of one head of size 4; rotary_embedding_dim 2 rotates the
  // pair (x0, x1) and copies x2, x3. The caches have 3 positions:
  //   cos = [1, 0, -1], sin = [0, 1, 0] (0, 90 and 180 degrees).
  // Token 0 is at position 2: (1, 2) -> (-1, -2). Token 1 at position 1: (5, 6) -> (-6, 5).
  OneNode g(23, "RotaryEmbedding",
            {f32({1, 2, 4}), f32({3, 1}), f32({3, 1}), {DType::i64, {1, 2}}},
            {{"num_heads", int64_t{1}}, {"rotary_embedding_dim", int64_t{2}}});
  Tensor y = g.run({floats({1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), floats({3, 1}, {1, 0, -1}),
                    floats({3, 1}, {0, 1, 0}), int64s({1, 2}, {2, 1})});
  require_values(y, {1, 2, 4}, {-1, -2, 3, 4, -6, 5, 7, 8});
}

TEST_CASE("RotaryEmbedding errors name the input or attribute that does not fit",
          "[ops][rotary_embedding]") {
  SECTION("3-D input without num_heads") {
    OneNode g(23, "RotaryEmbedding", {f32({1, 2, 4}), f32({1, 2, 2}), f32({1, 2, 2})});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("RotaryEmbedding node 'n'") &&
                                       Catch::Contains("needs the attribute num_heads"));
  }
  SECTION("an odd rotary_embedding_dim, or one past the head size") {
    OneNode odd(23, "RotaryEmbedding", {f32({1, 1, 1, 4}), f32({1, 1, 1}), f32({1, 1, 1})},
                {{"rotary_embedding_dim", int64_t{3}}});
    REQUIRE_THROWS_WITH(odd.infer(), Catch::Contains("must be even"));
    OneNode big(23, "RotaryEmbedding", {f32({1, 1, 1, 4}), f32({1, 1, 3}), f32({1, 1, 3})},
                {{"rotary_embedding_dim", int64_t{6}}});
    REQUIRE_THROWS_WITH(big.infer(), Catch::Contains("between 0 and the head size 4"));
  }
  SECTION("caches of the wrong shape") {
    OneNode g(23, "RotaryEmbedding", {f32({1, 1, 1, 4}), f32({1, 1, 4}), f32({1, 1, 4})});
    REQUIRE_THROWS_WITH(g.infer(),
                        Catch::Contains("cos_cache is f32[1,1,4]; it must be f32[1,1,2]"));
    OneNode ids(23, "RotaryEmbedding",
                {f32({1, 1, 1, 4}), f32({1, 1, 2}), f32({1, 1, 2}), {DType::i64, {1, 1}}});
    REQUIRE_THROWS_WITH(ids.infer(), Catch::Contains("it must be f32[max_position,2]"));
  }
  SECTION("double input, and a bad interleaved") {
    OneNode f64(23, "RotaryEmbedding",
                {{DType::f64, {1, 1, 1, 4}}, {DType::f64, {1, 1, 2}}, {DType::f64, {1, 1, 2}}});
    REQUIRE_THROWS_WITH(f64.infer(), Catch::Contains("takes float, float16 or bfloat16"));
    OneNode flag(23, "RotaryEmbedding", {f32({1, 1, 1, 4}), f32({1, 1, 2}), f32({1, 1, 2})},
                 {{"interleaved", int64_t{2}}});
    REQUIRE_THROWS_WITH(flag.infer(), Catch::Contains("interleaved must be 0 or 1"));
  }
  SECTION("a position id past the caches") {
    OneNode g(23, "RotaryEmbedding",
              {f32({1, 1, 1, 4}), f32({3, 2}), f32({3, 2}), {DType::i64, {1, 1}}});
    REQUIRE_THROWS_WITH(g.run({kX, floats({3, 2}, {1, 1, 1, 1, 1, 1}),
                               floats({3, 2}, {0, 0, 0, 0, 0, 0}), int64s({1, 1}, {3})}),
                        Catch::Contains("position id 3 is outside the caches' 3 rows"));
  }
}
