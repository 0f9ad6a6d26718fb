// simplify: arithmetic simplification of loop IR, driven by a table of rewrite rules and by
// the bounds of the loop variables.
//
// Course module 4. Schedules leave index arithmetic behind that no one would write by hand:
// `(i.0 * 8 + i.1) * 1 + 0`, `floordiv(i.0 * 32 + i.1, 32)`, guards `i.0 * 32 + i.1 < 128`
// that always hold. The simplifier rewrites every expression bottom-up with the rules of
// src/passes/loop/simplify_rules.cpp (one a line, `x + 0 → x`, `(x * c1) * c2 → x * (c1 *
// c2)`, ...), folds constants, and decides comparisons, min, max, floordiv and floormod from
// the ranges of the variables: a loop variable ranges over its loop, a block's iteration
// variable over [0, extent) and its binding's range. Then, on statements:
//   - an `if` whose condition is a constant keeps only the branch taken;
//   - a loop of extent 1 (not bound to a GPU thread axis) becomes its body with the loop
//     variable replaced by the loop's start;
//   - a block predicate that always holds is dropped; a block whose predicate never holds,
//     and a loop of a constant extent <= 0, become `evaluate 0`;
//   - sequences lose their `evaluate 0` statements.
//
// Invariant: the function computes exactly what it did (integer rules assume that index
// arithmetic does not overflow i64; float rules are exact in IEEE arithmetic: x * 1 → x,
// never x * 0 → 0 or a reassociation), and it still verifies.
//
//   before:  for i in 0..4 { for j in 0..32 {
//              block B(v = spatial(128) i * 32 + j) where (i * 32 + j < 128) {
//                B[floordiv(v, 32), floormod(v, 32)] = A[v] * 1.0 + 0.0 } } }
//   after:   for i in 0..4 { for j in 0..32 {
//              block B(v = spatial(128) i * 32 + j) {
//                B[floordiv(v, 32), floormod(v, 32)] = A[v] + 0.0 } } }
// (x + 0.0 stays: for x = -0.0 it gives +0.0. The floordiv stays too: the block sees only
// v in [0, 128), not how it was made.)
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#pragma once

#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/stmt.h"

namespace minic::loop {

PrimFunc simplify(PrimFunc func);

// `expr` simplified, each variable in `bounds` known to lie in its range.
Expr simplify_expr(const Expr& expr, const VarBounds& bounds);

// `stmt` simplified, with `bounds` for the variables defined around it (partition-loops
// simplifies each part of a partitioned loop under that part's range).
Stmt simplify_stmt(const Stmt& stmt, const VarBounds& bounds);

}  // namespace minic::loop
