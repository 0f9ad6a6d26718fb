// Unit tests for the loop IR interpreter on CPU-style code: blocks, reductions, vectors,
// guarded splits, checked accesses and arguments. Course module 3.
#include "loop_test_util.h"
#include "minic/ir/loop/interpreter.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace minic;
using namespace minic::loop;
using namespace minic::loop::test;

namespace {

// C = A x B for n x n matrices, as the course writes it: a block with an init.
PrimFunc matmul(int64_t n) {
  Buffer A = BufferNode::make("A", DType::f32, {n, n});
  Buffer B = BufferNode::make("B", DType::f32, {n, n});
  Buffer C = BufferNode::make("C", DType::f32, {n, n});
  Expr i = Var::make("i"), j = Var::make("j"), k = Var::make("k");
  Expr vi = Var::make("vi"), vj = Var::make("vj"), vk = Var::make("vk");
  Stmt block = Block::make(
      {.name = "C",
       .iter_vars = {{vi, n, IterKind::spatial, i}, {vj, n, IterKind::spatial, j},
                     {vk, n, IterKind::reduce, k}},
       .init = Store::make(C, {vi, vj}, f32(0.0)),
       .body = Store::make(C, {vi, vj},
                           Load::make(C, {vi, vj}) +
                               Load::make(A, {vi, vk}) * Load::make(B, {vk, vj}))});
  return {"matmul", {A, B, C}, for_loop(i, n, for_loop(j, n, for_loop(k, n, block)))};
}

// out[i] = value(A[i], B[i]) over n elements of `dtype`, with `value` built from the loads.
template <typename Fn>
PrimFunc elementwise(DType in, DType out, int64_t n, Fn value) {
  Buffer A = BufferNode::make("A", in, {n});
  Buffer B = BufferNode::make("B", in, {n});
  Buffer C = BufferNode::make("C", out, {n});
  Expr i = Var::make("i");
  Stmt store = Store::make(C, {i}, value(Load::make(A, {i}), Load::make(B, {i})));
  return {"elementwise", {A, B, C}, for_loop(i, n, store)};
}

template <typename T>
Tensor tensor_of(std::vector<T> values) {
  int64_t n = static_cast<int64_t>(values.size());
  return Tensor::from_vector<T>({n}, values);
}

template <typename T>
std::vector<T> values_of(const Tensor& tensor) {
  auto span = tensor.values<T>();
  return std::vector<T>(span.begin(), span.end());
}

}  // namespace

TEST_CASE("the interpreter multiplies matrices like a plain C++ loop", "[loop_interp]") {
  std::mt19937 rng(7);
  Tensor a = small_int_tensor({8, 8}, rng), b = small_int_tensor({8, 8}, rng);
  Tensor c = filled(DType::f32, {8, 8}, 777.0);  // garbage the init must overwrite
  run_func(matmul(8), {&a, &b, &c});
  auto A = a.values<float>(), B = b.values<float>(), C = c.values<float>();
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      float sum = 0.0f;
      for (int k = 0; k < 8; ++k) sum += A[i * 8 + k] * B[k * 8 + j];
      REQUIRE(C[i * 8 + j] == sum);
    }
  }
}

TEST_CASE("a reduction runs its init once per output, with the reduction loop outside",
          "[loop_interp]") {
  // for k in 0..6 { for i in 0..4 { block S(vi = spatial i, vk = reduce k) {
  //   init { S[vi] = 0 }  S[vi] = S[vi] + A[vi, vk] } } }
  Buffer A = BufferNode::make("A", DType::f32, {4, 6});
  Buffer S = BufferNode::make("S", DType::f32, {4});
  Expr i = Var::make("i"), k = Var::make("k"), vi = Var::make("vi"), vk = Var::make("vk");
  Stmt block = Block::make(
      {.name = "S",
       .iter_vars = {{vi, 4, IterKind::spatial, i}, {vk, 6, IterKind::reduce, k}},
       .init = Store::make(S, {vi}, f32(0.0)),
       .body = Store::make(S, {vi}, Load::make(S, {vi}) + Load::make(A, {vi, vk}))});
  PrimFunc func{"row_sum", {A, S}, for_loop(k, 6, for_loop(i, 4, block))};
  std::mt19937 rng(3);
  Tensor a = small_int_tensor({4, 6}, rng);
  Tensor s = filled(DType::f32, {4}, -100.0);
  run_func(func, {&a, &s});
  for (int row = 0; row < 4; ++row) {
    float sum = 0.0f;
    for (int col = 0; col < 6; ++col) sum += a.values<float>()[row * 6 + col];
    REQUIRE(s.values<float>()[row] == sum);
  }
}

TEST_CASE("a vectorized add with Ramp and Broadcast equals the scalar loop", "[loop_interp]") {
  Buffer A = BufferNode::make("A", DType::f32, {64});
  Buffer B = BufferNode::make("B", DType::f32, {64});
  Buffer C = BufferNode::make("C", DType::f32, {64});
  Expr i = Var::make("i"), io = Var::make("io");
  // Scalar: C[i] = A[i] + B[i] * 2.5, in a loop marked vectorized.
  Stmt scalar = Store::make(C, {i}, Load::make(A, {i}) + Load::make(B, {i}) * f32(2.5));
  PrimFunc scalar_func{"add", {A, B, C}, for_loop(i, 64, scalar, ForKind::vectorized)};
  // Vector: C[io*8 : io*8+8] = A[...] + B[...] * broadcast(2.5), f32x8.
  Expr lanes = Ramp::make(io * 8, i64(1), 8);
  Stmt vector = Store::make(
      C, {lanes}, Load::make(A, {lanes}) + Load::make(B, {lanes}) * Broadcast::make(f32(2.5), 8));
  PrimFunc vector_func{"add_x8", {A, B, C}, for_loop(io, 8, vector)};
  std::mt19937 rng(11);
  Tensor a = uniform_tensor({64}, rng), b = uniform_tensor({64}, rng);
  Tensor c1(DType::f32, {64}), c2(DType::f32, {64});
  run_func(scalar_func, {&a, &b, &c1});
  run_func(vector_func, {&a, &b, &c2});
  REQUIRE(c1.identical(c2));
  // Wider than the interpreter keeps inline: f32x32.
  Expr wide = Ramp::make(io * 32, i64(1), 32);
  Expr wide_value =
      Load::make(A, {wide}) + Load::make(B, {wide}) * Broadcast::make(f32(2.5), 32);
  Stmt wide_store = Store::make(C, {wide}, wide_value);
  Tensor c3(DType::f32, {64});
  run_func({"add_x32", {A, B, C}, for_loop(io, 2, wide_store)}, {&a, &b, &c3});
  REQUIRE(c1.identical(c3));
  for (int n = 0; n < 64; ++n) {
    float expected = a.values<float>()[n] + b.values<float>()[n] * 2.5f;
    REQUIRE(c1.values<float>()[n] == expected);
  }
}

TEST_CASE("a split loop with a guard computes the 10 elements and no more", "[loop_interp]") {
  // for i0 in 0..3 { for i1 in 0..4 { block B(vi = spatial(10) i0 * 4 + i1)
  //   where i0 * 4 + i1 < 10 { B[vi] = A[vi] * 2 } } }
  Buffer A = BufferNode::make("A", DType::f32, {10});
  Buffer B = BufferNode::make("B", DType::f32, {10});
  Expr i0 = Var::make("i0"), i1 = Var::make("i1"), vi = Var::make("vi");
  Expr binding = i0 * 4 + i1;
  auto make = [&](Expr predicate) {
    Stmt block = Block::make({.name = "B",
                              .iter_vars = {{vi, 10, IterKind::spatial, binding}},
                              .predicate = predicate,
                              .body = Store::make(B, {vi}, Load::make(A, {vi}) * f32(2.0))});
    return PrimFunc{"split", {A, B}, for_loop(i0, 3, for_loop(i1, 4, block))};
  };
  std::mt19937 rng(5);
  Tensor a = uniform_tensor({10}, rng), b(DType::f32, {10});
  run_func(make(LT::make(binding, i64(10))), {&a, &b});
  for (int n = 0; n < 10; ++n) REQUIRE(b.values<float>()[n] == a.values<float>()[n] * 2.0f);
  // Without the guard, i0 = 2, i1 = 2 binds vi = 10: the verifier refuses it.
  REQUIRE_THROWS_WITH(run_func(make(Expr()), {&a, &b}), Catch::Contains("needs a predicate"));
}

TEST_CASE("an out-of-bounds load is an error naming the buffer and the index", "[loop_interp]") {
  Buffer A = BufferNode::make("A", DType::f32, {4});
  Buffer B = BufferNode::make("B", DType::f32, {5});
  Expr i = Var::make("i");
  PrimFunc func{"copy", {A, B}, for_loop(i, 5, Store::make(B, {i}, Load::make(A, {i})))};
  Tensor a(DType::f32, {4}), b(DType::f32, {5});
  REQUIRE_THROWS_WITH(run_func(func, {&a, &b}),
                      Catch::Contains("@copy") && Catch::Contains("load from buffer A") &&
                          Catch::Contains("index [4]") && Catch::Contains("shape [4]"));
  // A vector store past the end names the lane.
  Buffer C = BufferNode::make("C", DType::f32, {6});
  Expr x = Var::make("x");
  Stmt store = Store::make(C, {Ramp::make(x * 3, i64(1), 4)}, Broadcast::make(f32(1.0), 4));
  PrimFunc vector{"vstore", {C}, for_loop(x, 2, store)};
  Tensor c(DType::f32, {6});
  REQUIRE_THROWS_WITH(run_func(vector, {&c}),
                      Catch::Contains("store to buffer C: index [6] (lane 3)"));
}

TEST_CASE("arguments must match the parameters", "[loop_interp]") {
  PrimFunc func = matmul(4);
  Tensor a(DType::f32, {4, 4}), b(DType::f32, {4, 4}), c(DType::f32, {4, 4});
  Tensor wrong_shape(DType::f32, {4, 5}), wrong_type(DType::f64, {4, 4});
  REQUIRE_NOTHROW(run_func(func, {&a, &b, &c}));
  REQUIRE_THROWS_WITH(run_func(func, {&a, &wrong_shape, &c}),
                      Catch::Contains("parameter B is f32[4,4], but its argument is f32[4,5]"));
  REQUIRE_THROWS_WITH(run_func(func, {&a, &b, &wrong_type}),
                      Catch::Contains("parameter C is f32[4,4], but its argument is f64[4,4]"));
  REQUIRE_THROWS_WITH(run_func(func, {&a, &b}), Catch::Contains("takes 3 arguments, not 2"));
  REQUIRE_THROWS_WITH(run_func(func, {&a, nullptr, &c}), Catch::Contains("parameter B"));
}

TEST_CASE("integer division truncates, floor division floors, and 0 is an error",
          "[loop_interp]") {
  Tensor a = tensor_of<int32_t>({7, -7, 7, -7, INT32_MIN, 5});
  Tensor b = tensor_of<int32_t>({2, 2, -2, -2, -1, 5});
  Tensor c(DType::i32, {6});
  auto run = [&](auto make) {
    run_func(elementwise(DType::i32, DType::i32, 6, make), {&a, &b, &c});
    return values_of<int32_t>(c);
  };
  using V = std::vector<int32_t>;
  REQUIRE(run([](Expr x, Expr y) { return Div::make(x, y); }) == V{3, -3, -3, 3, INT32_MIN, 1});
  REQUIRE(run([](Expr x, Expr y) { return Mod::make(x, y); }) == V{1, -1, 1, -1, 0, 0});
  REQUIRE(run([](Expr x, Expr y) { return FloorDiv::make(x, y); }) ==
          V{3, -4, -4, 3, INT32_MIN, 1});
  REQUIRE(run([](Expr x, Expr y) { return FloorMod::make(x, y); }) == V{1, 1, -1, -1, 0, 0});
  // i32 arithmetic wraps at 32 bits.
  REQUIRE(run([](Expr x, Expr y) { return x * y - y; })[4] == INT32_MIN + 1);
  Tensor zero = tensor_of<int32_t>({1, 1, 1, 1, 1, 0});
  REQUIRE_THROWS_WITH(run_func(elementwise(DType::i32, DType::i32, 6,
                                           [](Expr x, Expr y) { return Div::make(x, y); }),
                               {&a, &zero, &c}),
                      Catch::Contains("division by zero"));
}

TEST_CASE("f32 arithmetic is done in float and f16 rounds after every operation",
          "[loop_interp]") {
  // (2^24 + 1) + 1: in float each addition rounds back to 2^24; in double it would not.
  Tensor a = tensor_of<float>({16777216.0f}), b = tensor_of<float>({1.0f});
  Tensor c(DType::f32, {1});
  run_func(elementwise(DType::f32, DType::f32, 1, [](Expr x, Expr y) { return x + y + y; }),
           {&a, &b, &c});
  REQUIRE(c.values<float>()[0] == 16777216.0f);
  // In f16, 2048 + 1 rounds to 2048 (the even neighbour), so (2048 + 1) + 1 is 2048.
  Tensor h = a.cast(DType::f16), one = b.cast(DType::f16);
  h.values<Half>()[0] = Half(2048.0f);
  Tensor out(DType::f16, {1});
  run_func(elementwise(DType::f16, DType::f16, 1, [](Expr x, Expr y) { return x + y + y; }),
           {&h, &one, &out});
  REQUIRE(static_cast<float>(out.values<Half>()[0]) == 2048.0f);
}

TEST_CASE("Cast converts elements as Tensor::cast does", "[loop_interp]") {
  std::vector<float> values = {0.0f, -0.0f, 1.5f, -2.5f, 3.7f, 300.0f, -300.0f, 65504.0f, 1e10f,
                               -1e10f, std::numeric_limits<float>::quiet_NaN(),
                               std::numeric_limits<float>::infinity(), 1e-8f, 0.1f};
  Tensor a = tensor_of<float>(values), b = tensor_of<float>(values);
  int64_t n = static_cast<int64_t>(values.size());
  for (DType to : {DType::i32, DType::u8, DType::i8, DType::i64, DType::boolean, DType::f16,
                   DType::bf16, DType::f64}) {
    Tensor out(to, {n});
    auto cast = [to](Expr x, Expr) { return Cast::make(DataType{to, 1}, x); };
    run_func(elementwise(DType::f32, to, n, cast), {&a, &b, &out});
    INFO(dtype_name(to));
    REQUIRE(out.identical(a.cast(to)));
  }
  // And back from integers to floats.
  Tensor ints = tensor_of<int64_t>({0, -1, 16777217, INT64_MAX, INT64_MIN});
  Tensor out(DType::f32, {5});
  run_func(elementwise(DType::i64, DType::f32, 5,
                       [](Expr x, Expr) { return Cast::make(DataType::f32(), x); }),
           {&ints, &ints, &out});
  REQUIRE(out.identical(ints.cast(DType::f32)));
}

TEST_CASE("intrinsics: round goes half to even, min and max propagate NaN", "[loop_interp]") {
  Tensor a = tensor_of<float>({0.5f, 1.5f, 2.5f, -2.5f, -0.4f});
  Tensor c(DType::f32, {5});
  run_func(elementwise(DType::f32, DType::f32, 5,
                       [](Expr x, Expr) { return Call::make(DataType::f32(), "round", {x}); }),
           {&a, &a, &c});
  REQUIRE(values_of<float>(c) == std::vector<float>{0.0f, 2.0f, 2.0f, -2.0f, -0.0f});
  run_func(elementwise(DType::f32, DType::f32, 5,
                       [](Expr x, Expr) { return Call::make(DataType::f32(), "exp", {x}); }),
           {&a, &a, &c});
  REQUIRE(c.values<float>()[2] == static_cast<float>(std::exp(2.5)));
  float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = tensor_of<float>({nan, 1.0f}), y = tensor_of<float>({1.0f, nan});
  Tensor m(DType::f32, {2});
  run_func(elementwise(DType::f32, DType::f32, 2, [](Expr p, Expr q) { return min(p, q); }),
           {&x, &y, &m});
  REQUIRE((std::isnan(m.values<float>()[0]) && std::isnan(m.values<float>()[1])));
  run_func(elementwise(DType::f32, DType::f32, 2, [](Expr p, Expr q) { return max(p, q); }),
           {&x, &y, &m});
  REQUIRE((std::isnan(m.values<float>()[0]) && std::isnan(m.values<float>()[1])));
}

TEST_CASE("a Select with a scalar condition evaluates only the operand it picks",
          "[loop_interp]") {
  // B[i] = i < 4 ? A[i] : 0 for i in 0..6, with A of 4 elements: a guarded load.
  Buffer A = BufferNode::make("A", DType::f32, {4});
  Buffer B = BufferNode::make("B", DType::f32, {6});
  Expr i = Var::make("i");
  Expr guarded = Select::make(LT::make(i, i64(4)), Load::make(A, {i}), f32(0.0));
  PrimFunc func{"pad", {A, B}, for_loop(i, 6, Store::make(B, {i}, guarded))};
  Tensor a = tensor_of<float>({1, 2, 3, 4}), b(DType::f32, {6});
  run_func(func, {&a, &b});
  REQUIRE(values_of<float>(b) == std::vector<float>{1, 2, 3, 4, 0, 0});
}

TEST_CASE("allocated memory reads as NaN until written", "[loop_interp]") {
  // allocate T: f32[4] { for i in 0..2 { T[i] = A[i] } for i in 0..4 { B[i] = T[i] } }
  Buffer A = BufferNode::make("A", DType::f32, {4});
  Buffer B = BufferNode::make("B", DType::f32, {4});
  Buffer T = BufferNode::make("T", DType::f32, {4}, MemoryScope::local);
  Expr i = Var::make("i"), j = Var::make("j");
  Stmt body = Seq::make({for_loop(i, 2, Store::make(T, {i}, Load::make(A, {i}))),
                         for_loop(j, 4, Store::make(B, {j}, Load::make(T, {j})))});
  PrimFunc func{"partial", {A, B}, Allocate::make(T, body)};
  Tensor a = tensor_of<float>({1, 2, 3, 4}), b(DType::f32, {4});
  run_func(func, {&a, &b});
  auto out = values_of<float>(b);
  REQUIRE((out[0] == 1.0f && out[1] == 2.0f && std::isnan(out[2]) && std::isnan(out[3])));
}

TEST_CASE("intrinsics: trigonometry in double rounded to the type; shifts past the width give 0",
          "[loop_interp]") {
  Tensor a = tensor_of<float>({0.5f, -0.25f, 0.75f});
  Tensor c(DType::f32, {3});
  for (auto [name, formula] : std::vector<std::pair<std::string, double (*)(double)>>{
           {"sin", std::sin},   {"cos", std::cos},     {"tan", std::tan},
           {"asin", std::asin}, {"acos", std::acos},   {"atan", std::atan},
           {"sinh", std::sinh}, {"cosh", std::cosh},   {"asinh", std::asinh},
           {"atanh", std::atanh}}) {
    INFO(name);
    std::string intrinsic = name;
    run_func(elementwise(DType::f32, DType::f32, 3,
                         [&](Expr x, Expr) { return Call::make(DataType::f32(), intrinsic, {x}); }),
             {&a, &a, &c});
    for (int64_t k = 0; k < 3; ++k) {
      REQUIRE(c.values<float>()[k] == static_cast<float>(formula(a.values<float>()[k])));
    }
  }
  Tensor above_one = tensor_of<float>({1.5f, 2.0f, 0.5f});
  run_func(elementwise(DType::f32, DType::f32, 3,
                       [](Expr x, Expr) { return Call::make(DataType::f32(), "acosh", {x}); }),
           {&above_one, &above_one, &c});
  REQUIRE(c.values<float>()[0] == static_cast<float>(std::acosh(1.5)));
  REQUIRE(std::isnan(c.values<float>()[2]));

  // u8: 200 << 1 wraps to 144; shifts by 8 or more give 0.
  Tensor x = Tensor(DType::i64, {4});
  x.values<int64_t>()[0] = 200;
  x.values<int64_t>()[1] = 200;
  x.values<int64_t>()[2] = 255;
  x.values<int64_t>()[3] = 255;
  Tensor amount = Tensor(DType::i64, {4});
  amount.values<int64_t>()[0] = 1;
  amount.values<int64_t>()[1] = 3;
  amount.values<int64_t>()[2] = 8;
  amount.values<int64_t>()[3] = 200;
  Tensor u = x.cast(DType::u8);
  Tensor s = amount.cast(DType::u8);
  Tensor out(DType::u8, {4});
  auto shift = [](const char* name) {
    return [name](Expr p, Expr q) { return Call::make(p.type(), name, {p, q}); };
  };
  run_func(elementwise(DType::u8, DType::u8, 4, shift("shift_left")), {&u, &s, &out});
  REQUIRE(values_of<uint8_t>(out) == std::vector<uint8_t>{144, 64, 0, 0});
  run_func(elementwise(DType::u8, DType::u8, 4, shift("shift_right")), {&u, &s, &out});
  REQUIRE(values_of<uint8_t>(out) == std::vector<uint8_t>{100, 25, 0, 0});
  REQUIRE_THROWS_WITH(Call::make(DataType::f32(), "shift_left", {f32(1.0), f32(2.0)}),
                      Catch::Contains("shifts take unsigned integers"));
}
