// Unit tests for the loop IR simplifier: the rule table on single expressions, exactness
// for floats, constant folding, a randomised check of index expressions over every value
// of their variables, and the statement rules on whole kernels. Course module 3.
#include "loop_pass_kernels.h"
#include "minic/passes/loop/simplify.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <random>

using namespace minic;
using namespace minic::loop;
using namespace minic::loop::test;

namespace {

Expr floordiv(Expr a, Expr b) { return FloorDiv::make(std::move(a), std::move(b)); }
Expr floormod(Expr a, Expr b) { return FloorMod::make(std::move(a), std::move(b)); }
Expr less(Expr a, Expr b) { return LT::make(std::move(a), std::move(b)); }

const Var* var_of(const Expr& var) { return var.as<Var>(); }

std::string simplified(const Expr& expr, const VarBounds& bounds = {}) {
  return print_expr(simplify_expr(expr, bounds));
}

// --- a direct evaluator of integer and boolean expressions, for the randomised test ----

using Assignment = std::map<const Var*, int64_t>;

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int64_t evaluate(const Expr& e, const Assignment& values) {
  auto divisor = [&](const Expr& b) {
    int64_t d = evaluate(b, values);
    if (d == 0) FAIL("division by zero in " << print_expr(e));
    return d;
  };
  if (const IntImm* n = e.as<IntImm>()) return n->value;
  if (const Var* n = e.as<Var>()) return values.at(n);
  if (const Add* n = e.as<Add>()) return evaluate(n->a, values) + evaluate(n->b, values);
  if (const Sub* n = e.as<Sub>()) return evaluate(n->a, values) - evaluate(n->b, values);
  if (const Mul* n = e.as<Mul>()) return evaluate(n->a, values) * evaluate(n->b, values);
  if (const Div* n = e.as<Div>()) return evaluate(n->a, values) / divisor(n->b);
  if (const Mod* n = e.as<Mod>()) return evaluate(n->a, values) % divisor(n->b);
  if (const FloorDiv* n = e.as<FloorDiv>()) return floor_div(evaluate(n->a, values), divisor(n->b));
  if (const FloorMod* n = e.as<FloorMod>()) {
    int64_t a = evaluate(n->a, values);
    int64_t d = divisor(n->b);
    return a - floor_div(a, d) * d;
  }
  if (const Min* n = e.as<Min>()) return std::min(evaluate(n->a, values), evaluate(n->b, values));
  if (const Max* n = e.as<Max>()) return std::max(evaluate(n->a, values), evaluate(n->b, values));
  if (const EQ* n = e.as<EQ>()) return evaluate(n->a, values) == evaluate(n->b, values);
  if (const NE* n = e.as<NE>()) return evaluate(n->a, values) != evaluate(n->b, values);
  if (const LT* n = e.as<LT>()) return evaluate(n->a, values) < evaluate(n->b, values);
  if (const LE* n = e.as<LE>()) return evaluate(n->a, values) <= evaluate(n->b, values);
  if (const GT* n = e.as<GT>()) return evaluate(n->a, values) > evaluate(n->b, values);
  if (const GE* n = e.as<GE>()) return evaluate(n->a, values) >= evaluate(n->b, values);
  if (const And* n = e.as<And>()) return evaluate(n->a, values) && evaluate(n->b, values);
  if (const Or* n = e.as<Or>()) return evaluate(n->a, values) || evaluate(n->b, values);
  if (const Not* n = e.as<Not>()) return !evaluate(n->a, values);
  if (const Select* n = e.as<Select>()) {
    return evaluate(n->condition, values) ? evaluate(n->true_value, values)
                                          : evaluate(n->false_value, values);
  }
  FAIL("the test evaluator has no rule for " << print_expr(e));
  return 0;
}

// Random expressions over the given variables, of bounded depth.
class RandomExprs {
 public:
  RandomExprs(std::vector<Expr> vars, uint32_t seed) : vars_(std::move(vars)), rng_(seed) {}

  Expr index(int depth) {
    int choice = pick(0, depth <= 0 ? 1 : 12);
    switch (choice) {
      case 0: return vars_[pick(0, static_cast<int>(vars_.size()) - 1)];
      case 1: return i64(pick(-8, 8));
      case 2: return index(depth - 1) + index(depth - 1);
      case 3: return index(depth - 1) - index(depth - 1);
      case 4: return index(depth - 1) * i64(pick(-3, 5));
      case 5: return index(depth - 1) * index(depth - 1);
      case 6: return floordiv(index(depth - 1), divisor());
      case 7: return floormod(index(depth - 1), divisor());
      case 8: return Div::make(index(depth - 1), divisor());
      case 9: return Mod::make(index(depth - 1), divisor());
      case 10: return min(index(depth - 1), index(depth - 1));
      case 11: return max(index(depth - 1), index(depth - 1));
      default: return Select::make(condition(depth - 1), index(depth - 1), index(depth - 1));
    }
  }

  Expr condition(int depth) {
    int choice = pick(0, depth <= 0 ? 5 : 8);
    Expr a = index(depth - 1);
    Expr b = index(depth - 1);
    switch (choice) {
      case 0: return LT::make(a, b);
      case 1: return LE::make(a, b);
      case 2: return GT::make(a, b);
      case 3: return GE::make(a, b);
      case 4: return EQ::make(a, b);
      case 5: return NE::make(a, b);
      case 6: return And::make(condition(depth - 1), condition(depth - 1));
      case 7: return Or::make(condition(depth - 1), condition(depth - 1));
      default: return Not::make(condition(depth - 1));
    }
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  Expr divisor() {
    static constexpr int64_t kDivisors[] = {-3, -2, 1, 2, 3, 4, 8, 16};
    return i64(kDivisors[pick(0, 7)]);
  }

  std::vector<Expr> vars_;
  std::mt19937 rng_;
};

}  // namespace

TEST_CASE("simplify: identities and gathered constants", "[loop_pass]") {
  Expr i = Var::make("i");
  Expr j = Var::make("j");
  CHECK(simplified(i + 0) == "i");
  CHECK(simplified(i * 1) == "i");
  CHECK(simplified(i * 0) == "0");
  CHECK(simplified(i - i) == "0");
  CHECK(simplified(i64(3) + i) == "i + 3");
  CHECK(simplified((i + 1) + 2) == "i + 3");
  CHECK(simplified((i + 1) - 3) == "i - 2");
  CHECK(simplified((i * 4) * 8) == "i * 32");
  CHECK(simplified((i + 1) * 4) == "i * 4 + 4");
  CHECK(simplified((i + 5) - (i + 2)) == "3");
  CHECK(simplified((i + 1) + j) == "i + j + 1");
  CHECK(simplified(i * 3 + i * 5) == "i * 8");
  CHECK(simplified(i + i) == "i * 2");
  // A term subtracted from a longer sum that holds it.
  Expr k = Var::make("k");
  CHECK(simplified(i * 64 + j * 16 + k - i * 64) == "j * 16 + k");
  CHECK(simplified(i + (j + k) - k) == "i + j");
  CHECK(simplified(i + j - k) == "i + j - k");
}

TEST_CASE("simplify: folds constants as the interpreter computes them", "[loop_pass]") {
  CHECK(simplified(Div::make(i64(-7), i64(2))) == "-3");
  CHECK(simplified(Mod::make(i64(-7), i64(2))) == "-1");
  CHECK(simplified(floordiv(i64(-7), i64(2))) == "-4");
  CHECK(simplified(floormod(i64(-7), i64(2))) == "1");
  CHECK(simplified(min(i64(4), i64(-2)) + max(i64(4), i64(-2))) == "2");
  CHECK(simplified(less(i64(2), i64(3))) == "true");
  // Division by zero is left for run time, where it is an error.
  CHECK(simplified(floordiv(i64(1), i64(0))) == "floordiv(1, 0)");
  // f32 arithmetic is done in float, not double.
  Expr sum = simplify_expr(f32(0.1) + f32(0.2), {});
  REQUIRE(sum.as<FloatImm>());
  CHECK(sum.as<FloatImm>()->value == static_cast<double>(0.1f + 0.2f));
  CHECK(sum.as<FloatImm>()->value != 0.1 + 0.2);
}

TEST_CASE("simplify: float rules are exact", "[loop_pass]") {
  Buffer A = BufferNode::make("A", DType::f32, {4});
  Expr i = Var::make("i");
  Expr a = Load::make(A, {i});
  CHECK(simplified(a * 1.0) == "A[i]");
  CHECK(simplified(a - f32(0.0)) == "A[i]");
  CHECK(simplified(Div::make(a, f32(1.0))) == "A[i]");
  CHECK(simplified(f32(2.0) * a) == "A[i] * 2.0");
  // -0.0 + 0.0 is +0.0, and NaN * 0 is NaN: these stay.
  CHECK(simplified(a + 0.0) == "A[i] + 0.0");
  CHECK(simplified(a * 0.0) == "A[i] * 0.0");
  CHECK(simplified(a - f32(-0.0)) == "A[i] - -0.0");
  CHECK(simplified(a - a) == "A[i] - A[i]");
  // Reassociating would round differently.
  CHECK(simplified((a + 1.0) + 2.0) == "A[i] + 1.0 + 2.0");
  // min(-0.0, 0.0) and min(0.0, -0.0) differ: float min keeps its operand order.
  CHECK(simplified(min(f32(1.0), a)) == "min(1.0, A[i])");
}

TEST_CASE("simplify: bounds decide floordiv, floormod, min, max and comparisons",
          "[loop_pass]") {
  Expr i = Var::make("i");
  Expr j = Var::make("j");
  Expr f = Var::make("f");
  VarBounds bounds = {{var_of(i), {0, 3}}, {var_of(j), {0, 31}}, {var_of(f), {0, 127}}};
  CHECK(simplified(floordiv(i * 32 + j, i64(32)), bounds) == "i");
  CHECK(simplified(floormod(i * 32 + j, i64(32)), bounds) == "j");
  CHECK(simplified(floordiv(j, i64(32)), bounds) == "0");
  CHECK(simplified(floormod(j + 64, i64(32)), bounds) == "j");
  CHECK(simplified(Div::make(i * 32 + j, i64(8)), bounds) == "i * 4 + floordiv(j, 8)");
  CHECK(simplified(floordiv(f, i64(32)) * 32 + floormod(f, i64(32)), bounds) == "f");
  CHECK(simplified(less(i * 32 + j, i64(128)), bounds) == "true");
  CHECK(simplified(less(i * 32 + j, i64(100)), bounds) == "i * 32 + j < 100");
  CHECK(simplified(GE::make(i * 32 + j, i64(0)), bounds) == "true");
  CHECK(simplified(less(j, j + 1)) == "true");
  CHECK(simplified(min(i, i64(10)), bounds) == "i");
  CHECK(simplified(max(j, i64(0)), bounds) == "j");
  CHECK(simplified(min(j, i64(10)), bounds) == "min(j, 10)");
  CHECK(simplified(Select::make(less(i, i64(4)), j, i), bounds) == "j");
  // Without bounds nothing is known of i: floordiv(i, 32) may be anything.
  CHECK(simplified(floordiv(i, i64(32))) == "floordiv(i, 32)");
  CHECK(simplified(floormod(i, i64(32))) == "floormod(i, 32)");
}

TEST_CASE("simplify: one quotient, and a number's digits put back together", "[loop_pass]") {
  Expr i = Var::make("i");
  Expr f = Var::make("f");
  VarBounds bounds = {{var_of(i), {0, 3}}, {var_of(f), {0, 67}}};
  // i + 192 lies in [192, 195], all in the 14th run of 14: a loop's last, shorter part.
  const Expr tail = floormod(i + 192, i64(14)) + 182;
  // 64 = 16 * 4: floordiv(f, 16) * 64 + floormod(f, 16) * 4 is f * 4, in each order.
  const Expr digits = floordiv(f, i64(16)) * 64 + floormod(f, i64(16)) * 4;
  const Expr digits_plus = floordiv(f, i64(16)) * 64 + (floormod(f, i64(16)) * 4 + i);
  const Expr plus_digits = (i + floordiv(f, i64(16)) * 64) + floormod(f, i64(16)) * 4;
  CHECK(simplified(floormod(i + 192, i64(14)), bounds) == "i + 10");
  CHECK(simplified(tail, bounds) == "i + 192");
  CHECK(simplified(digits, bounds) == "f * 4");
  CHECK(simplified(digits_plus, bounds) == "f * 4 + i");
  CHECK(simplified(plus_digits, bounds) == "i + f * 4");
  // Not when the range spans two runs, or the digits' weights do not match.
  const Expr two_runs = floormod(i + 12, i64(14));
  const Expr mismatched = floordiv(f, i64(16)) * 60 + floormod(f, i64(16)) * 4;
  CHECK(simplified(two_runs, bounds) == "floormod(i + 12, 14)");
  CHECK(simplified(mismatched, bounds) == "floordiv(f, 16) * 60 + floormod(f, 16) * 4");
  for (const Expr& expr : {tail, digits, digits_plus, plus_digits, two_runs, mismatched}) {
    Expr result = simplify_expr(expr, bounds);
    for (int64_t vi = 0; vi <= 3; ++vi) {
      for (int64_t vf = 0; vf <= 67; ++vf) {
        Assignment values = {{var_of(i), vi}, {var_of(f), vf}};
        REQUIRE(evaluate(result, values) == evaluate(expr, values));
      }
    }
  }
}

// A flattened index (a reshape's, a transpose's) split back into its parts, whatever the
// order of its terms: the table's rules for sums and simplify_rules.cpp's split_by_divisor.
TEST_CASE("simplify: a flattened index splits back into its parts", "[loop_pass]") {
  Expr i = Var::make("i");
  Expr l = Var::make("l");
  Expr j = Var::make("j");
  Expr k = Var::make("k");
  VarBounds bounds = {{var_of(i), {0, 7}}, {var_of(l), {0, 15}}, {var_of(j), {0, 3}},
                      {var_of(k), {0, 13}}};
  // j * 14 + k < 56: steps of 56 over 224 = 4 * 56.
  Expr flat = i * 56 + j * 14 + k;
  CHECK(simplified(floordiv(flat, i64(56)), bounds) == "i");
  CHECK(simplified(floordiv(flat, i64(224)), bounds) == "floordiv(i, 4)");
  CHECK(simplified(floormod(flat, i64(224)), bounds) == "floormod(i, 4) * 56 + j * 14 + k");
  Expr shuffled = i * 896 + l * 56 + j * 14 + k;  // l in the middle: i * 16 + l steps of 56
  CHECK(simplified(floordiv(shuffled, i64(224)), bounds) == "i * 4 + floordiv(l, 4)");
  CHECK(simplified(floormod(shuffled, i64(224)), bounds) ==
        "floormod(l, 4) * 56 + j * 14 + k");
  // Each keeps its value at every point.
  for (const Expr& expr :
       {floordiv(flat, i64(224)), floormod(flat, i64(224)), floordiv(shuffled, i64(224)),
        floormod(shuffled, i64(224)), floordiv(shuffled, i64(112)),
        floormod(k + j * 14 + i * 896, i64(448))}) {
    Expr result = simplify_expr(expr, bounds);
    INFO("before: " << print_expr(expr) << "\nafter:  " << print_expr(result));
    for (int64_t vi = 0; vi <= 7; ++vi) {
      for (int64_t vl = 0; vl <= 15; ++vl) {
        for (int64_t vj = 0; vj <= 3; ++vj) {
          for (int64_t vk = 0; vk <= 13; ++vk) {
            Assignment values = {
                {var_of(i), vi}, {var_of(l), vl}, {var_of(j), vj}, {var_of(k), vk}};
            REQUIRE(evaluate(result, values) == evaluate(expr, values));
          }
        }
      }
    }
  }
}

TEST_CASE("simplify: random index expressions keep their value everywhere", "[loop_pass]") {
  Expr a = Var::make("a");
  Expr b = Var::make("b");
  Expr c = Var::make("c");
  VarBounds bounds = {{var_of(a), {0, 3}}, {var_of(b), {0, 5}}, {var_of(c), {-2, 2}}};
  RandomExprs random({a, b, c}, 2024);
  int changed = 0;
  for (int n = 0; n < 4000; ++n) {
    Expr expr = n % 3 == 2 ? random.condition(3) : random.index(4);
    Expr result = simplify_expr(expr, bounds);
    if (!result.same_as(expr)) ++changed;
    INFO("before: " << print_expr(expr) << "\nafter:  " << print_expr(result));
    REQUIRE(result.type() == expr.type());
    for (int64_t va = 0; va <= 3; ++va) {
      for (int64_t vb = 0; vb <= 5; ++vb) {
        for (int64_t vc = -2; vc <= 2; ++vc) {
          Assignment values = {{var_of(a), va}, {var_of(b), vb}, {var_of(c), vc}};
          REQUIRE(evaluate(result, values) == evaluate(expr, values));
        }
      }
    }
  }
  // The test is only worth something if the simplifier does rewrite most expressions.
  CHECK(changed > 2500);
}

TEST_CASE("simplify: statements", "[loop_pass]") {
  SECTION("a loop of extent 1 becomes its body, unless it is bound to a GPU axis") {
    // (The GPU loop stays, but its variable has one value, which replaces it.)
    PrimFunc func = parse_func(R"(
func @f(A: f32[4], B: f32[4]) {
  for i in 2..+1 {
    B[i] = A[i + 1 - 1]
  }
  for bx in 0..1 bind(blockIdx.x) {
    B[bx] = A[bx]
  }
}
)");
    PrimFunc result = simplify(func);
    CHECK(print_stmt(result.body) ==
          "B[2] = A[2]\n"
          "for bx in 0..1 bind(blockIdx.x) {\n"
          "  B[0] = A[0]\n"
          "}\n");
    require_same_results(func, result);
  }
  SECTION("ifs of a known condition keep the branch taken") {
    PrimFunc func = parse_func(R"(
func @f(A: f32[8], B: f32[8]) {
  for i in 0..8 {
    if (i < 8) {
      B[i] = A[i]
    } else {
      B[i] = 0.0
    }
    if (i >= 8) {
      B[i] = 1.0
    }
  }
}
)");
    PrimFunc result = simplify(func);
    CHECK(print_stmt(result.body) ==
          "for i in 0..8 {\n"
          "  B[i] = A[i]\n"
          "}\n");
    require_same_results(func, result);
  }
  SECTION("a block predicate that always holds is dropped; one that may not stays") {
    PrimFunc exact = parse_func(R"(
func @f(A: f32[128], B: f32[128]) {
  for io in 0..4 {
    for ii in 0..32 {
      block B(v = spatial(128) io * 32 + ii) where (io * 32 + ii < 128) {
        B[floordiv(v, 32) * 32 + floormod(v, 32)] = A[v] * 1.0
      }
    }
  }
}
)");
    PrimFunc result = simplify(exact);
    CHECK(print_stmt(result.body) ==
          "for io in 0..4 {\n"
          "  for ii in 0..32 {\n"
          "    block B(v = spatial(128) io * 32 + ii) {\n"
          "      B[v] = A[v]\n"
          "    }\n"
          "  }\n"
          "}\n");
    require_same_results(exact, result);
    PrimFunc tail = parse_func(kGuardedTail);
    CHECK(print_func(simplify(tail)) == print_func(tail));
  }
}

TEST_CASE("simplify: every test kernel computes the same and verifies", "[loop_pass]") {
  for (const auto& [name, text] : all_pass_kernels()) {
    INFO("kernel " << name);
    PrimFunc func = parse_func(text);
    PrimFunc result = simplify(func);
    require_same_results(func, result, 7);
    // Simplifying again changes nothing.
    CHECK(print_func(simplify(result)) == print_func(result));
  }
}
