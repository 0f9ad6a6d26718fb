// The pieces of C that printed code is made of: identifiers, types, operators, literals,
// flat indices. Course module 3. The equivalent-C printer (src/ir/loop/c_printer.cpp)
// and the CUDA back end (src/codegen/cuda/) both write them.
//
// Chapter: docs/module3-loop-ir.md#3-the-text-form-and-the-equivalent-c
#pragma once

#include "minic/ir/loop/stmt.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace minic::loop::c_syntax {

// The includes and helpers (min, max, floordiv, floormod, sigmoid) printed code uses.
std::string_view prelude();

// The prelude's floordiv, floormod, sigmoid and shifts, each function declared with
// `qualifier` ("static inline" in C, "__device__ __forceinline__" in CUDA).
std::string helper_functions(std::string_view qualifier);

// `name` as a C identifier: other characters become '_', a reserved word gets a '_'.
std::string c_identifier(std::string_view name);

// The C type of an element: float, double, int64_t, bool, _Float16, ...
const char* c_type(DType dtype);

// C's precedence levels: higher binds tighter.
enum Precedence : int {
  kOr = 1,
  kAnd,
  kEquality,
  kRelational,
  kAdditive,
  kMultiplicative,
  kUnary,  // ! x, -3, (float)x
  kAtom,
};

struct COp {
  const char* symbol;
  int precedence;
};

// The C operator of a binary node, or nullopt for those C writes as a call.
std::optional<COp> c_operator(const Expr& e);

// The C function of a math intrinsic for `dtype` (expf for f32, exp for f64).
std::string c_function(const std::string& name, DType dtype);

// The prelude's function for min, max, floordiv and floormod.
std::string prelude_function(ExprKind kind);

// An immediate as C writes it, with its precedence (a negative number or a cast is a
// unary expression).
std::pair<std::string, int> int_literal(int64_t value, DType dtype);
std::pair<std::string, int> float_literal(double value, DType dtype);

// i0 * stride0 + i1 * stride1 + ...: the flat element index of buffer[indices].
Expr flat_index(const BufferNode& buffer, const std::vector<Expr>& indices);

// The number of elements an allocation spans (at least 1, so the C array is legal), or
// nullopt if that does not fit in 64 bits.
std::optional<int64_t> span(const BufferNode& buffer);

}  // namespace minic::loop::c_syntax
