// Structural equality, operands of operator nodes, and the no-op statement. Course module 4.
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#include "pass_util.h"

#include "minic/ir/loop/access.h"
#include "minic/ir/loop/binary_operands.h"
#include "minic/support/error.h"

#include <cstring>

namespace minic::loop::pass_util {
namespace {

bool equal_lists(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!equal_exprs(a[i], b[i])) return false;
  }
  return true;
}

}  // namespace

bool equal_exprs(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a || !b || a.kind() != b.kind() || !(a.type() == b.type())) return false;
  switch (a.kind()) {
    case ExprKind::IntImm: return a.as<IntImm>()->value == b.as<IntImm>()->value;
    // Bitwise, so that NaN equals NaN and -0.0 differs from 0.0.
    case ExprKind::FloatImm: {
      double x = a.as<FloatImm>()->value;
      double y = b.as<FloatImm>()->value;
      return std::memcmp(&x, &y, sizeof(double)) == 0;
    }
    case ExprKind::Var: return false;  // distinct Var nodes are distinct variables
    case ExprKind::Not: return equal_exprs(a.as<Not>()->a, b.as<Not>()->a);
    case ExprKind::Select: {
      const Select* x = a.as<Select>();
      const Select* y = b.as<Select>();
      return equal_exprs(x->condition, y->condition) &&
             equal_exprs(x->true_value, y->true_value) &&
             equal_exprs(x->false_value, y->false_value);
    }
    case ExprKind::Cast: return equal_exprs(a.as<Cast>()->value, b.as<Cast>()->value);
    case ExprKind::Load: {
      const Load* x = a.as<Load>();
      const Load* y = b.as<Load>();
      return x->buffer == y->buffer && equal_lists(x->indices, y->indices);
    }
    case ExprKind::Call: {
      const Call* x = a.as<Call>();
      const Call* y = b.as<Call>();
      return x->name == y->name && equal_lists(x->args, y->args);
    }
    case ExprKind::Ramp: {
      const Ramp* x = a.as<Ramp>();
      const Ramp* y = b.as<Ramp>();
      return x->lanes == y->lanes && equal_exprs(x->base, y->base) &&
             equal_exprs(x->stride, y->stride);
    }
    case ExprKind::Broadcast:
      return a.as<Broadcast>()->lanes == b.as<Broadcast>()->lanes &&
             equal_exprs(a.as<Broadcast>()->value, b.as<Broadcast>()->value);
    default: break;
  }
  // The operators: Add ... Or. Their operands are all there is to compare.
  return equal_lists(operands_of(a), operands_of(b));
}

std::vector<Expr> operands_of(const Expr& expr) {
  if (auto [a, b] = binary_operands(expr); a) return {*a, *b};
  if (const Not* node = expr.as<Not>()) return {node->a};
  if (const Select* select = expr.as<Select>()) {
    return {select->condition, select->true_value, select->false_value};
  }
  return {};
}

const Expr& operand_of(const Expr& expr, size_t index) {
  if (auto [a, b] = binary_operands(expr); a) return index == 0 ? *a : *b;
  if (const Not* node = expr.as<Not>()) return node->a;
  if (const Select* select = expr.as<Select>()) {
    return index == 0 ? select->condition : index == 1 ? select->true_value : select->false_value;
  }
  internal_fail("{} is not an operator", expr_kind_name(expr.kind()));
}

Expr make_operator(ExprKind kind, const std::vector<Expr>& operands) {
  switch (kind) {
#define MINIC_BINARY_CASE(Node) \
  case ExprKind::Node: return Node::make(operands.at(0), operands.at(1));
    MINIC_BINARY_CASE(Add) MINIC_BINARY_CASE(Sub) MINIC_BINARY_CASE(Mul)
    MINIC_BINARY_CASE(Div) MINIC_BINARY_CASE(Mod) MINIC_BINARY_CASE(FloorDiv)
    MINIC_BINARY_CASE(FloorMod) MINIC_BINARY_CASE(Min) MINIC_BINARY_CASE(Max)
    MINIC_BINARY_CASE(EQ) MINIC_BINARY_CASE(NE) MINIC_BINARY_CASE(LT) MINIC_BINARY_CASE(LE)
    MINIC_BINARY_CASE(GT) MINIC_BINARY_CASE(GE) MINIC_BINARY_CASE(And) MINIC_BINARY_CASE(Or)
#undef MINIC_BINARY_CASE
    case ExprKind::Not: return Not::make(operands.at(0));
    case ExprKind::Select: return Select::make(operands.at(0), operands.at(1), operands.at(2));
    default: internal_fail("{} is not an operator", expr_kind_name(kind));
  }
}

bool uses_buffer(const Stmt& stmt, const BufferNode* buffer) {
  return buffer_use(stmt).touches(buffer);
}

Stmt no_op() { return Evaluate::make(IntImm::make(0)); }

bool is_no_op(const Stmt& stmt) {
  if (!stmt) return true;
  const Evaluate* evaluate = stmt.as<Evaluate>();
  return evaluate && (evaluate->value.as<IntImm>() || evaluate->value.as<FloatImm>());
}

Stmt sequence(const std::vector<Stmt>& stmts) {
  std::vector<Stmt> kept;
  for (const Stmt& stmt : stmts) {
    if (!is_no_op(stmt)) kept.push_back(stmt);
  }
  return kept.empty() ? no_op() : Seq::make(std::move(kept));
}

}  // namespace minic::loop::pass_util
