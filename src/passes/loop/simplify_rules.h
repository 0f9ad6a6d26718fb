// The simplifier's local rewrites of one expression node: constant folding and the rule
// table. Course module 4. The table and its notation are described in simplify_rules.cpp;
// constant folding is simplify_fold.cpp; the walk that applies them is simplify.cpp.
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#pragma once

#include "minic/ir/loop/analysis.h"

namespace minic::loop::simplify_rules {

// The value of an operator (or a Cast) whose operands are all immediates, as the
// interpreter computes it: i64 wraps around, Div/Mod truncate and FloorDiv/FloorMod round
// toward negative infinity, f32 is computed in float and f64 in double, Min/Max of floats
// propagate NaN. Null when the node is not such an operator, or its type is one that
// folding leaves alone (the other integer widths, f16, bf16), or it divides by 0 or -1.
// (simplify_fold.cpp)
Expr fold_constant(const Expr& expr);

// One rewrite of `expr` at its root, its operands being simplified already: the folded
// constant if every operand is an immediate, else the constant that the bounds give an
// index expression whose range is one value, else the first rule of the table that
// matches, else a floordiv or floormod of a sum in any order of its terms split by a step
// that divides the divisor (split_by_divisor in simplify_rules.cpp). Null when nothing
// applies.
Expr rewrite_root(const Expr& expr, const VarBounds& bounds);

}  // namespace minic::loop::simplify_rules
