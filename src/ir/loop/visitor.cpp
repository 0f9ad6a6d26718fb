// IRVisitor and IRMutator: the default walk over every node kind. Course module 3.
//
// Chapter: docs/module3-loop-ir.md#2-walking-and-rewriting
#include "minic/ir/loop/visitor.h"

namespace minic::loop {

// --- IRVisitor ------------------------------------------------------------------------------

void IRVisitor::visit(const Expr& expr) {
  if (!expr) return;
  switch (expr.kind()) {
#define MINIC_DISPATCH(Node) \
  case ExprKind::Node:       \
    return visit_##Node(expr.as<Node>());
    MINIC_EXPR_NODES(MINIC_DISPATCH)
#undef MINIC_DISPATCH
  }
}

void IRVisitor::visit(const Stmt& stmt) {
  if (!stmt) return;
  switch (stmt.kind()) {
#define MINIC_DISPATCH(Node) \
  case StmtKind::Node:       \
    return visit_##Node(stmt.as<Node>());
    MINIC_STMT_NODES(MINIC_DISPATCH)
#undef MINIC_DISPATCH
  }
}

void IRVisitor::visit_IntImm(const IntImm*) {}
void IRVisitor::visit_FloatImm(const FloatImm*) {}
void IRVisitor::visit_Var(const Var*) {}

#define MINIC_VISIT_BINARY(Node)                  \
  void IRVisitor::visit_##Node(const Node* node) { \
    visit(node->a);                               \
    visit(node->b);                               \
  }
MINIC_VISIT_BINARY(Add)
MINIC_VISIT_BINARY(Sub)
MINIC_VISIT_BINARY(Mul)
MINIC_VISIT_BINARY(Div)
MINIC_VISIT_BINARY(Mod)
MINIC_VISIT_BINARY(FloorDiv)
MINIC_VISIT_BINARY(FloorMod)
MINIC_VISIT_BINARY(Min)
MINIC_VISIT_BINARY(Max)
MINIC_VISIT_BINARY(EQ)
MINIC_VISIT_BINARY(NE)
MINIC_VISIT_BINARY(LT)
MINIC_VISIT_BINARY(LE)
MINIC_VISIT_BINARY(GT)
MINIC_VISIT_BINARY(GE)
MINIC_VISIT_BINARY(And)
MINIC_VISIT_BINARY(Or)
#undef MINIC_VISIT_BINARY

void IRVisitor::visit_Not(const Not* node) { visit(node->a); }
void IRVisitor::visit_Select(const Select* node) {
  visit(node->condition);
  visit(node->true_value);
  visit(node->false_value);
}
void IRVisitor::visit_Cast(const Cast* node) { visit(node->value); }
void IRVisitor::visit_Load(const Load* node) {
  for (const Expr& index : node->indices) visit(index);
}
void IRVisitor::visit_Call(const Call* node) {
  for (const Expr& arg : node->args) visit(arg);
}
void IRVisitor::visit_Ramp(const Ramp* node) {
  visit(node->base);
  visit(node->stride);
}
void IRVisitor::visit_Broadcast(const Broadcast* node) { visit(node->value); }

void IRVisitor::visit_For(const For* node) {
  visit(node->min);
  visit(node->extent);
  visit(node->body);
}
void IRVisitor::visit_Block(const Block* node) {
  for (const IterVar& iter : node->iter_vars) visit(iter.binding);
  for (const auto* regions : {&node->reads, &node->writes}) {
    for (const BufferRegion& region : *regions) {
      for (const Range& range : region.region) {
        visit(range.min);
        visit(range.extent);
      }
    }
  }
  visit(node->predicate);
  visit(node->init);
  visit(node->body);
}
void IRVisitor::visit_Store(const Store* node) {
  for (const Expr& index : node->indices) visit(index);
  visit(node->value);
}
void IRVisitor::visit_Allocate(const Allocate* node) { visit(node->body); }
void IRVisitor::visit_Seq(const Seq* node) {
  for (const Stmt& stmt : node->stmts) visit(stmt);
}
void IRVisitor::visit_IfThenElse(const IfThenElse* node) {
  visit(node->condition);
  visit(node->then_case);
  visit(node->else_case);
}
void IRVisitor::visit_Evaluate(const Evaluate* node) { visit(node->value); }

// --- IRMutator ------------------------------------------------------------------------------

Expr IRMutator::mutate(const Expr& expr) {
  if (!expr) return expr;
  switch (expr.kind()) {
#define MINIC_DISPATCH(Node) \
  case ExprKind::Node:       \
    return mutate_##Node(expr.as<Node>(), expr);
    MINIC_EXPR_NODES(MINIC_DISPATCH)
#undef MINIC_DISPATCH
  }
  return expr;
}

Stmt IRMutator::mutate(const Stmt& stmt) {
  if (!stmt) return stmt;
  switch (stmt.kind()) {
#define MINIC_DISPATCH(Node) \
  case StmtKind::Node:       \
    return mutate_##Node(stmt.as<Node>(), stmt);
    MINIC_STMT_NODES(MINIC_DISPATCH)
#undef MINIC_DISPATCH
  }
  return stmt;
}

std::vector<Expr> IRMutator::mutate_all(const std::vector<Expr>& exprs, bool& changed) {
  std::vector<Expr> result;
  result.reserve(exprs.size());
  for (const Expr& expr : exprs) {
    result.push_back(mutate(expr));
    if (!result.back().same_as(expr)) changed = true;
  }
  return result;
}

Range IRMutator::mutate_range(const Range& range, bool& changed) {
  Range result{mutate(range.min), mutate(range.extent)};
  if (!result.min.same_as(range.min) || !result.extent.same_as(range.extent)) changed = true;
  return result;
}

std::vector<BufferRegion> IRMutator::mutate_regions(const std::vector<BufferRegion>& regions,
                                                    bool& changed) {
  std::vector<BufferRegion> result;
  for (const BufferRegion& region : regions) {
    BufferRegion copy{region.buffer, {}};
    for (const Range& range : region.region) copy.region.push_back(mutate_range(range, changed));
    result.push_back(std::move(copy));
  }
  return result;
}

Expr IRMutator::mutate_IntImm(const IntImm*, const Expr& self) { return self; }
Expr IRMutator::mutate_FloatImm(const FloatImm*, const Expr& self) { return self; }
Expr IRMutator::mutate_Var(const Var*, const Expr& self) { return self; }

#define MINIC_MUTATE_BINARY(Node)                                      \
  Expr IRMutator::mutate_##Node(const Node* node, const Expr& self) {   \
    Expr a = mutate(node->a);                                          \
    Expr b = mutate(node->b);                                          \
    if (a.same_as(node->a) && b.same_as(node->b)) return self;         \
    return Node::make(std::move(a), std::move(b));                     \
  }
MINIC_MUTATE_BINARY(Add)
MINIC_MUTATE_BINARY(Sub)
MINIC_MUTATE_BINARY(Mul)
MINIC_MUTATE_BINARY(Div)
MINIC_MUTATE_BINARY(Mod)
MINIC_MUTATE_BINARY(FloorDiv)
MINIC_MUTATE_BINARY(FloorMod)
MINIC_MUTATE_BINARY(Min)
MINIC_MUTATE_BINARY(Max)
MINIC_MUTATE_BINARY(EQ)
MINIC_MUTATE_BINARY(NE)
MINIC_MUTATE_BINARY(LT)
MINIC_MUTATE_BINARY(LE)
MINIC_MUTATE_BINARY(GT)
MINIC_MUTATE_BINARY(GE)
MINIC_MUTATE_BINARY(And)
MINIC_MUTATE_BINARY(Or)
#undef MINIC_MUTATE_BINARY

Expr IRMutator::mutate_Not(const Not* node, const Expr& self) {
  Expr a = mutate(node->a);
  return a.same_as(node->a) ? self : Not::make(std::move(a));
}

Expr IRMutator::mutate_Select(const Select* node, const Expr& self) {
  Expr condition = mutate(node->condition);
  Expr true_value = mutate(node->true_value);
  Expr false_value = mutate(node->false_value);
  if (condition.same_as(node->condition) && true_value.same_as(node->true_value) &&
      false_value.same_as(node->false_value)) {
    return self;
  }
  return Select::make(std::move(condition), std::move(true_value), std::move(false_value));
}

Expr IRMutator::mutate_Cast(const Cast* node, const Expr& self) {
  Expr value = mutate(node->value);
  return value.same_as(node->value) ? self : Cast::make(node->type, std::move(value));
}

Expr IRMutator::mutate_Load(const Load* node, const Expr& self) {
  bool changed = false;
  std::vector<Expr> indices = mutate_all(node->indices, changed);
  return changed ? Load::make(node->buffer, std::move(indices)) : self;
}

Expr IRMutator::mutate_Call(const Call* node, const Expr& self) {
  bool changed = false;
  std::vector<Expr> args = mutate_all(node->args, changed);
  return changed ? Call::make(node->type, node->name, std::move(args)) : self;
}

Expr IRMutator::mutate_Ramp(const Ramp* node, const Expr& self) {
  Expr base = mutate(node->base);
  Expr stride = mutate(node->stride);
  if (base.same_as(node->base) && stride.same_as(node->stride)) return self;
  return Ramp::make(std::move(base), std::move(stride), node->lanes);
}

Expr IRMutator::mutate_Broadcast(const Broadcast* node, const Expr& self) {
  Expr value = mutate(node->value);
  return value.same_as(node->value) ? self : Broadcast::make(std::move(value), node->lanes);
}

Stmt IRMutator::mutate_For(const For* node, const Stmt& self) {
  Expr min = mutate(node->min);
  Expr extent = mutate(node->extent);
  Stmt body = mutate(node->body);
  if (min.same_as(node->min) && extent.same_as(node->extent) && body.same_as(node->body)) {
    return self;
  }
  return For::make(node->var, std::move(min), std::move(extent), node->for_kind, std::move(body),
                   node->thread_axis, node->annotations);
}

Stmt IRMutator::mutate_Block(const Block* node, const Stmt& self) {
  bool changed = false;
  Block::Parts parts = node->parts();
  for (IterVar& iter : parts.iter_vars) {
    Expr binding = mutate(iter.binding);
    if (!binding.same_as(iter.binding)) changed = true;
    iter.binding = std::move(binding);
  }
  parts.reads = mutate_regions(node->reads, changed);
  parts.writes = mutate_regions(node->writes, changed);
  parts.predicate = mutate(node->predicate);
  parts.init = mutate(node->init);
  parts.body = mutate(node->body);
  changed = changed || !parts.predicate.same_as(node->predicate) ||
            !parts.init.same_as(node->init) || !parts.body.same_as(node->body);
  return changed ? Block::make(std::move(parts)) : self;
}

Stmt IRMutator::mutate_Store(const Store* node, const Stmt& self) {
  bool changed = false;
  std::vector<Expr> indices = mutate_all(node->indices, changed);
  Expr value = mutate(node->value);
  if (!changed && value.same_as(node->value)) return self;
  return Store::make(node->buffer, std::move(indices), std::move(value));
}

Stmt IRMutator::mutate_Allocate(const Allocate* node, const Stmt& self) {
  Stmt body = mutate(node->body);
  return body.same_as(node->body) ? self : Allocate::make(node->buffer, std::move(body));
}

Stmt IRMutator::mutate_Seq(const Seq* node, const Stmt& self) {
  bool changed = false;
  std::vector<Stmt> stmts;
  for (const Stmt& stmt : node->stmts) {
    stmts.push_back(mutate(stmt));
    if (!stmts.back().same_as(stmt)) changed = true;
  }
  return changed ? Seq::make(std::move(stmts)) : self;
}

Stmt IRMutator::mutate_IfThenElse(const IfThenElse* node, const Stmt& self) {
  Expr condition = mutate(node->condition);
  Stmt then_case = mutate(node->then_case);
  Stmt else_case = mutate(node->else_case);
  if (condition.same_as(node->condition) && then_case.same_as(node->then_case) &&
      else_case.same_as(node->else_case)) {
    return self;
  }
  return IfThenElse::make(std::move(condition), std::move(then_case), std::move(else_case));
}

Stmt IRMutator::mutate_Evaluate(const Evaluate* node, const Stmt& self) {
  Expr value = mutate(node->value);
  return value.same_as(node->value) ? self : Evaluate::make(std::move(value));
}

}  // namespace minic::loop
