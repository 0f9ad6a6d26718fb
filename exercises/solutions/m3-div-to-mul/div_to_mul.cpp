// Exercise m3-div-to-mul, solved: the loop pass `div-to-mul`, x / 2^k -> x * 2^-k.
// Course module 3.
//
// A floating division is several times slower than a multiplication (on x86, tens of
// cycles against four), so compilers replace x / c by x * (1 / c). In IEEE arithmetic the
// two agree only when 1 / c is exact: both then round the same real number once. That is
// when c is a power of two (positive or negative) whose reciprocal is a float too.
//
// Chapter: docs/module3-loop-ir.md#2-walking-and-rewriting
#include "minic/ir/loop/visitor.h"
#include "minic/passes/pass_registry.h"

#include <cmath>
#include <optional>

namespace minic::loop {
namespace {

// The divisor's value if it is a float immediate, or a vector of one (a Broadcast of one).
std::optional<double> immediate_of(const Expr& e) {
  if (const FloatImm* imm = e.as<FloatImm>()) return imm->value;
  if (const Broadcast* broadcast = e.as<Broadcast>()) return immediate_of(broadcast->value);
  return std::nullopt;
}

// 1 / c if it is exact in f32: c is ±2^k and 2^-k is an f32 (normal or not).
std::optional<double> exact_reciprocal(double c) {
  if (c == 0 || !std::isfinite(c)) return std::nullopt;
  int exponent = 0;
  if (std::fabs(std::frexp(c, &exponent)) != 0.5) return std::nullopt;  // not ±2^k
  double reciprocal = 1.0 / c;
  float as_float = static_cast<float>(reciprocal);
  if (!std::isfinite(as_float) || static_cast<double>(as_float) != reciprocal) {
    return std::nullopt;
  }
  return reciprocal;
}

// The immediate `value` in the form of `like`: a FloatImm, or a Broadcast of one.
Expr immediate_like(const Expr& like, double value) {
  if (const Broadcast* broadcast = like.as<Broadcast>()) {
    return Broadcast::make(immediate_like(broadcast->value, value), broadcast->lanes);
  }
  return FloatImm::make(value, like.type());
}

class DivisionToMultiplication : public IRMutator {
 public:
  Expr mutate_Div(const Div* node, const Expr& self) override {
    Expr a = mutate(node->a);
    Expr b = mutate(node->b);
    if (a.type().dtype == DType::f32) {
      if (std::optional<double> c = immediate_of(b)) {
        if (std::optional<double> reciprocal = exact_reciprocal(*c)) {
          return Mul::make(a, immediate_like(b, *reciprocal));
        }
      }
    }
    if (a.same_as(node->a) && b.same_as(node->b)) return self;
    return Div::make(a, b);
  }
};

PrimFunc divisions_to_multiplications(PrimFunc func) {
  func.body = DivisionToMultiplication().mutate(func.body);
  return func;
}

}  // namespace

MINIC_REGISTER_LOOP_PASS("div-to-mul", divisions_to_multiplications,
                         "exercise m3-div-to-mul: x / 2^k -> x * 2^-k, exactly");

}  // namespace minic::loop
