// Substitution, variable uses, interval bounds and structural equality of loop IR
// expressions. Course module 3.
//
// Chapter: docs/module3-loop-ir.md#2-walking-and-rewriting
#include "minic/ir/loop/analysis.h"

#include "minic/ir/loop/visitor.h"

#include <algorithm>

namespace minic::loop {
namespace {

class Substituter : public IRMutator {
 public:
  explicit Substituter(const VarMap& map) : map_(map) {}

  Expr mutate_Var(const Var* node, const Expr& self) override {
    auto it = map_.find(node);
    return it == map_.end() ? self : it->second;
  }

 private:
  const VarMap& map_;
};

class VarFinder : public IRVisitor {
 public:
  explicit VarFinder(const std::function<bool(const Var*)>& pred) : pred_(pred) {}
  bool found = false;

  void visit_Var(const Var* node) override { found = found || pred_(node); }
  // Loop and iteration variables are definitions; their uses inside are what counts.
  void visit_For(const For* node) override {
    visit(node->min);
    visit(node->extent);
    visit(node->body);
  }

 private:
  const std::function<bool(const Var*)>& pred_;
};

// Saturating arithmetic on bounds: an infinite end stays infinite.
constexpr int64_t kNegInf = IntBound::kNegInf;
constexpr int64_t kPosInf = IntBound::kPosInf;

int64_t saturate(__int128 value) {
  if (value <= kNegInf) return kNegInf;
  if (value >= kPosInf) return kPosInf;
  return static_cast<int64_t>(value);
}

bool infinite(int64_t x) { return x == kNegInf || x == kPosInf; }

int64_t add_ends(int64_t a, int64_t b) {
  if (infinite(a)) return a;
  if (infinite(b)) return b;
  return saturate(static_cast<__int128>(a) + b);
}

int64_t mul_ends(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  bool negative = (a < 0) != (b < 0);
  if (infinite(a) || infinite(b)) return negative ? kNegInf : kPosInf;
  return saturate(static_cast<__int128>(a) * b);
}

IntBound add(IntBound a, IntBound b) {
  return {add_ends(a.min, b.min), add_ends(a.max, b.max)};
}

IntBound negate(IntBound a) {
  auto neg = [](int64_t x) { return x == kNegInf ? kPosInf : x == kPosInf ? kNegInf : -x; };
  return {neg(a.max), neg(a.min)};
}

IntBound mul(IntBound a, IntBound b) {
  int64_t c[4] = {mul_ends(a.min, b.min), mul_ends(a.min, b.max), mul_ends(a.max, b.min),
                  mul_ends(a.max, b.max)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

// Division by a positive constant is monotonic: the ends map to the ends.
IntBound floor_div_by(IntBound a, int64_t d) {
  auto div = [d](int64_t x) { return infinite(x) ? x : floor_div(x, d); };
  return {div(a.min), div(a.max)};
}

IntBound trunc_div_by(IntBound a, int64_t d) {
  auto div = [d](int64_t x) { return infinite(x) ? x : x / d; };
  return {div(a.min), div(a.max)};
}

IntBound floor_mod_by(IntBound a, int64_t d) {
  // Within one period the value is a itself, shifted.
  if (a.is_bounded() && floor_div(a.min, d) == floor_div(a.max, d)) {
    int64_t base = floor_div(a.min, d) * d;
    return {a.min - base, a.max - base};
  }
  return {0, d - 1};
}

IntBound trunc_mod_by(IntBound a, int64_t d) {
  if (a.min >= 0) return a.max < d ? a : IntBound{0, d - 1};
  if (a.max <= 0) return a.min > -d ? a : IntBound{-(d - 1), 0};
  return {-(d - 1), d - 1};
}

IntBound unite(IntBound a, IntBound b) { return {std::min(a.min, b.min), std::max(a.max, b.max)}; }

class BoundEvaluator {
 public:
  explicit BoundEvaluator(const VarBounds& bounds) : bounds_(bounds) {}

  IntBound eval(const Expr& e) {
    if (e.type().lanes != 1 || is_float(e.type().dtype)) return IntBound::everything();
    if (auto imm = e.as<IntImm>()) return IntBound::single(imm->value);
    if (auto var = e.as<Var>()) {
      auto it = bounds_.find(var);
      return it == bounds_.end() ? IntBound::everything() : it->second;
    }
    if (auto n = e.as<Add>()) return add(eval(n->a), eval(n->b));
    if (auto n = e.as<Sub>()) return add(eval(n->a), negate(eval(n->b)));
    if (auto n = e.as<Mul>()) return mul(eval(n->a), eval(n->b));
    if (auto n = e.as<Min>()) {
      IntBound a = eval(n->a), b = eval(n->b);
      return {std::min(a.min, b.min), std::min(a.max, b.max)};
    }
    if (auto n = e.as<Max>()) {
      IntBound a = eval(n->a), b = eval(n->b);
      return {std::max(a.min, b.min), std::max(a.max, b.max)};
    }
    if (auto n = e.as<Select>()) return unite(eval(n->true_value), eval(n->false_value));
    if (auto n = e.as<Cast>()) {
      return is_float(n->value.type().dtype) ? IntBound::everything() : eval(n->value);
    }
    if (auto n = e.as<FloorDiv>()) return by_constant(n->a, n->b, floor_div_by);
    if (auto n = e.as<Div>()) return by_constant(n->a, n->b, trunc_div_by);
    if (auto n = e.as<FloorMod>()) return by_constant(n->a, n->b, floor_mod_by);
    if (auto n = e.as<Mod>()) return by_constant(n->a, n->b, trunc_mod_by);
    return IntBound::everything();
  }

 private:
  // a OP d for a positive constant d; anything else is unbounded.
  IntBound by_constant(const Expr& a, const Expr& b, IntBound (*op)(IntBound, int64_t)) {
    std::optional<int64_t> d = as_const_int(b);
    if (!d || *d <= 0) return IntBound::everything();
    return op(eval(a), *d);
  }

  const VarBounds& bounds_;
};

class BufferReplacer : public IRMutator {
 public:
  BufferReplacer(const Buffer& from, const Buffer& to) : from_(from), to_(to) {}

  Expr mutate_Load(const Load* node, const Expr& self) override {
    Expr result = IRMutator::mutate_Load(node, self);
    if (node->buffer != from_) return result;
    return Load::make(to_, result.as<Load>()->indices);
  }
  Stmt mutate_Store(const Store* node, const Stmt& self) override {
    Stmt result = IRMutator::mutate_Store(node, self);
    if (node->buffer != from_) return result;
    const auto* store = result.as<Store>();
    return Store::make(to_, store->indices, store->value);
  }
  Stmt mutate_Allocate(const Allocate* node, const Stmt& self) override {
    Stmt result = IRMutator::mutate_Allocate(node, self);
    if (node->buffer != from_) return result;
    return Allocate::make(to_, result.as<Allocate>()->body);
  }
  Stmt mutate_Block(const Block* node, const Stmt& self) override {
    Stmt result = IRMutator::mutate_Block(node, self);
    Block::Parts parts = result.as<Block>()->parts();
    bool changed = false;
    for (auto* regions : {&parts.reads, &parts.writes}) {
      for (BufferRegion& region : *regions) {
        if (region.buffer == from_) {
          region.buffer = to_;
          changed = true;
        }
      }
    }
    for (Buffer& buffer : parts.alloc_buffers) {
      if (buffer == from_) {
        buffer = to_;
        changed = true;
      }
    }
    return changed ? Block::make(std::move(parts)) : result;
  }

 private:
  const Buffer& from_;
  const Buffer& to_;
};

class StoredBuffers : public IRVisitor {
 public:
  std::set<const BufferNode*> stored;
  void visit_Store(const Store* node) override {
    stored.insert(node->buffer.get());
    IRVisitor::visit_Store(node);
  }
};

class CallFinder : public IRVisitor {
 public:
  explicit CallFinder(const std::string& name) : name_(name) {}
  bool found = false;

  void visit_Call(const Call* node) override {
    found = found || node->name == name_;
    IRVisitor::visit_Call(node);
  }

 private:
  const std::string& name_;
};

}  // namespace

Expr substitute(const Expr& expr, const VarMap& map) {
  if (map.empty()) return expr;
  Substituter substituter(map);
  return substituter.mutate(expr);
}

Stmt substitute(const Stmt& stmt, const VarMap& map) {
  if (map.empty()) return stmt;
  Substituter substituter(map);
  return substituter.mutate(stmt);
}

bool uses_any_var(const Expr& expr, const std::function<bool(const Var*)>& pred) {
  VarFinder finder(pred);
  finder.visit(expr);
  return finder.found;
}

bool uses_var(const Expr& expr, const Var* var) {
  return uses_any_var(expr, [var](const Var* v) { return v == var; });
}

bool uses_var(const Stmt& stmt, const Var* var) {
  std::function<bool(const Var*)> pred = [var](const Var* v) { return v == var; };
  VarFinder finder(pred);
  finder.visit(stmt);
  return finder.found;
}

bool reads_memory(const Expr& expr) {
  struct LoadFinder : IRVisitor {
    bool found = false;
    void visit_Load(const Load*) override { found = true; }
  } finder;
  finder.visit(expr);
  return finder.found;
}

IntBound bound_of(const Expr& expr, const VarBounds& bounds) {
  return BoundEvaluator(bounds).eval(expr);
}

void Linear::add_term(const Expr& var, int64_t coefficient) {
  for (auto& [existing, value] : terms) {
    if (existing.same_as(var)) {
      value += coefficient;
      return;
    }
  }
  terms.emplace_back(var, coefficient);
}

void Linear::add(const Linear& other, int64_t sign) {
  for (const auto& [var, coefficient] : other.terms) add_term(var, sign * coefficient);
  constant += sign * other.constant;
}

std::optional<Linear> linearize(const Expr& expr) {
  Linear result;
  if (std::optional<int64_t> value = as_const_int(expr)) {
    result.constant = *value;
    return result;
  }
  if (expr.as<Var>()) {
    result.add_term(expr, 1);
    return result;
  }
  auto both = [&](const Expr& a, const Expr& b, int64_t sign) -> std::optional<Linear> {
    std::optional<Linear> left = linearize(a);
    std::optional<Linear> right = left ? linearize(b) : std::nullopt;
    if (!right) return std::nullopt;
    left->add(*right, sign);
    return left;
  };
  if (const auto* node = expr.as<Add>()) return both(node->a, node->b, 1);
  if (const auto* node = expr.as<Sub>()) return both(node->a, node->b, -1);
  if (const auto* node = expr.as<Mul>()) {
    std::optional<int64_t> factor = as_const_int(node->b);
    Expr other = node->a;
    if (!factor) {
      factor = as_const_int(node->a);
      other = node->b;
    }
    std::optional<Linear> inner = factor ? linearize(other) : std::nullopt;
    if (!inner) return std::nullopt;
    Linear scaled;
    scaled.add(*inner, *factor);
    return scaled;
  }
  return std::nullopt;
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

std::optional<int64_t> as_const_int(const Expr& expr) {
  if (auto imm = expr.as<IntImm>(); imm && !is_float(expr.type().dtype)) return imm->value;
  return std::nullopt;
}

Stmt replace_buffer(const Stmt& root, const Buffer& from, const Buffer& to) {
  BufferReplacer replacer(from, to);
  return replacer.mutate(root);
}

bool same_expr(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a || !b || a.kind() != b.kind() || !(a.type() == b.type())) return false;
  if (const auto* imm = a.as<IntImm>()) return imm->value == b.as<IntImm>()->value;
  switch (a.kind()) {
#define MINIC_SAME_BINARY(Node)                            \
  case ExprKind::Node: {                                   \
    const auto* x = a.as<Node>();                          \
    const auto* y = b.as<Node>();                          \
    return same_expr(x->a, y->a) && same_expr(x->b, y->b); \
  }
    MINIC_SAME_BINARY(Add)
    MINIC_SAME_BINARY(Sub)
    MINIC_SAME_BINARY(Mul)
    MINIC_SAME_BINARY(FloorDiv)
    MINIC_SAME_BINARY(FloorMod)
    MINIC_SAME_BINARY(Div)
    MINIC_SAME_BINARY(Mod)
    MINIC_SAME_BINARY(Min)
    MINIC_SAME_BINARY(Max)
#undef MINIC_SAME_BINARY
    case ExprKind::Ramp: {
      const auto* x = a.as<Ramp>();
      const auto* y = b.as<Ramp>();
      return x->lanes == y->lanes && same_expr(x->base, y->base) &&
             same_expr(x->stride, y->stride);
    }
    case ExprKind::Broadcast:
      return a.as<Broadcast>()->lanes == b.as<Broadcast>()->lanes &&
             same_expr(a.as<Broadcast>()->value, b.as<Broadcast>()->value);
    default:
      return false;
  }
}

bool calls(const Stmt& stmt, const std::string& name) {
  CallFinder finder(name);
  finder.visit(stmt);
  return finder.found;
}

std::set<const BufferNode*> stored_buffers(const Stmt& body) {
  StoredBuffers stores;
  stores.visit(body);
  return std::move(stores.stored);
}

Stmt barrier_stmt() { return Evaluate::make(Call::make(DataType::int64(), "barrier", {})); }

bool is_barrier(const Expr& expr) {
  const Call* call = expr.as<Call>();
  return call && call->name == "barrier";
}

bool is_barrier(const Stmt& stmt) {
  const Evaluate* node = stmt.as<Evaluate>();
  return node && is_barrier(node->value);
}

}  // namespace minic::loop
