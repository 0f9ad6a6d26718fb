// Constant folding for the simplifier: an operator applied to immediates becomes the
// immediate it computes. Course module 4.
//
// The folded value must be the value the interpreter (and compiled code) would compute, or
// the simplifier would change what a kernel does. So each type is folded in its own
// arithmetic, as src/ir/loop/interp_eval.cpp evaluates it: i64 through uint64_t (wrapping
// around), f32 in float (a FloatImm holds a double, but an f32 immediate holds an f32
// value), f64 in double. Types whose arithmetic is rounded in other ways (i8 ... u64, f16,
// bf16) are left alone, as are divisions by 0 (an error at run time) and by -1 (which may
// wrap).
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#include "simplify_rules.h"

#include "pass_util.h"

#include <cmath>

namespace minic::loop::simplify_rules {
namespace {

Expr boolean(bool value) { return IntImm::make(value ? 1 : 0, DataType::boolean()); }

// A comparison of two values of any ordered type; null for other kinds.
template <typename T>
Expr compare(ExprKind kind, T a, T b) {
  switch (kind) {
    case ExprKind::EQ: return boolean(a == b);
    case ExprKind::NE: return boolean(a != b);
    case ExprKind::LT: return boolean(a < b);
    case ExprKind::LE: return boolean(a <= b);
    case ExprKind::GT: return boolean(a > b);
    case ExprKind::GE: return boolean(a >= b);
    default: return {};
  }
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

Expr fold_int(ExprKind kind, int64_t a, int64_t b) {
  auto wrap = [](uint64_t value) { return IntImm::make(static_cast<int64_t>(value)); };
  uint64_t ua = static_cast<uint64_t>(a);
  uint64_t ub = static_cast<uint64_t>(b);
  bool divides = kind == ExprKind::Div || kind == ExprKind::Mod || kind == ExprKind::FloorDiv ||
                 kind == ExprKind::FloorMod;
  if (divides && (b == 0 || b == -1)) return {};
  switch (kind) {
    case ExprKind::Add: return wrap(ua + ub);
    case ExprKind::Sub: return wrap(ua - ub);
    case ExprKind::Mul: return wrap(ua * ub);
    case ExprKind::Div: return IntImm::make(a / b);
    case ExprKind::Mod: return IntImm::make(a % b);
    case ExprKind::FloorDiv: return IntImm::make(floor_div(a, b));
    case ExprKind::FloorMod: return IntImm::make(a - floor_div(a, b) * b);
    case ExprKind::Min: return IntImm::make(std::min(a, b));
    case ExprKind::Max: return IntImm::make(std::max(a, b));
    default: return compare(kind, a, b);
  }
}

Expr fold_bool(ExprKind kind, bool a, bool b) {
  switch (kind) {
    case ExprKind::And: return boolean(a && b);
    case ExprKind::Or: return boolean(a || b);
    case ExprKind::EQ: return boolean(a == b);
    case ExprKind::NE: return boolean(a != b);
    default: return {};
  }
}

// C is float for f32 and double for f64: every operation rounds to the type.
template <typename C>
Expr fold_float(ExprKind kind, DataType type, C a, C b) {
  auto result = [type](C value) { return FloatImm::make(static_cast<double>(value), type); };
  switch (kind) {
    case ExprKind::Add: return result(a + b);
    case ExprKind::Sub: return result(a - b);
    case ExprKind::Mul: return result(a * b);
    case ExprKind::Div: return result(a / b);
    case ExprKind::Mod: return result(std::fmod(a, b));
    // NaN propagates, and otherwise the first operand wins a tie (-0.0 vs 0.0), as the
    // interpreter's Min and Max do.
    case ExprKind::Min:
      return result(std::isnan(a) ? a : std::isnan(b) ? b : (b < a ? b : a));
    case ExprKind::Max:
      return result(std::isnan(a) ? a : std::isnan(b) ? b : (a < b ? b : a));
    default: return compare(kind, a, b);
  }
}

// Casts of immediates: between i64 and bool; from i64 or bool to f32 or f64 (rounded as
// static_cast rounds, which is how the interpreter converts); from f32 to f64 (exact).
Expr fold_cast(const Cast* cast) {
  DataType to = cast->type;
  const Expr& value = cast->value;
  if (value.type() == to) return value;
  if (to.lanes != 1) return {};
  if (const IntImm* imm = value.as<IntImm>()) {
    DType from = value.type().dtype;
    if (from != DType::i64 && from != DType::boolean) return {};
    switch (to.dtype) {
      case DType::i64: return IntImm::make(imm->value);
      case DType::boolean: return boolean(imm->value != 0);
      case DType::f32: return FloatImm::make(static_cast<float>(imm->value), to);
      case DType::f64: return FloatImm::make(static_cast<double>(imm->value), to);
      default: return {};
    }
  }
  const FloatImm* imm = value.as<FloatImm>();
  if (imm && value.type().dtype == DType::f32 && to.dtype == DType::f64) {
    return FloatImm::make(imm->value, to);
  }
  return {};
}

bool is_immediate(const Expr& expr) { return expr.as<IntImm>() || expr.as<FloatImm>(); }

}  // namespace

Expr fold_constant(const Expr& expr) {
  if (const Cast* cast = expr.as<Cast>()) return fold_cast(cast);
  if (expr.kind() == ExprKind::Select) return {};  // the rule table decides selects
  std::vector<Expr> operands = pass_util::operands_of(expr);
  if (operands.empty()) return {};
  for (const Expr& operand : operands) {
    if (!is_immediate(operand)) return {};
  }
  DataType type = operands[0].type();
  if (const Not* node = expr.as<Not>()) return boolean(node->a.as<IntImm>()->value == 0);
  const Expr& a = operands[0];
  const Expr& b = operands[1];
  switch (type.dtype) {
    case DType::i64: return fold_int(expr.kind(), a.as<IntImm>()->value, b.as<IntImm>()->value);
    case DType::boolean:
      return fold_bool(expr.kind(), a.as<IntImm>()->value != 0, b.as<IntImm>()->value != 0);
    case DType::f32:
      return fold_float<float>(expr.kind(), type, static_cast<float>(a.as<FloatImm>()->value),
                               static_cast<float>(b.as<FloatImm>()->value));
    case DType::f64:
      return fold_float<double>(expr.kind(), type, a.as<FloatImm>()->value,
                                b.as<FloatImm>()->value);
    default: return {};
  }
}

}  // namespace minic::loop::simplify_rules
