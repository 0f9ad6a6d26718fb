// CWriter: loop IR → C-family source, the walk both C printers share (see
// include/minic/ir/loop/c_writer.h). Course module 3.
//
// One recursive walk over statements and expressions, like the loop IR printer
// (printer.cpp). The dialects (c_printer.cpp, src/codegen/cuda/cuda_source.cpp) add
// what a loop kind and an allocation become.
//
// Chapter: docs/module3-loop-ir.md#3-the-text-form-and-the-equivalent-c
#include "minic/ir/loop/c_writer.h"

#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/binary_operands.h"
#include "minic/ir/loop/c_syntax.h"
#include "minic/ir/loop/visitor.h"

#include <fmt/format.h>

namespace minic::loop {

using namespace c_syntax;

namespace {

// The scalar expression one lane of a vector expression computes, `lane` being the lane.
class LaneRewriter : public IRMutator {
 public:
  explicit LaneRewriter(Expr lane) : lane_(std::move(lane)) {}

  Expr mutate_Ramp(const Ramp* node, const Expr&) override {
    Expr base = mutate(node->base);
    Expr stride = mutate(node->stride);
    const IntImm* step = stride.as<IntImm>();
    Expr offset = step && step->value == 1 ? lane_ : lane_ * stride;
    const IntImm* start = base.as<IntImm>();
    return start && start->value == 0 ? offset : base + offset;
  }
  Expr mutate_Broadcast(const Broadcast* node, const Expr&) override { return mutate(node->value); }
  Expr mutate_Cast(const Cast* node, const Expr&) override {
    return Cast::make(node->type.element(), mutate(node->value));
  }
  Expr mutate_Call(const Call* node, const Expr&) override {
    bool changed = false;
    return Call::make(node->type.element(), node->name, mutate_all(node->args, changed));
  }

 private:
  Expr lane_;
};

}  // namespace

// --- names ----------------------------------------------------------------------------------

std::string CWriter::bind(const void* node, const std::string& own) {
  auto taken = [&](const std::string& name) {
    for (const auto& entry : names_) {
      if (entry.second == name) return true;
    }
    return false;
  };
  std::string base = identifier(own);
  std::string name = base;
  for (int suffix = 1; taken(name); ++suffix) name = fmt::format("{}_{}", base, suffix);
  names_.emplace_back(node, name);
  return name;
}

std::string CWriter::lookup(const void* node, const std::string& own) const {
  for (auto it = names_.rbegin(); it != names_.rend(); ++it) {
    if (it->first == node) return it->second;
  }
  return identifier(own);
}

std::string CWriter::identifier(std::string_view own) const { return c_identifier(own); }

std::string CWriter::prelude_call(ExprKind kind) const { return prelude_function(kind); }

// --- expressions ----------------------------------------------------------------------------

std::string CWriter::operand(const Expr& e, int least) {
  auto [text, precedence] = expr(e);
  return precedence < least ? "(" + text + ")" : text;
}

std::string CWriter::access(const Buffer& buffer, const std::vector<Expr>& indices) {
  return lookup(buffer.get(), buffer->name) + "[" + text(flat_index(*buffer, indices)) + "]";
}

std::pair<std::string, int> CWriter::expr(const Expr& e) {
  auto args = [&](const std::vector<Expr>& exprs) {
    std::vector<std::string> parts;
    for (const Expr& part : exprs) parts.push_back(text(part));
    return fmt::format("{}", fmt::join(parts, ", "));
  };
  if (std::optional<COp> op = c_operator(e); op && is_binary(e.kind())) {
    auto [a, b] = binary_operands(e);
    // C's relational and equality operators are left-associative, but a chain of them
    // is never what a reader expects: both operands of a comparison bind tighter.
    bool compare = op->precedence == kEquality || op->precedence == kRelational;
    std::string lhs = operand(*a, compare ? op->precedence + 1 : op->precedence);
    return {lhs + " " + op->symbol + " " + operand(*b, op->precedence + 1), op->precedence};
  }
  switch (e.kind()) {
    case ExprKind::IntImm: return int_literal(e.as<IntImm>()->value, e.type().dtype);
    case ExprKind::FloatImm: return float_literal(e.as<FloatImm>()->value, e.type().dtype);
    case ExprKind::Var: return {lookup(e.get(), e.as<Var>()->name), kAtom};
    case ExprKind::Not: return {"!" + operand(e.as<Not>()->a, kUnary), kUnary};
    case ExprKind::Mod: {  // float remainder: fmodf
      auto [a, b] = binary_operands(e);
      return {c_function("fmod", e.type().dtype) + "(" + args({*a, *b}) + ")", kAtom};
    }
    case ExprKind::Min:
    case ExprKind::Max:
    case ExprKind::FloorDiv:
    case ExprKind::FloorMod: {
      auto [a, b] = binary_operands(e);
      return {prelude_call(e.kind()) + "(" + args({*a, *b}) + ")", kAtom};
    }
    case ExprKind::Select: {
      const Select* node = e.as<Select>();
      return {fmt::format("({} ? {} : {})", operand(node->condition, kOr),
                          operand(node->true_value, kOr), operand(node->false_value, kOr)),
              kAtom};
    }
    case ExprKind::Cast:
      return {fmt::format("({}){}", c_type(e.type().dtype), operand(e.as<Cast>()->value, kUnary)),
              kUnary};
    case ExprKind::Load: return {access(e.as<Load>()->buffer, e.as<Load>()->indices), kAtom};
    case ExprKind::Call: {
      const Call* node = e.as<Call>();
      if (node->name == "barrier") return {"__syncthreads()", kAtom};
      return {c_function(node->name, e.type().dtype) + "(" + args(node->args) + ")", kAtom};
    }
    // Vector forms outside a vector store: shown as the loop IR writes them.
    case ExprKind::Ramp: {
      const Ramp* node = e.as<Ramp>();
      return {fmt::format("ramp({}, {}, {})", text(node->base), text(node->stride), node->lanes),
              kAtom};
    }
    case ExprKind::Broadcast: {
      const Broadcast* node = e.as<Broadcast>();
      return {fmt::format("broadcast({}, {})", text(node->value), node->lanes), kAtom};
    }
    default: break;  // the binary operators, handled above
  }
  return {"?", kAtom};
}

std::string CWriter::loop_end(const For* node) {
  const IntImm* lo = node->min.as<IntImm>();
  const IntImm* size = node->extent.as<IntImm>();
  int64_t sum = 0;
  if (lo && lo->value == 0) return operand(node->extent, kRelational + 1);
  if (lo && size && !__builtin_add_overflow(lo->value, size->value, &sum)) {
    return fmt::format("{}", sum);
  }
  return operand(node->min + node->extent, kRelational + 1);
}

// --- statements -----------------------------------------------------------------------------

void CWriter::line(const std::string& text) {
  out_.append(2 * indent_, ' ');
  out_ += text;
  out_ += '\n';
}

void CWriter::indented(const Stmt& body) {
  ++indent_;
  stmt(body);
  --indent_;
}

void CWriter::stmt(const Stmt& s) {
  if (!s) return;
  switch (s.kind()) {
    case StmtKind::For: return for_loop(s.as<For>());
    case StmtKind::Block: return block(s.as<Block>());
    case StmtKind::Store: return store(s.as<Store>());
    case StmtKind::Allocate: {
      const Allocate* node = s.as<Allocate>();
      size_t depth = scope_depth();
      line("{");
      ++indent_;
      declare_array(node->buffer);
      stmt(node->body);
      --indent_;
      line("}");
      end_scope(depth);
      return;
    }
    case StmtKind::Seq:
      for (const Stmt& part : s.as<Seq>()->stmts) stmt(part);
      return;
    case StmtKind::IfThenElse: {
      const IfThenElse* node = s.as<IfThenElse>();
      line("if (" + text(node->condition) + ") {");
      indented(node->then_case);
      if (node->else_case) {
        line("} else {");
        indented(node->else_case);
      }
      line("}");
      return;
    }
    case StmtKind::Evaluate: return evaluate(s.as<Evaluate>());
  }
}

void CWriter::c_loop(const For* node, const std::string& comment) {
  size_t depth = scope_depth();
  std::string var = bind(node->var.get(), node->var.as<Var>()->name);
  std::string header = fmt::format("for ({3} {0} = {1}; {0} < {2}; ++{0}) {{", var,
                                   text(node->min), loop_end(node), index_type_);
  line(comment.empty() ? header : header + "  // " + comment);
  indented(node->body);
  line("}");
  end_scope(depth);
}

void CWriter::barrier() { line("__syncthreads();  // barrier: every thread of the block waits here"); }

// `body` once per lane of a vector `lanes` wide, with `rewrite` giving a lane's scalars.
template <typename Body>
void CWriter::per_lane(int lanes, const char* what, Body&& body) {
  Expr lane = Var::make("lane");
  size_t depth = scope_depth();
  std::string name = bind(lane.get(), "lane");
  line(fmt::format("for ({3} {0} = 0; {0} < {1}; ++{0}) {{  // the {1} lanes of a {2}", name,
                   lanes, what, index_type_));
  ++indent_;
  LaneRewriter rewrite(lane);
  body(rewrite);
  --indent_;
  line("}");
  end_scope(depth);
}

void CWriter::store(const Store* node) {
  if (node->value.type().lanes == 1) {
    line(access(node->buffer, node->indices) + " = " + text(node->value) + ";");
    return;
  }
  per_lane(node->value.type().lanes, "vector store", [&](LaneRewriter& rewrite) {
    std::vector<Expr> indices;
    for (const Expr& index : node->indices) indices.push_back(rewrite.mutate(index));
    line(access(node->buffer, indices) + " = " + text(rewrite.mutate(node->value)) + ";");
  });
}

void CWriter::evaluate(const Evaluate* node) {
  if (is_barrier(node->value)) {
    barrier();
  } else if (node->value.type().lanes == 1) {
    line(text(node->value) + ";");
  } else {
    per_lane(node->value.type().lanes, "vector",
             [&](LaneRewriter& rewrite) { line(text(rewrite.mutate(node->value)) + ";"); });
  }
}

void CWriter::block(const Block* node) {
  std::vector<std::string> spatial, reduce, bindings;
  for (const IterVar& iter : node->iter_vars) bindings.push_back(text(iter.binding));
  size_t depth = scope_depth();
  std::vector<std::string> declarations;
  std::vector<std::string> reduce_is_zero;
  for (size_t k = 0; k < node->iter_vars.size(); ++k) {
    const IterVar& iter = node->iter_vars[k];
    std::string name = bind(iter.var.get(), iter.var.as<Var>()->name);
    declarations.push_back(fmt::format("const {} {} = {};", index_type_, name, bindings[k]));
    (iter.kind == IterKind::spatial ? spatial : reduce).push_back(name);
    if (iter.kind == IterKind::reduce) reduce_is_zero.push_back(name + " == 0");
  }
  std::string comment = "// block " + node->name;
  if (!spatial.empty()) comment += fmt::format(": spatial {}", fmt::join(spatial, ", "));
  if (!reduce.empty()) {
    comment += fmt::format("{} reduce {}", spatial.empty() ? ":" : ";", fmt::join(reduce, ", "));
  }
  line(comment);
  line("{");
  ++indent_;
  for (const std::string& declaration : declarations) line(declaration);
  for (const Buffer& buffer : node->alloc_buffers) declare_array(buffer);
  if (node->predicate) {
    line("if (" + text(node->predicate) + ") {  // the block's predicate");
    ++indent_;
  }
  if (node->init && !reduce_is_zero.empty()) {
    line(fmt::format("if ({}) {{  // init: the first step of the reduction",
                     fmt::join(reduce_is_zero, " && ")));
    indented(node->init);
    line("}");
  } else if (node->init) {
    line("// init");
    stmt(node->init);
  }
  stmt(node->body);
  if (node->predicate) {
    --indent_;
    line("}");
  }
  --indent_;
  line("}");
  end_scope(depth);
}

}  // namespace minic::loop
