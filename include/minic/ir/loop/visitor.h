// Walking and rewriting loop IR: IRVisitor and IRMutator.
//
// Course module 3. Both are driven by the node lists of expr.h and stmt.h: one virtual
// method per node kind, whose default visits (or rebuilds) the children. A pass overrides
// the methods for the nodes it cares about and calls the default for the rest:
//
//   class CountLoads : public IRVisitor {
//    public:
//     int loads = 0;
//     void visit_Load(const Load* node) override { ++loads; IRVisitor::visit_Load(node); }
//   };
//
// IRMutator returns the same handle when no child changed, so a rewrite copies only the
// nodes on the path to what it changed.
//
// Chapter: docs/module3-loop-ir.md#2-walking-and-rewriting
#pragma once

#include "minic/ir/loop/stmt.h"

namespace minic::loop {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  // Dispatch on the node kind (a null handle is skipped).
  void visit(const Expr& expr);
  void visit(const Stmt& stmt);

#define MINIC_DECLARE_VISIT(Node) virtual void visit_##Node(const Node* node);
  MINIC_EXPR_NODES(MINIC_DECLARE_VISIT)
  MINIC_STMT_NODES(MINIC_DECLARE_VISIT)
#undef MINIC_DECLARE_VISIT
};

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  // Dispatch on the node kind (a null handle stays null).
  Expr mutate(const Expr& expr);
  Stmt mutate(const Stmt& stmt);

  // Each takes the handle too, so that an unchanged node is returned as it is.
#define MINIC_DECLARE_MUTATE_EXPR(Node) \
  virtual Expr mutate_##Node(const Node* node, const Expr& self);
#define MINIC_DECLARE_MUTATE_STMT(Node) \
  virtual Stmt mutate_##Node(const Node* node, const Stmt& self);
  MINIC_EXPR_NODES(MINIC_DECLARE_MUTATE_EXPR)
  MINIC_STMT_NODES(MINIC_DECLARE_MUTATE_STMT)
#undef MINIC_DECLARE_MUTATE_EXPR
#undef MINIC_DECLARE_MUTATE_STMT

 protected:
  std::vector<Expr> mutate_all(const std::vector<Expr>& exprs, bool& changed);
  Range mutate_range(const Range& range, bool& changed);
  std::vector<BufferRegion> mutate_regions(const std::vector<BufferRegion>& regions,
                                           bool& changed);
};

}  // namespace minic::loop
