// Tests of the loop IR analyses: substitution, variable uses, interval bounds.
// Course module 3.
#include "minic/ir/loop/analysis.h"

#include "minic/ir/loop/printer.h"

#include <catch2/catch.hpp>

#include <random>

namespace minic::loop {
namespace {

Expr i64(int64_t value) { return IntImm::make(value); }

// Evaluates an integer expression of the variables i and j by brute force.
int64_t evaluate(const Expr& e, const Var* i, int64_t iv, const Var* j, int64_t jv) {
  VarMap map = {{i, i64(iv)}, {j, i64(jv)}};
  Expr value = substitute(e, map);
  // After substitution only constants remain; fold them with the bound analysis, which
  // is exact on constants.
  IntBound bound = bound_of(value, {});
  REQUIRE(bound.is_single());
  return bound.min;
}

}  // namespace

TEST_CASE("substitute replaces variables and keeps unchanged parts", "[loop_analysis]") {
  Expr i = Var::make("i");
  Expr j = Var::make("j");
  Expr untouched = j * 4;
  Expr e = i * 32 + untouched;
  Expr result = substitute(e, {{i.as<Var>(), Var::make("k") + 1}});
  CHECK(print_expr(result) == "(k + 1) * 32 + j * 4");
  CHECK(result.as<Add>()->b.same_as(untouched));
  CHECK(substitute(untouched, {{i.as<Var>(), i64(0)}}).same_as(untouched));
  CHECK(uses_var(e, i.as<Var>()));
  CHECK_FALSE(uses_var(untouched, i.as<Var>()));
}

TEST_CASE("bound_of gives the range of affine index expressions", "[loop_analysis]") {
  Expr i = Var::make("i");
  Expr j = Var::make("j");
  VarBounds bounds = {{i.as<Var>(), {0, 3}}, {j.as<Var>(), {0, 31}}};
  CHECK(bound_of(i * 32 + j, bounds) == IntBound{0, 127});
  CHECK(bound_of(FloorDiv::make(i * 32 + j, i64(8)), bounds) == IntBound{0, 15});
  CHECK(bound_of(FloorMod::make(j, i64(8)), bounds) == IntBound{0, 7});
  CHECK(bound_of(FloorMod::make(i, i64(8)), bounds) == IntBound{0, 3});
  CHECK(bound_of(min(i * 32 + j, i64(100)), bounds) == IntBound{0, 100});
  CHECK(bound_of(i - j, bounds) == IntBound{-31, 3});
  CHECK(bound_of(Var::make("unknown") + 1, bounds) == IntBound::everything());
  // Unbounded ends stay unbounded through arithmetic.
  IntBound half = bound_of(max(Var::make("u"), i64(0)), bounds);
  CHECK(half.min == 0);
  CHECK(half.max == IntBound::kPosInf);
}

TEST_CASE("bound_of is sound on random expressions", "[loop_analysis]") {
  std::mt19937 rng(7);
  Expr i = Var::make("i");
  Expr j = Var::make("j");
  const Var* vi = i.as<Var>();
  const Var* vj = j.as<Var>();
  VarBounds bounds = {{vi, {-3, 5}}, {vj, {0, 6}}};
  std::uniform_int_distribution<int> pick(0, 9);
  std::uniform_int_distribution<int> constant(1, 7);
  std::function<Expr(int)> random_expr = [&](int depth) -> Expr {
    int choice = depth == 0 ? pick(rng) % 3 : pick(rng);
    switch (choice) {
      case 0: return i;
      case 1: return j;
      case 2: return i64(constant(rng) - 3);
      case 3: return random_expr(depth - 1) + random_expr(depth - 1);
      case 4: return random_expr(depth - 1) - random_expr(depth - 1);
      case 5: return random_expr(depth - 1) * random_expr(depth - 1);
      case 6: return FloorDiv::make(random_expr(depth - 1), i64(constant(rng)));
      case 7: return FloorMod::make(random_expr(depth - 1), i64(constant(rng)));
      case 8: return min(random_expr(depth - 1), random_expr(depth - 1));
      default: return Div::make(random_expr(depth - 1), i64(constant(rng)));
    }
  };
  for (int trial = 0; trial < 200; ++trial) {
    Expr e = random_expr(3);
    IntBound bound = bound_of(e, bounds);
    for (int64_t iv = -3; iv <= 5; ++iv) {
      for (int64_t jv = 0; jv <= 6; ++jv) {
        int64_t value = evaluate(e, vi, iv, vj, jv);
        INFO(print_expr(e) << " at i=" << iv << " j=" << jv);
        CHECK(bound.min <= value);
        CHECK(value <= bound.max);
      }
    }
  }
}

TEST_CASE("same_expr compares index expressions, vector indices included", "[loop_analysis]") {
  Expr i = Var::make("i");
  Expr j = Var::make("j");
  auto index = [](const Expr& v) {
    return Add::make(Mul::make(v, IntImm::make(64)), IntImm::make(3));
  };
  CHECK(same_expr(index(i), index(i)));
  CHECK_FALSE(same_expr(index(i), index(j)));
  // A ramp or a broadcast of the same parts is the same; other lanes, strides or bases
  // are not.
  CHECK(same_expr(Ramp::make(index(i), IntImm::make(1), 16),
                  Ramp::make(index(i), IntImm::make(1), 16)));
  CHECK_FALSE(same_expr(Ramp::make(index(i), IntImm::make(1), 16),
                        Ramp::make(index(i), IntImm::make(1), 8)));
  CHECK_FALSE(same_expr(Ramp::make(index(i), IntImm::make(1), 16),
                        Ramp::make(index(i), IntImm::make(2), 16)));
  CHECK_FALSE(same_expr(Ramp::make(index(i), IntImm::make(1), 16),
                        Ramp::make(index(j), IntImm::make(1), 16)));
  CHECK(same_expr(Broadcast::make(index(i), 16), Broadcast::make(index(i), 16)));
  CHECK_FALSE(same_expr(Broadcast::make(index(i), 16), Broadcast::make(index(i), 8)));
  CHECK_FALSE(same_expr(Broadcast::make(index(i), 16),
                        Ramp::make(index(i), IntImm::make(0), 16)));
}

}  // namespace minic::loop
