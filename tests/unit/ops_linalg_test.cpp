// Unit tests for MatMul, Gemm, the reductions, Softmax and Einsum: small graphs whose
// results are worked out by hand in the comments. Course module 2.
#include "ops_test_util.h"

#include <cmath>
#include <limits>

using namespace minic;
using namespace minic::test;

// --- MatMul, Gemm ---------------------------------------------------------------------------

TEST_CASE("MatMul of a vector and a matrix drops the promoted dimension", "[ops][matmul]") {
  OneNode g(13, "MatMul", {{DType::f32, {3}}, {DType::f32, {3, 2}}});
  // [1 2 3] x [[1 2] [3 4] [5 6]] = [1+6+15, 2+8+18]
  Tensor y = g.run({floats({3}, {1, 2, 3}), floats({3, 2}, {1, 2, 3, 4, 5, 6})});
  require_values(y, {2}, {22, 28});
}

TEST_CASE("MatMul broadcasts batch dimensions as numpy.matmul does", "[ops][matmul]") {
  auto shape_of = [](Shape a, Shape b) {
    OneNode g(13, "MatMul", {{DType::f32, a}, {DType::f32, b}});
    return g.infer();
  };
  REQUIRE(shape_of({2, 1, 3, 4}, {5, 4, 6}) == Shape{2, 5, 3, 6});
  REQUIRE(shape_of({4}, {2, 4, 5}) == Shape{2, 5});
  REQUIRE(shape_of({7, 3, 4}, {4}) == Shape{7, 3});
  REQUIRE(shape_of({4}, {4}) == Shape{});

  // Two 1x2 matrices times one 2x1 matrix: [1 2].[10 1] = 12, [3 4].[10 1] = 34.
  OneNode g(13, "MatMul", {{DType::f32, {2, 1, 2}}, {DType::f32, {2, 1}}});
  Tensor y = g.run({floats({2, 1, 2}, {1, 2, 3, 4}), floats({2, 1}, {10, 1})});
  require_values(y, {2, 1, 1}, {12, 34});
}

TEST_CASE("MatMul of int32 matrices", "[ops][matmul]") {
  OneNode g(13, "MatMul", {{DType::i32, {1, 2}}, {DType::i32, {2, 2}}});
  // [3 -2] x [[1 2] [4 -5]] = [3-8, 6+10]
  Tensor y = g.run({Tensor::from_vector<int32_t>({1, 2}, {3, -2}),
                    Tensor::from_vector<int32_t>({2, 2}, {1, 2, 4, -5})});
  REQUIRE(y.dtype() == DType::i32);
  require_values(y, {1, 2}, {-5, 16});
}

TEST_CASE("MatMul with mismatched inner dimensions is an error naming the node",
          "[ops][matmul]") {
  OneNode g(13, "MatMul", {{DType::f32, {2, 3}}, {DType::f32, {4, 5}}});
  REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("MatMul node 'n'") &&
                                     Catch::Contains("inner dimensions do not match"));
  OneNode scalar(13, "MatMul", {{DType::f32, {}}, {DType::f32, {2}}});
  REQUIRE_THROWS_WITH(scalar.infer(), Catch::Contains("rank 1 or more"));
}

TEST_CASE("Gemm with transB and a bias broadcast along rows", "[ops][matmul]") {
  Tensor a = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = floats({2, 3}, {1, 0, 1, 0, 1, 0});  // B' = B^T is 3x2
  Tensor c = floats({2}, {10, 20});
  // A B^T = [[1+3, 2], [4+6, 5]] = [[4, 2], [10, 5]]; plus C on every row.
  OneNode g(13, "Gemm", {{DType::f32, {2, 3}}, {DType::f32, {2, 3}}, {DType::f32, {2}}},
            {{"transB", int64_t{1}}});
  require_values(g.run({a, b, c}), {2, 2}, {14, 22, 20, 25});

  // alpha = 2, beta = 0.5: 2 [[4, 2], [10, 5]] + [[5, 10], [5, 10]].
  OneNode scaled(13, "Gemm", {{DType::f32, {2, 3}}, {DType::f32, {2, 3}}, {DType::f32, {2}}},
                 {{"transB", int64_t{1}}, {"alpha", 2.0f}, {"beta", 0.5f}});
  require_values(scaled.run({a, b, c}), {2, 2}, {13, 14, 25, 20});

  // transA with a column bias [M, 1]: A^T is [[1 4] [2 5] [3 6]], times I(2) = A^T.
  OneNode trans_a(13, "Gemm", {{DType::f32, {2, 3}}, {DType::f32, {2, 2}}, {DType::f32, {3, 1}}},
                  {{"transA", int64_t{1}}});
  Tensor y = trans_a.run({a, floats({2, 2}, {1, 0, 0, 1}), floats({3, 1}, {100, 200, 300})});
  require_values(y, {3, 2}, {101, 104, 202, 205, 303, 306});
}

TEST_CASE("Gemm rejects a bias that does not broadcast to [M, N]", "[ops][matmul]") {
  OneNode g(13, "Gemm", {{DType::f32, {2, 3}}, {DType::f32, {3, 4}}, {DType::f32, {3}}});
  REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("Gemm node 'n'") &&
                                     Catch::Contains("does not broadcast"));
}

// --- reductions -----------------------------------------------------------------------------

TEST_CASE("ReduceMean over two axes without keepdims", "[ops][reduce]") {
  // x[i, j, k] = 6i + 2j + k; the mean over i and k is 3 + 2j + 0.5.
  std::vector<float> x(12);
  for (int i = 0; i < 12; ++i) x[i] = static_cast<float>(i);
  OneNode g(13, "ReduceMean", {{DType::f32, {2, 3, 2}}},
            {{"axes", std::vector<int64_t>{0, 2}}, {"keepdims", int64_t{0}}});
  require_values(g.run({floats({2, 3, 2}, x)}), {3}, {3.5, 5.5, 7.5});
}

TEST_CASE("ReduceSum takes its axes from a constant input from opset 13", "[ops][reduce]") {
  Tensor x = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  OneNode g(13, "ReduceSum", {{DType::f32, {2, 3}}}, {}, {int64s({1}, {-1})});
  require_values(g.run({x}), {2, 1}, {6, 15});

  // No axes: all of them, unless noop_with_empty_axes makes the op the identity.
  OneNode all(13, "ReduceSum", {{DType::f32, {2, 3}}}, {{"keepdims", int64_t{0}}});
  require_values(all.run({x}), {}, {21});
  OneNode noop(13, "ReduceSum", {{DType::f32, {2, 3}}}, {{"noop_with_empty_axes", int64_t{1}}});
  require_values(noop.run({x}), {2, 3}, {1, 2, 3, 4, 5, 6});

  OneNode twice(13, "ReduceSum", {{DType::f32, {2, 3}}}, {}, {int64s({2}, {1, -1})});
  REQUIRE_THROWS_WITH(twice.infer(), Catch::Contains("listed twice"));
}

TEST_CASE("Reductions over an empty axis give the identity of their operation",
          "[ops][reduce]") {
  Tensor x(DType::f32, {2, 0});
  const double inf = std::numeric_limits<double>::infinity();
  auto reduce = [&](const std::string& op) {
    OneNode g(18, op, {{DType::f32, {2, 0}}}, {}, {int64s({1}, {1})});
    return g.run({x});
  };
  require_values(reduce("ReduceSum"), {2, 1}, {0, 0});
  require_values(reduce("ReduceProd"), {2, 1}, {1, 1});
  require_values(reduce("ReduceMax"), {2, 1}, {-inf, -inf});
  require_values(reduce("ReduceMin"), {2, 1}, {inf, inf});
  require_values(reduce("ReduceLogSumExp"), {2, 1}, {-inf, -inf});
}

TEST_CASE("ReduceL2, ReduceLogSumExp and ReduceMax by hand", "[ops][reduce]") {
  Tensor x = floats({2, 2}, {3, 4, 0, std::log(2.0f)});
  OneNode l2(18, "ReduceL2", {{DType::f32, {2, 2}}}, {{"keepdims", int64_t{0}}},
             {int64s({1}, {1})});
  require_values(l2.run({x}), {2}, {5, std::log(2.0)}, 1e-6);
  // log(e^0 + e^log 2) = log 3.
  OneNode lse(18, "ReduceLogSumExp", {{DType::f32, {2, 2}}}, {{"keepdims", int64_t{0}}},
              {int64s({1}, {1})});
  require_values(lse.run({x}), {2}, {std::log(std::exp(3.0) + std::exp(4.0)), std::log(3.0)},
                 1e-5);
  OneNode max(11, "ReduceMax", {{DType::f32, {2, 2}}}, {{"axes", std::vector<int64_t>{0}}});
  require_values(max.run({x}), {1, 2}, {3, 4});
}

TEST_CASE("ArgMax picks the first or the last of equal maxima", "[ops][reduce]") {
  Tensor x = floats({2, 3}, {1, 5, 5, 7, 2, 7});
  OneNode first(13, "ArgMax", {{DType::f32, {2, 3}}}, {{"axis", int64_t{1}}});
  Tensor y = first.run({x});
  REQUIRE(y.dtype() == DType::i64);
  require_values(y, {2, 1}, {1, 0});
  OneNode last(13, "ArgMax", {{DType::f32, {2, 3}}},
               {{"axis", int64_t{1}}, {"select_last_index", int64_t{1}}, {"keepdims", int64_t{0}}});
  require_values(last.run({x}), {2}, {2, 2});
  OneNode argmin(13, "ArgMin", {{DType::f32, {2, 3}}}, {{"axis", int64_t{0}}});
  require_values(argmin.run({x}), {1, 3}, {0, 1, 0});
}

// --- Softmax --------------------------------------------------------------------------------

TEST_CASE("Softmax normalises trailing dims before opset 13 and one axis from 13",
          "[ops][softmax]") {
  Tensor x = floats({1, 2, 2}, {1, 2, 3, 4});
  // Opset 13, axis -1: each pair {1, 2} and {3, 4} gives [1, e] / (1 + e).
  OneNode new_form(13, "Softmax", {{DType::f32, {1, 2, 2}}});
  require_values(new_form.run({x}), {1, 2, 2},
                 {0.26894142, 0.73105858, 0.26894142, 0.73105858});
  // Opset 11, axis 1: the input is a 1x4 matrix and {1, 2, 3, 4} is one group.
  OneNode old_form(11, "Softmax", {{DType::f32, {1, 2, 2}}});
  require_values(old_form.run({x}), {1, 2, 2},
                 {0.0320586, 0.08714432, 0.23688282, 0.64391426});
  OneNode log_form(11, "LogSoftmax", {{DType::f32, {1, 2, 2}}});
  require_values(log_form.run({x}), {1, 2, 2}, {-3.4401897, -2.4401897, -1.4401897, -0.4401897},
                 1e-5);
}

TEST_CASE("Softmax of large numbers does not overflow", "[ops][softmax]") {
  OneNode g(13, "Softmax", {{DType::f32, {2}}});
  require_values(g.run({floats({2}, {10000, 10000})}), {2}, {0.5, 0.5});
}

// --- Einsum ---------------------------------------------------------------------------------

TEST_CASE("Einsum matrix product and diagonal", "[ops][einsum]") {
  OneNode matmul(12, "Einsum", {{DType::f32, {2, 2}}, {DType::f32, {2, 2}}},
                 {{"equation", std::string("ij,jk->ik")}});
  // [[1 2] [3 4]] x [[5 6] [7 8]] = [[19 22] [43 50]]
  Tensor y = matmul.run({floats({2, 2}, {1, 2, 3, 4}), floats({2, 2}, {5, 6, 7, 8})});
  require_values(y, {2, 2}, {19, 22, 43, 50});

  OneNode diagonal(12, "Einsum", {{DType::f32, {3, 3}}}, {{"equation", std::string("ii->i")}});
  Tensor d = diagonal.run({floats({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})});
  require_values(d, {3}, {1, 5, 9});
}

TEST_CASE("Einsum implicit output, trace and ellipsis", "[ops][einsum]") {
  // Implicit output: "ji" keeps the letters appearing once, alphabetically: a transpose.
  OneNode transpose(12, "Einsum", {{DType::f32, {2, 3}}}, {{"equation", std::string("ji")}});
  require_values(transpose.run({floats({2, 3}, {1, 2, 3, 4, 5, 6})}), {3, 2},
                 {1, 4, 2, 5, 3, 6});
  OneNode trace(12, "Einsum", {{DType::f32, {2, 2}}}, {{"equation", std::string("ii")}});
  require_values(trace.run({floats({2, 2}, {1, 2, 3, 4})}), {}, {5});
  // "...ij,...j->...i": a batch of two matrix-vector products, the vector broadcast.
  OneNode batched(12, "Einsum", {{DType::f32, {2, 1, 2}}, {DType::f32, {2}}},
                  {{"equation", std::string("...ij, ...j -> ...i")}});
  require_values(batched.run({floats({2, 1, 2}, {1, 2, 3, 4}), floats({2}, {10, 1})}), {2, 1},
                 {12, 34});

  OneNode bad(12, "Einsum", {{DType::f32, {2, 3}}}, {{"equation", std::string("ijk->i")}});
  REQUIRE_THROWS_WITH(bad.infer(), Catch::Contains("Einsum node 'n'") &&
                                       Catch::Contains("rank 2"));
}
