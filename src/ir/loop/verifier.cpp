// The loop IR verifier. Course module 3.
//
// One walk over the function (an IRVisitor) keeps the scope it is in:
//   - vars_: every variable defined around the current node, each visible or hidden (a
//     block hides the loops outside it from its body), with its range [lo, hi] when the
//     bounds of its loop are known;
//   - buffers_: the parameters and the buffers allocated around the current node;
//   - blocks_: the names of the enclosing blocks, innermost last, for error messages;
//   - thread_loops_: how many threadIdx loops enclose the current node.
// Ranges come from a small interval analysis of index expressions (bounds() below): exact
// for sums and constant multiples of loop variables, nullopt where it does not know.
// The rules are listed in verifier.h; the first violation throws Error.
//
// Chapter: docs/module3-loop-ir.md#4-the-verifier-and-the-interpreter-the-oracle
#include "minic/ir/loop/verifier.h"

#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/gpu_axis.h"
#include "minic/ir/loop/visitor.h"
#include "minic/support/error.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace minic::loop {

namespace {

// The values an index expression can take: lo <= value <= hi.
struct Interval {
  int64_t lo;
  int64_t hi;
};

// Interval arithmetic that gives up (nullopt) on overflow instead of wrapping.
std::optional<Interval> add(Interval a, Interval b) {
  Interval r;
  if (__builtin_add_overflow(a.lo, b.lo, &r.lo) || __builtin_add_overflow(a.hi, b.hi, &r.hi)) {
    return std::nullopt;
  }
  return r;
}

std::optional<Interval> multiply(Interval a, Interval b) {
  int64_t products[4];
  if (__builtin_mul_overflow(a.lo, b.lo, &products[0]) ||
      __builtin_mul_overflow(a.lo, b.hi, &products[1]) ||
      __builtin_mul_overflow(a.hi, b.lo, &products[2]) ||
      __builtin_mul_overflow(a.hi, b.hi, &products[3])) {
    return std::nullopt;
  }
  return Interval{*std::min_element(products, products + 4),
                  *std::max_element(products, products + 4)};
}

class Verifier : public IRVisitor {
 public:
  explicit Verifier(const PrimFunc& func) : func_(func) {}

  void run() {
    if (!func_.body) error("the function has no body");
    for (const Buffer& param : func_.params) {
      if (!param) error("a parameter is null");
      if (!buffers_.insert(param.get()).second) error("parameter {} is listed twice", param->name);
    }
    visit(func_.body);
  }

  void visit_Var(const Var* node) override {
    auto it = vars_.find(node);
    if (it == vars_.end()) error("variable {} is not defined here", node->name);
    if (!it->second.visible) {
      error("variable {} is used inside the block, which sees only its iteration variables "
            "(use it in a binding)", node->name);
    }
  }

  void visit_Load(const Load* node) override {
    check_access(node->buffer, node->indices, "load from", /*picked_only=*/select_operands_ > 0);
    IRVisitor::visit_Load(node);
  }

  // A Select's operands run only when picked (the interpreter and both back ends evaluate
  // it lazily), so a constant index out of range there is no error.
  void visit_Select(const Select* node) override {
    visit(node->condition);
    ++select_operands_;
    visit(node->true_value);
    visit(node->false_value);
    --select_operands_;
  }

  void visit_Store(const Store* node) override {
    check_access(node->buffer, node->indices, "store to");
    IRVisitor::visit_Store(node);
  }

  void visit_Call(const Call* node) override {
    if (node->name == "barrier") {
      error("a barrier is a statement of its own (Evaluate), not part of an expression");
    }
    IRVisitor::visit_Call(node);
  }

  void visit_Evaluate(const Evaluate* node) override {
    if (!is_barrier(node->value)) return IRVisitor::visit_Evaluate(node);
    if (thread_loops_ == 0) error("a barrier outside the threadIdx loops synchronises nothing");
  }

  void visit_Allocate(const Allocate* node) override {
    define_buffer(node->buffer);
    visit(node->body);
    buffers_.erase(node->buffer.get());
  }

  void visit_For(const For* node) override {
    const Var* var = node->var.as<Var>();
    if (node->for_kind == ForKind::vectorized && !node->extent.as<IntImm>()) {
      error("vectorized loop {} needs a constant extent", var->name);
    }
    bool thread_loop = false;
    if (node->for_kind == ForKind::thread_binding) {
      thread_loop = is_thread_axis(node->thread_axis);
      if (!thread_loop && !is_block_axis(node->thread_axis)) {
        error("loop {} is bound to '{}', which is not blockIdx.x/y/z or threadIdx.x/y/z",
              var->name, node->thread_axis);
      }
      if (!thread_loop && thread_loops_ > 0) {
        error("loop {} over {} is inside a threadIdx loop", var->name, node->thread_axis);
      }
    }
    visit(node->min);
    visit(node->extent);
    std::optional<Interval> range;
    std::optional<Interval> min = bounds(node->min);
    std::optional<Interval> extent = bounds(node->extent);
    int64_t hi = 0;
    if (min && extent && extent->hi >= 1 && !__builtin_add_overflow(min->hi, extent->hi - 1, &hi)) {
      range = Interval{min->lo, hi};
    }
    define_var(node->var, range);
    thread_loops_ += thread_loop ? 1 : 0;
    visit(node->body);
    thread_loops_ -= thread_loop ? 1 : 0;
    vars_.erase(var);
  }

  void visit_Block(const Block* node) override {
    blocks_.push_back(node->name);
    // Bindings and predicate see the loops outside the block.
    for (const IterVar& iter : node->iter_vars) check_binding(node, iter);
    visit(node->predicate);
    bool has_reduce = std::any_of(
        node->iter_vars.begin(), node->iter_vars.end(),
        [](const IterVar& iter) { return iter.kind == IterKind::reduce; });
    if (node->init && !has_reduce) error("an init needs a reduction iteration variable");
    // Everything else sees only the iteration variables: hide what is outside.
    auto outside = vars_;
    for (auto& [var, info] : vars_) info.visible = false;
    for (const IterVar& iter : node->iter_vars) {
      define_var(iter.var, iter.extent > 0 ? std::optional(Interval{0, iter.extent - 1})
                                           : std::nullopt);
    }
    for (const Buffer& buffer : node->alloc_buffers) define_buffer(buffer);
    for (const auto* regions : {&node->reads, &node->writes}) {
      for (const BufferRegion& region : *regions) {
        require_buffer(region.buffer, "region of");
        for (const Range& range : region.region) {
          visit(range.min);
          visit(range.extent);
        }
      }
    }
    visit(node->init);
    visit(node->body);
    for (const Buffer& buffer : node->alloc_buffers) buffers_.erase(buffer.get());
    vars_ = std::move(outside);
    blocks_.pop_back();
  }

 private:
  struct VarInfo {
    bool visible = true;
    std::optional<Interval> range;
  };

  template <typename... Args>
  [[noreturn]] void error(fmt::format_string<Args...> format, Args&&... args) const {
    std::string where = blocks_.empty() ? "" : fmt::format(", block {}", blocks_.back());
    fail("invalid loop IR in @{}{}: {}", func_.name, where,
         fmt::format(format, std::forward<Args>(args)...));
  }

  void define_var(const Expr& var, std::optional<Interval> range) {
    const Var* node = var.as<Var>();
    if (vars_.count(node)) error("variable {} is defined again inside its own scope", node->name);
    vars_[node] = VarInfo{true, range};
  }

  void define_buffer(const Buffer& buffer) {
    if (!buffers_.insert(buffer.get()).second) {
      error("buffer {} is allocated again inside its own scope", buffer->name);
    }
  }

  void require_buffer(const Buffer& buffer, const char* what) {
    if (!buffers_.count(buffer.get())) {
      error("{} buffer {}, which is neither a parameter nor allocated here", what, buffer->name);
    }
  }

  // The buffer is in scope, and constant indices lie within its shape (unless the access
  // runs only when a Select picks it).
  void check_access(const Buffer& buffer, const std::vector<Expr>& indices, const char* what,
                    bool picked_only = false) {
    require_buffer(buffer, what);
    if (picked_only) return;
    for (size_t d = 0; d < indices.size(); ++d) {
      std::optional<Interval> range = bounds(indices[d], /*constants_only=*/true);
      if (range && (range->lo < 0 || range->hi >= buffer->shape[d])) {
        error("{} {}: index {} of dimension {} is outside [0, {})", what, buffer->name,
              range->lo < 0 ? range->lo : range->hi, d, buffer->shape[d]);
      }
    }
  }

  void check_binding(const Block* block, const IterVar& iter) {
    visit(iter.binding);
    const std::string& name = iter.var.as<Var>()->name;
    std::optional<Interval> range = bounds(iter.binding);
    if (!range) return;
    bool guarded = static_cast<bool>(block->predicate);
    if (!guarded && (range->lo < 0 || range->hi >= iter.extent)) {
      error("iteration variable {} of extent {} is bound to values in [{}, {}] (a binding "
            "beyond the extent needs a predicate)", name, iter.extent, range->lo, range->hi);
    }
    if (iter.binding.as<Var>()) {
      bool covers = range->lo == 0 && (guarded ? range->hi + 1 >= iter.extent
                                               : range->hi + 1 == iter.extent);
      if (!covers) {
        error("iteration variable {} of extent {} is bound to a loop over {}..{}", name,
              iter.extent, range->lo, range->hi + 1);
      }
    }
  }

  // The range of an i64 expression, if the analysis knows it. With constants_only, a
  // variable is unknown: the range is then the value of a constant expression.
  std::optional<Interval> bounds(const Expr& expr, bool constants_only = false) const {
    auto two = [&](const Expr& a, const Expr& b) {
      std::optional<Interval> x = bounds(a, constants_only);
      std::optional<Interval> y = x ? bounds(b, constants_only) : std::nullopt;
      return y ? std::optional(std::pair(*x, *y)) : std::nullopt;
    };
    if (const IntImm* imm = expr.as<IntImm>()) return Interval{imm->value, imm->value};
    if (const Var* var = expr.as<Var>()) {
      auto it = vars_.find(var);
      return constants_only || it == vars_.end() ? std::nullopt : it->second.range;
    }
    if (const Add* node = expr.as<Add>()) {
      auto ab = two(node->a, node->b);
      return ab ? add(ab->first, ab->second) : std::nullopt;
    }
    if (const Sub* node = expr.as<Sub>()) {
      auto ab = two(node->a, node->b);
      if (!ab || ab->second.lo == INT64_MIN) return std::nullopt;
      return add(ab->first, Interval{-ab->second.hi, -ab->second.lo});
    }
    if (const Mul* node = expr.as<Mul>()) {
      auto ab = two(node->a, node->b);
      return ab ? multiply(ab->first, ab->second) : std::nullopt;
    }
    if (const Min* node = expr.as<Min>()) {
      auto ab = two(node->a, node->b);
      if (!ab) return std::nullopt;
      return Interval{std::min(ab->first.lo, ab->second.lo), std::min(ab->first.hi, ab->second.hi)};
    }
    if (const Max* node = expr.as<Max>()) {
      auto ab = two(node->a, node->b);
      if (!ab) return std::nullopt;
      return Interval{std::max(ab->first.lo, ab->second.lo), std::max(ab->first.hi, ab->second.hi)};
    }
    if (const FloorDiv* node = expr.as<FloorDiv>()) {
      auto ab = two(node->a, node->b);
      if (!ab || ab->second.lo != ab->second.hi || ab->second.lo <= 0) return std::nullopt;
      int64_t d = ab->second.lo;
      return Interval{floor_div(ab->first.lo, d), floor_div(ab->first.hi, d)};
    }
    if (const FloorMod* node = expr.as<FloorMod>()) {
      auto ab = two(node->a, node->b);
      if (!ab || ab->second.lo != ab->second.hi || ab->second.lo <= 0) return std::nullopt;
      int64_t m = ab->second.lo;
      if (floor_div(ab->first.lo, m) == floor_div(ab->first.hi, m)) {
        return Interval{ab->first.lo - floor_div(ab->first.lo, m) * m,
                        ab->first.hi - floor_div(ab->first.lo, m) * m};
      }
      return Interval{0, m - 1};
    }
    if (const Ramp* node = expr.as<Ramp>()) {
      auto ab = two(node->base, node->stride);
      if (!ab) return std::nullopt;
      auto last = multiply(ab->second, Interval{node->lanes - 1, node->lanes - 1});
      auto end = last ? add(ab->first, *last) : std::nullopt;
      if (!end) return std::nullopt;
      return Interval{std::min(ab->first.lo, end->lo), std::max(ab->first.hi, end->hi)};
    }
    if (const Broadcast* node = expr.as<Broadcast>()) return bounds(node->value, constants_only);
    return std::nullopt;
  }

  const PrimFunc& func_;
  std::unordered_map<const Var*, VarInfo> vars_;
  std::unordered_set<const BufferNode*> buffers_;
  std::vector<std::string> blocks_;
  int thread_loops_ = 0;
  int select_operands_ = 0;  // how many Select operands enclose the current node
};

}  // namespace

void verify_func(const PrimFunc& func) { Verifier(func).run(); }

void verify_module(const LoopModule& module) {
  for (const PrimFunc& func : module.functions) verify_func(func);
}

}  // namespace minic::loop
