// The loop IR printer: PrimFunc → the .mloop text form (syntax in
// include/minic/ir/loop/printer.h). Course module 3.
//
// One recursive walk. Expressions print with the fewest parentheses their precedence
// allows: an operand is parenthesised only when its operator binds more loosely than the
// place it stands in (the right operand of a left-associative operator, and both operands
// of a comparison, also when it binds equally). The switches over the node kinds have no
// default case, so a node kind added to MINIC_EXPR_NODES / MINIC_STMT_NODES without a
// spelling here is a compiler warning.
//
// Names: variables and buffers are bound in scopes (a loop's body, a block, an
// allocation, the function). Each binding gets its own name unless a binding in scope
// already uses it; then it gets the first free `name_1`, `name_2`, ... A use prints the
// name of the innermost binding of that very node, so the parser, which looks names up
// innermost first, finds the same node.
//
// Chapter: docs/module3-loop-ir.md#3-the-text-form-and-the-equivalent-c
#include "minic/ir/loop/printer.h"

#include "minic/ir/loop/binary_operands.h"
#include "text_syntax.h"

#include "minic/tensor/tensor.h"

#include <fmt/format.h>

#include <limits>

namespace minic::loop {

namespace {

using text::name_text;

// The names in scope, innermost last.
template <typename Node>
class ScopedNames {
 public:
  // The name `node` prints as: that of its innermost binding, else its own.
  std::string lookup(const Node* node, const std::string& own) const {
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
      if (it->first == node) return it->second;
    }
    return own;
  }
  // Binds `node` under `own`, or under `own_1`, `own_2`, ... if that is taken in scope.
  std::string bind(const Node* node, const std::string& own) {
    std::string name = own;
    for (int suffix = 1; taken(name); ++suffix) name = fmt::format("{}_{}", own, suffix);
    stack_.emplace_back(node, name);
    return name;
  }
  size_t depth() const { return stack_.size(); }
  void pop_to(size_t depth) { stack_.resize(depth); }

 private:
  bool taken(const std::string& name) const {
    for (const auto& entry : stack_) {
      if (entry.second == name) return true;
    }
    return false;
  }
  std::vector<std::pair<const Node*, std::string>> stack_;
};

// Binding strength: higher binds tighter.
enum Precedence : int {
  kOr = 1,
  kAnd = 2,
  kCompare = 3,
  kAdditive = 4,
  kMultiplicative = 5,
  kUnary = 6,
  kAtom = 7,
};

struct InfixOp {
  const char* symbol;
  int precedence;
};

// The infix spelling of a binary node, or null for those printed as calls.
const InfixOp* infix_op(ExprKind kind) {
  static constexpr InfixOp kAdd{"+", kAdditive}, kSub{"-", kAdditive};
  static constexpr InfixOp kMul{"*", kMultiplicative}, kDiv{"/", kMultiplicative};
  static constexpr InfixOp kMod{"%", kMultiplicative};
  static constexpr InfixOp kEq{"==", kCompare}, kNe{"!=", kCompare}, kLt{"<", kCompare};
  static constexpr InfixOp kLe{"<=", kCompare}, kGt{">", kCompare}, kGe{">=", kCompare};
  static constexpr InfixOp kAndOp{"&&", kAnd}, kOrOp{"||", kOr};
  switch (kind) {
    case ExprKind::Add: return &kAdd;
    case ExprKind::Sub: return &kSub;
    case ExprKind::Mul: return &kMul;
    case ExprKind::Div: return &kDiv;
    case ExprKind::Mod: return &kMod;
    case ExprKind::EQ: return &kEq;
    case ExprKind::NE: return &kNe;
    case ExprKind::LT: return &kLt;
    case ExprKind::LE: return &kLe;
    case ExprKind::GT: return &kGt;
    case ExprKind::GE: return &kGe;
    case ExprKind::And: return &kAndOp;
    case ExprKind::Or: return &kOrOp;
    default: return nullptr;
  }
}

int precedence(const Expr& expr) {
  if (const InfixOp* op = infix_op(expr.kind())) return op->precedence;
  return expr.kind() == ExprKind::Not ? kUnary : kAtom;
}

const IntImm* as_index_constant(const Expr& expr) {
  const IntImm* imm = expr.as<IntImm>();
  return imm && expr.type() == DataType::int64() ? imm : nullptr;
}

// min + extent when both are i64 constants whose sum fits.
std::optional<int64_t> constant_end(const Expr& min, const Expr& extent) {
  const IntImm* lo = as_index_constant(min);
  const IntImm* size = as_index_constant(extent);
  int64_t end = 0;
  if (!lo || !size || __builtin_add_overflow(lo->value, size->value, &end)) return std::nullopt;
  return end;
}

class Printer {
 public:
  std::string take() { return std::move(out_); }

  std::string expr(const Expr& e) {
    if (!e) return "<null>";
    switch (e.kind()) {
      case ExprKind::Add:
      case ExprKind::Sub:
      case ExprKind::Mul:
      case ExprKind::Div:
      case ExprKind::Mod:
      case ExprKind::EQ:
      case ExprKind::NE:
      case ExprKind::LT:
      case ExprKind::LE:
      case ExprKind::GT:
      case ExprKind::GE:
      case ExprKind::And:
      case ExprKind::Or: return infix(e, *infix_op(e.kind()));
      case ExprKind::IntImm: return text::int_literal_text(e.as<IntImm>()->value, e.type().dtype);
      case ExprKind::FloatImm:
        return text::float_literal_text(e.as<FloatImm>()->value, e.type().dtype);
      case ExprKind::Var: return var_name(e);
      case ExprKind::Not: return "!" + operand(e.as<Not>()->a, kUnary);
      case ExprKind::Min: return binary_call("min", e);
      case ExprKind::Max: return binary_call("max", e);
      case ExprKind::FloorDiv: return binary_call("floordiv", e);
      case ExprKind::FloorMod: return binary_call("floormod", e);
      case ExprKind::Select: {
        const Select* node = e.as<Select>();
        return call("select", {node->condition, node->true_value, node->false_value});
      }
      case ExprKind::Cast:
        return fmt::format("cast<{}>({})", text::type_text(e.type()), expr(e.as<Cast>()->value));
      case ExprKind::Load: {
        const Load* node = e.as<Load>();
        return buffer_name(node->buffer) + "[" + list(node->indices) + "]";
      }
      case ExprKind::Call: {
        const Call* node = e.as<Call>();
        // The type shows only where the arguments do not give it (`barrier()` is i64).
        DataType implied = node->args.empty() ? DataType::int64() : node->args[0].type();
        std::string type = e.type() == implied ? "" : "<" + text::type_text(e.type()) + ">";
        return node->name + type + "(" + list(node->args) + ")";
      }
      case ExprKind::Ramp: {
        const Ramp* node = e.as<Ramp>();
        return fmt::format("ramp({}, {}, {})", expr(node->base), expr(node->stride), node->lanes);
      }
      case ExprKind::Broadcast: {
        const Broadcast* node = e.as<Broadcast>();
        return fmt::format("broadcast({}, {})", expr(node->value), node->lanes);
      }
    }
    return "<?>";
  }

  void stmt(const Stmt& s) {
    if (!s) return;
    switch (s.kind()) {
      case StmtKind::For: return print_for(s.as<For>());
      case StmtKind::Block: return print_block(s.as<Block>());
      case StmtKind::Allocate: {
        const Allocate* node = s.as<Allocate>();
        size_t depth = buffers_.depth();
        std::string decl = declare(node->buffer);
        nested("alloc " + decl + " {", node->body);
        buffers_.pop_to(depth);
        return;
      }
      case StmtKind::Seq:
        for (const Stmt& part : s.as<Seq>()->stmts) stmt(part);
        return;
      case StmtKind::IfThenElse: {
        const IfThenElse* node = s.as<IfThenElse>();
        line("if (" + expr(node->condition) + ") {");
        indented(node->then_case);
        if (node->else_case) {
          line("} else {");
          indented(node->else_case);
        }
        line("}");
        return;
      }
      case StmtKind::Store:
      case StmtKind::Evaluate: line(one_line(s)); return;
    }
  }

  void func(const PrimFunc& f) {
    size_t depth = buffers_.depth();
    std::vector<std::string> params;
    for (const Buffer& param : f.params) params.push_back(declare(param));
    line(fmt::format("func @{}({}) {{", name_text(f.name), fmt::join(params, ", ")));
    indented(f.body);
    line("}");
    buffers_.pop_to(depth);
  }

 private:
  // --- expressions --------------------------------------------------------------------------

  std::string operand(const Expr& e, int least) {
    std::string text = expr(e);
    return e && precedence(e) < least ? "(" + text + ")" : text;
  }

  std::string infix(const Expr& e, const InfixOp& op) {
    auto [a, b] = binary_operands(e);
    int left = op.precedence == kCompare ? op.precedence + 1 : op.precedence;
    return operand(*a, left) + " " + op.symbol + " " + operand(*b, op.precedence + 1);
  }

  std::string binary_call(const char* name, const Expr& e) {
    auto [a, b] = binary_operands(e);
    return call(name, {*a, *b});
  }

  std::string call(const char* name, const std::vector<Expr>& args) {
    return std::string(name) + "(" + list(args) + ")";
  }

  std::string list(const std::vector<Expr>& exprs) {
    std::string text;
    for (size_t k = 0; k < exprs.size(); ++k) text += (k ? ", " : "") + expr(exprs[k]);
    return text;
  }

  std::string var_name(const Expr& var) {
    return name_text(vars_.lookup(var.get(), var.as<Var>()->name));
  }
  std::string buffer_name(const Buffer& buffer) {
    if (!buffer) return "<null>";
    return name_text(buffers_.lookup(buffer.get(), buffer->name));
  }
  std::string bind_var(const Expr& var) {
    if (!var.as<Var>()) return expr(var);
    return name_text(vars_.bind(var.get(), var.as<Var>()->name));
  }

  // `NAME: f32[4,4] strides[8,1] shared`, binding the buffer's name in the current scope.
  std::string declare(const Buffer& buffer) {
    if (!buffer) return "<null>";
    std::string text = name_text(buffers_.bind(buffer.get(), buffer->name));
    text += fmt::format(": {}[{}]", dtype_name(buffer->dtype), fmt::join(buffer->shape, ","));
    if (buffer->strides != row_major_strides(buffer->shape)) {
      text += fmt::format(" strides[{}]", fmt::join(buffer->strides, ","));
    }
    if (buffer->scope != MemoryScope::global) {
      text += std::string(" ") + memory_scope_name(buffer->scope);
    }
    return text;
  }

  // `e` alone for [e, e+1), `lo:hi` for constants, `min:+extent` otherwise.
  std::string range(const Range& r) {
    const IntImm* size = as_index_constant(r.extent);
    if (size && size->value == 1) return expr(r.min);
    if (std::optional<int64_t> end = constant_end(r.min, r.extent)) {
      return fmt::format("{}:{}", as_index_constant(r.min)->value, *end);
    }
    return expr(r.min) + ":+" + expr(r.extent);
  }

  std::string regions(const char* keyword, const std::vector<BufferRegion>& regions) {
    std::vector<std::string> parts;
    for (const BufferRegion& region : regions) {
      std::vector<std::string> ranges;
      for (const Range& r : region.region) ranges.push_back(range(r));
      parts.push_back(fmt::format("{}[{}]", buffer_name(region.buffer), fmt::join(ranges, ", ")));
    }
    return fmt::format("{}({})", keyword, fmt::join(parts, ", "));
  }

  static std::string annotations(const std::map<std::string, int64_t>& map) {
    std::vector<std::string> parts;
    for (const auto& [name, value] : map) {
      parts.push_back(fmt::format("{}={}", name_text(name), value));
    }
    return fmt::format(" {{{}}}", fmt::join(parts, ", "));
  }

  // --- statements ---------------------------------------------------------------------------

  void line(const std::string& text) {
    out_.append(2 * indent_, ' ');
    out_ += text;
    out_ += '\n';
  }
  void indented(const Stmt& body) {
    ++indent_;
    stmt(body);
    --indent_;
  }
  // `header` (ending in "{"), the body one step in, and "}".
  void nested(const std::string& header, const Stmt& body) {
    line(header);
    indented(body);
    line("}");
  }

  // A Store or an Evaluate, which take one line.
  std::string one_line(const Stmt& s) {
    if (const Store* node = s.as<Store>()) {
      return buffer_name(node->buffer) + "[" + list(node->indices) + "] = " + expr(node->value);
    }
    const Evaluate* node = s.as<Evaluate>();
    return (node->value.as<Call>() ? "" : "evaluate ") + expr(node->value);
  }

  void print_for(const For* node) {
    static constexpr const char* kPrefixes[] = {"", "parallel ", "vectorized ", "unrolled ", ""};
    std::string header = kPrefixes[static_cast<int>(node->for_kind)];
    std::string min = expr(node->min);
    std::optional<int64_t> end = constant_end(node->min, node->extent);
    std::string bounds =
        end ? fmt::format("{}..{}", min, *end) : fmt::format("{}..+{}", min, expr(node->extent));
    size_t depth = vars_.depth();
    header += fmt::format("for {} in {}", bind_var(node->var), bounds);
    if (node->for_kind == ForKind::thread_binding) {
      header += fmt::format(" bind({})", name_text(node->thread_axis));
    }
    if (!node->annotations.empty()) header += annotations(node->annotations);
    nested(header + " {", node->body);
    vars_.pop_to(depth);
  }

  void print_block(const Block* node) {
    // The bindings read the variables outside the block: print them before binding its own.
    std::vector<std::string> bindings;
    for (const IterVar& iter : node->iter_vars) bindings.push_back(expr(iter.binding));
    size_t var_depth = vars_.depth();
    size_t buffer_depth = buffers_.depth();
    std::vector<std::string> iters;
    for (size_t k = 0; k < node->iter_vars.size(); ++k) {
      const IterVar& iter = node->iter_vars[k];
      iters.push_back(fmt::format("{} = {}({}) {}", bind_var(iter.var), iter_kind_name(iter.kind),
                                  iter.extent, bindings[k]));
    }
    std::string header = fmt::format("block {}({})", name_text(node->name), fmt::join(iters, ", "));
    if (node->predicate) header += " where (" + expr(node->predicate) + ")";
    if (!node->annotations.empty()) header += annotations(node->annotations);
    line(header + " {");
    ++indent_;
    for (const Buffer& buffer : node->alloc_buffers) line("alloc_buffer " + declare(buffer));
    std::vector<std::string> access;
    if (!node->reads.empty()) access.push_back(regions("reads", node->reads));
    if (!node->writes.empty()) access.push_back(regions("writes", node->writes));
    if (!access.empty()) line(fmt::format("{}", fmt::join(access, " ")));
    if (node->init && (node->init.as<Store>() || node->init.as<Evaluate>())) {
      line("init { " + one_line(node->init) + " }");
    } else if (node->init) {
      nested("init {", node->init);
    }
    stmt(node->body);
    --indent_;
    line("}");
    vars_.pop_to(var_depth);
    buffers_.pop_to(buffer_depth);
  }

  std::string out_;
  int indent_ = 0;
  ScopedNames<ExprNode> vars_;
  ScopedNames<BufferNode> buffers_;
};

}  // namespace

std::string print_expr(const Expr& expr) { return Printer().expr(expr); }

std::string print_stmt(const Stmt& stmt) {
  Printer printer;
  printer.stmt(stmt);
  return printer.take();
}

std::string print_func(const PrimFunc& func) {
  Printer printer;
  printer.func(func);
  return printer.take();
}

std::string print_module(const LoopModule& module) {
  std::string text;
  for (size_t k = 0; k < module.functions.size(); ++k) {
    if (k > 0) text += "\n";
    text += print_func(module.functions[k]);
  }
  return text;
}

}  // namespace minic::loop
