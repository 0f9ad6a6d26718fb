// Small helpers the loop passes share: structural equality of expressions, the operands
// of an operator node, and the one statement that does nothing. Course module 4.
//
// A pass that removes a statement (an `if (false)`, a loop of extent 0) puts no_op() in its
// place, `evaluate 0` in the text form, because every statement slot of the IR holds a
// statement; remove-no-ops and the simplifier drop it from sequences.
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#pragma once

#include "minic/ir/loop/stmt.h"

namespace minic::loop::pass_util {

// True if `a` and `b` are the same tree: same kinds, types and immediates, the same Var
// and Buffer nodes (identity), the same call names and lanes.
bool equal_exprs(const Expr& a, const Expr& b);

// The operands of an operator node: the two of a binary node (Add ... Or), the one of a
// Not, the three of a Select (condition first); empty for every other kind.
std::vector<Expr> operands_of(const Expr& expr);
// Operand `index` of an operator node, in the order of operands_of, without copying the
// list: pattern matching asks this for every node of every rule it tries.
const Expr& operand_of(const Expr& expr, size_t index);
// The operator node of `kind` over `operands` (the kinds operands_of takes apart).
Expr make_operator(ExprKind kind, const std::vector<Expr>& operands);

// True if `stmt` loads from or stores to `buffer`, or names it in a block region
// (loop::buffer_use, include/minic/ir/loop/access.h).
bool uses_buffer(const Stmt& stmt, const BufferNode* buffer);

// `evaluate 0`: the statement that does nothing.
Stmt no_op();
// True for a null statement and for an Evaluate of an immediate.
bool is_no_op(const Stmt& stmt);
// The statements without their no-ops, as one statement (no_op() when none is left).
Stmt sequence(const std::vector<Stmt>& stmts);

}  // namespace minic::loop::pass_util
