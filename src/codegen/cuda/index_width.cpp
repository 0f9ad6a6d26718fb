// fits_int32: the 32-bit index proof of index_width.h. Course module 6.
//
// Chapter: docs/module6-cuda.md#emitting-cuda-c
#include "index_width.h"

#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/binary_operands.h"
#include "minic/ir/loop/visitor.h"

#include <limits>

namespace minic::codegen {
namespace {

using namespace loop;

constexpr int64_t kMin = std::numeric_limits<int32_t>::min();
constexpr int64_t kMax = std::numeric_limits<int32_t>::max();

class Int32Proof : public IRVisitor {
 public:
  bool fits = true;

  void visit_For(const For* node) override {
    check(node->min);
    check(node->extent);
    IntBound min = bound_of(node->min, bounds_);
    IntBound extent = bound_of(node->extent, bounds_);
    int64_t hi = 0;
    if (!min.is_bounded() || !extent.is_bounded() ||
        __builtin_add_overflow(min.max, std::max<int64_t>(extent.max, 1) - 1, &hi)) {
      fits = false;
      return;
    }
    define(node->var.as<Var>(), {min.min, hi});
    visit(node->body);
    bounds_.erase(node->var.as<Var>());
  }
  void visit_Block(const Block* node) override {
    for (const IterVar& iter : node->iter_vars) {
      check(iter.binding);
      define(iter.var.as<Var>(), {0, std::max<int64_t>(iter.extent, 1) - 1});
    }
    check(node->predicate);
    visit(node->init);
    visit(node->body);
    for (const IterVar& iter : node->iter_vars) bounds_.erase(iter.var.as<Var>());
  }
  void visit_Store(const Store* node) override {
    for (const Expr& index : node->indices) check(index);
    check(node->value);
  }
  void visit_IfThenElse(const IfThenElse* node) override {
    check(node->condition);
    visit(node->then_case);
    visit(node->else_case);
  }
  void visit_Evaluate(const Evaluate* node) override { check(node->value); }

 private:
  void define(const Var* var, IntBound range) {
    if (range.min < kMin || range.max > kMax) fits = false;
    bounds_[var] = range;
  }

  bool uses_loop_var(const Expr& e) const {
    return uses_any_var(e, [&](const Var* var) { return bounds_.count(var) > 0; });
  }

  // Every integer expression of loop variables in `e` lies in int32.
  void check(const Expr& e) {
    if (!e || !fits) return;
    DataType type = e.type();
    if (type.dtype == DType::i64 && uses_loop_var(e)) {
      if (type.lanes != 1) {
        fits = false;  // vector code: written lane by lane with 64-bit lanes
        return;
      }
      IntBound range = bound_of(e, bounds_);
      if (!range.is_bounded() || range.min < kMin || range.max > kMax) fits = false;
    }
    auto [a, b] = binary_operands(e);
    if (a) {
      check(*a);
      check(*b);
    } else if (const Load* load = e.as<Load>()) {
      for (const Expr& index : load->indices) check(index);
    } else if (const Select* select = e.as<Select>()) {
      check(select->condition);
      check(select->true_value);
      check(select->false_value);
    } else if (const Cast* cast = e.as<Cast>()) {
      check(cast->value);
    } else if (const Not* negation = e.as<Not>()) {
      check(negation->a);
    } else if (const Call* call = e.as<Call>()) {
      for (const Expr& arg : call->args) check(arg);
    } else if (e.as<Ramp>() || e.as<Broadcast>()) {
      fits = fits && !uses_loop_var(e);
    }
  }

  VarBounds bounds_;
};

}  // namespace

bool fits_int32(const Stmt& kernel) {
  Int32Proof proof;
  proof.visit(kernel);
  return proof.fits;
}

}  // namespace minic::codegen
