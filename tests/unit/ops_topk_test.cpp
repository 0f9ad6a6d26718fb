// Unit tests for TopK: small cases worked out by hand in the comments, the tie and NaN
// orders, each opset's form of k, and the errors for bad arguments. Course module 2.
#include "ops_test_util.h"

#include <cmath>
#include <limits>

using namespace minic;
using namespace minic::test;

TEST_CASE("TopK picks the k largest of each row, ties in index order", "[ops][topk]") {
  // Row 0 = [1, 4, 2, 4]: the largest are 4 (index 1), 4 (index 3), 2 (index 2).
  // Row 1 = [3, 0, 5, 1]: 5 (index 2), 3 (index 0), 1 (index 3).
  OneNode g(11, "TopK", {{DType::f32, {2, 4}}}, {}, {int64s({1}, {3})}, 2);
  std::vector<Tensor> out = g.run_all({floats({2, 4}, {1, 4, 2, 4, 3, 0, 5, 1})});
  require_values(out[0], {2, 3}, {4, 4, 2, 5, 3, 1});
  require_values(out[1], {2, 3}, {1, 3, 2, 2, 0, 3});
  REQUIRE(out[1].dtype() == DType::i64);
}

TEST_CASE("TopK with largest = 0 picks the smallest, along axis 0", "[ops][topk]") {
  // Column 0 = [5, 2, 2]: smallest 2 (index 1), 2 (index 2). Column 1 = [1, 7, 0]: 0, 1.
  OneNode g(11, "TopK", {{DType::f32, {3, 2}}}, {{"axis", int64_t{0}}, {"largest", int64_t{0}}},
            {int64s({1}, {2})}, 2);
  std::vector<Tensor> out = g.run_all({floats({3, 2}, {5, 1, 2, 7, 2, 0})});
  require_values(out[0], {2, 2}, {2, 0, 2, 1});
  require_values(out[1], {2, 2}, {1, 2, 2, 0});
}

TEST_CASE("TopK orders NaN above every number", "[ops][topk]") {
  // [1, NaN, 3, NaN]: largest first NaN (1), NaN (3), then 3 (2); smallest 1, 3, then NaN.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = floats({4}, {1, nan, 3, nan});
  OneNode largest(11, "TopK", {{DType::f32, {4}}}, {}, {int64s({1}, {3})}, 2);
  std::vector<Tensor> top = largest.run_all({x});
  REQUIRE(std::isnan(top[0].as_double(0)));
  REQUIRE(std::isnan(top[0].as_double(1)));
  REQUIRE(top[0].as_double(2) == 3);
  require_values(top[1], {3}, {1, 3, 2});
  OneNode smallest(11, "TopK", {{DType::f32, {4}}}, {{"largest", int64_t{0}}},
                   {int64s({1}, {3})}, 2);
  std::vector<Tensor> bottom = smallest.run_all({x});
  REQUIRE(bottom[0].as_double(0) == 1);
  REQUIRE(bottom[0].as_double(1) == 3);
  REQUIRE(std::isnan(bottom[0].as_double(2)));
  require_values(bottom[1], {3}, {0, 2, 1});
}

TEST_CASE("TopK in opset 1 takes k as an attribute; float16 and uint64 keep their type",
          "[ops][topk]") {
  // [2, 9, 4] -> the two largest are 9 (index 1) and 4 (index 2).
  OneNode attribute(1, "TopK", {{DType::f16, {3}}}, {{"k", int64_t{2}}}, {}, 2);
  std::vector<Tensor> out = attribute.run_all({floats({3}, {2, 9, 4}).cast(DType::f16)});
  REQUIRE(out[0].dtype() == DType::f16);
  require_values(out[0], {2}, {9, 4});
  require_values(out[1], {2}, {1, 2});

  // 2^63 + 1 and 2^63 differ in uint64 though not as doubles: the order is exact.
  std::vector<uint64_t> big = {(uint64_t{1} << 63), (uint64_t{1} << 63) + 1};
  OneNode wide(11, "TopK", {{DType::u64, {2}}}, {}, {int64s({1}, {1})}, 2);
  std::vector<Tensor> max = wide.run_all({Tensor::from_vector<uint64_t>({2}, big)});
  REQUIRE(max[0].values<uint64_t>()[0] == big[1]);
  require_values(max[1], {1}, {1});
}

TEST_CASE("TopK errors: k out of range, unknown k, bad attributes", "[ops][topk]") {
  OneNode too_many(11, "TopK", {{DType::f32, {2, 3}}}, {}, {int64s({1}, {4})}, 2);
  REQUIRE_THROWS_WITH(too_many.infer(),
                      Catch::Contains("node 'n'") && Catch::Contains("outside [0, 3]"));
  OneNode negative(11, "TopK", {{DType::f32, {3}}}, {}, {int64s({1}, {-1})}, 2);
  REQUIRE_THROWS_WITH(negative.infer(), Catch::Contains("k = -1"));
  OneNode unknown(11, "TopK", {{DType::f32, {3}}, {DType::i64, {1}}}, {}, {}, 2);
  REQUIRE_THROWS_WITH(unknown.infer(), Catch::Contains("static shapes"));
  OneNode two_ks(11, "TopK", {{DType::f32, {3}}}, {}, {int64s({2}, {1, 2})}, 2);
  REQUIRE_THROWS_WITH(two_ks.infer(), Catch::Contains("one element"));
  OneNode axis(11, "TopK", {{DType::f32, {3}}}, {{"axis", int64_t{1}}}, {int64s({1}, {1})}, 2);
  REQUIRE_THROWS_WITH(axis.infer(), Catch::Contains("axis"));
  OneNode largest(11, "TopK", {{DType::f32, {3}}}, {{"largest", int64_t{2}}},
                  {int64s({1}, {1})}, 2);
  REQUIRE_THROWS_WITH(largest.infer(), Catch::Contains("largest must be 0 or 1"));
  OneNode scalar(11, "TopK", {{DType::f32, {}}}, {}, {int64s({1}, {1})}, 2);
  REQUIRE_THROWS_WITH(scalar.infer(), Catch::Contains("scalar"));
}
