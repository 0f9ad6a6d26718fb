// Small analyses of loop IR that passes and schedule primitives share: substituting
// variables, asking which variables an expression uses, the constant integer bounds of an
// index expression, and structural equality of indices. Which buffers a statement touches
// and where is the access analysis of access.h.
//
// Course module 3. Schedule primitives rewrite the loops around a block and must then say
// which part of a buffer the block touches under the new loops (compute_at, cache_read);
// the simplifier must know that `i * 32 + j` stays below 128 when i < 4 and j < 32. Both
// ask the same question, "what are the smallest and largest values of this expression
// when each variable lies in its range?", answered here by interval arithmetic:
//
//   VarBounds bounds = {{i_node, {0, 3}}, {j_node, {0, 31}}};
//   bound_of(i * 32 + j, bounds)   ==  IntBound{0, 127}
//
// Interval arithmetic is sound (the true values always lie inside) but may be loose:
// `i - i` gives [-3, 3], not [0, 0]. Simplify first where that matters.
//
// Chapter: docs/module3-loop-ir.md#2-walking-and-rewriting
#pragma once

#include "minic/ir/loop/stmt.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

namespace minic::loop {

// Maps a variable (by node) to the expression that replaces it.
using VarMap = std::unordered_map<const Var*, Expr>;

// `expr` with every variable in `map` replaced; unchanged parts keep their handles.
Expr substitute(const Expr& expr, const VarMap& map);
// The same for a statement: loop bounds, block bindings, regions and bodies. Variables a
// statement defines (loop and iteration variables) are never in `map` in correct use.
Stmt substitute(const Stmt& stmt, const VarMap& map);

// `root` with every use of `from` (loads, stores, block regions, allocations) referring to
// `to` instead.
Stmt replace_buffer(const Stmt& root, const Buffer& from, const Buffer& to);

// True if `expr` (or `stmt`) uses the variable `var` anywhere.
bool uses_var(const Expr& expr, const Var* var);
bool uses_var(const Stmt& stmt, const Var* var);
// True if `expr` uses any variable for which `pred` is true.
bool uses_any_var(const Expr& expr, const std::function<bool(const Var*)>& pred);
// True if evaluating `expr` loads from a buffer: a value of data, not of indices alone
// (a select must not evaluate such an operand it does not pick).
bool reads_memory(const Expr& expr);

// The inclusive range [min, max] of an i64 expression's values. The limits of int64_t
// stand for "unbounded" on that side.
struct IntBound {
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
  int64_t min = kNegInf;
  int64_t max = kPosInf;

  static IntBound everything() { return {}; }
  static IntBound single(int64_t value) { return {value, value}; }
  bool is_single() const { return min == max; }
  bool is_bounded() const { return min != kNegInf && max != kPosInf; }
  bool operator==(const IntBound&) const = default;
};

// The range each variable takes (by node). A variable missing from the map is unbounded.
using VarBounds = std::unordered_map<const Var*, IntBound>;

// The bounds of a scalar integer expression when every variable lies in its bounds:
// immediates, variables, + - *, Div/Mod/FloorDiv/FloorMod by a constant, Min, Max,
// Select (the union of both values), Cast between integer types. Anything else (a Load,
// a Call) is unbounded.
IntBound bound_of(const Expr& expr, const VarBounds& bounds);

// The value of `expr` if it is an integer immediate (IntImm), else nullopt.
std::optional<int64_t> as_const_int(const Expr& expr);

// a / b rounded toward negative infinity, as FloorDiv computes it (b != 0).
int64_t floor_div(int64_t a, int64_t b);

// An index as constant + sum of coefficient * variable (each variable once).
struct Linear {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;

  void add_term(const Expr& var, int64_t coefficient);
  void add(const Linear& other, int64_t sign);
};

// `expr` as a Linear where it is built of integer immediates, variables, + and - and
// products by an immediate (`i * 32 + j - 1`); nullopt for anything else.
std::optional<Linear> linearize(const Expr& expr);

// Structural equality of index expressions: the same variables (by node), integer
// constants and arithmetic operators (+ - * / % floordiv floormod min max), and the ramps
// and broadcasts of vector indices. Other kinds compare by identity.
bool same_expr(const Expr& a, const Expr& b);

// True if `stmt` evaluates a call named `name` (a GPU barrier: "barrier").
bool calls(const Stmt& stmt, const std::string& name);

// The buffers `body` stores to (a function's other parameters are its inputs).
std::set<const BufferNode*> stored_buffers(const Stmt& body);

// The GPU barrier, `barrier()`: a call evaluated as a statement of its own.
Stmt barrier_stmt();
// True if `expr` is the call barrier(), or `stmt` evaluates it.
bool is_barrier(const Expr& expr);
bool is_barrier(const Stmt& stmt);

}  // namespace minic::loop
