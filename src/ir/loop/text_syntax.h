// Spelling rules the loop IR printer and parser share. Course module 3.
//
// Both sides of the .mloop text form include this, so that what one writes the other
// reads: which names may stay bare, how a typed immediate is spelled, how a type name
// with lanes is split.
//
// Chapter: docs/module3-loop-ir.md#3-the-text-form-and-the-equivalent-c
#pragma once

#include "minic/support/token_cursor.h"

#include "minic/ir/loop/expr.h"

#include <optional>
#include <string>
#include <string_view>

namespace minic::loop::text {

// The words with a meaning in the grammar (`for`, `block`, `true`, `select`, ...). A
// variable, buffer or block named like one is printed quoted.
bool is_keyword(std::string_view word);

// A name that prints bare: [A-Za-z_][A-Za-z0-9_]* in parts joined by single dots
// (`i`, `i.0`, `threadIdx.x`), and not a keyword or a spelling of inf or nan.
bool is_bare_name(std::string_view name);

// Names and strings that need it are quoted by minic::quote (token_cursor.h).
using minic::quote;

// The name bare when it may be, quoted otherwise.
std::string name_text(std::string_view name);

// "f32", "f32x8": the type as casts spell it, and back (nullopt for no such type).
std::string type_text(DataType type);
std::optional<DataType> type_from_text(std::string_view text);

// The default type of an unsuffixed literal: i64 for integers, f32 for floats.
inline constexpr DType kDefaultIntType = DType::i64;
inline constexpr DType kDefaultFloatType = DType::f32;

// An integer or bool immediate: `3`, `-3i32`, `255u8`, `true`.
std::string int_literal_text(int64_t value, DType dtype);

// A float immediate, at the precision of its type: `1.5`, `1.0f64`, `-0.0`, `1e-45`,
// `inf`, `-inff64`, `nan`. The digits are the shortest that read back to the same value of
// that type; every NaN prints as `nan`.
std::string float_literal_text(double value, DType dtype);

// `inf`, `nan`, or one of them followed by a float type name (`inff64`): the type, or
// nullopt if `word` is not such a spelling.
std::optional<DType> special_float_type(std::string_view word);

// The value of the float literal `digits` (as the lexer read it, without sign or suffix)
// in `dtype`, rounded as that type rounds; nullopt if it is out of the type's range.
std::optional<double> read_float(std::string_view digits, bool negative, DType dtype);

// `value` rounded to `dtype`'s precision (f32, f16, bf16 narrow; f64 stays).
double round_to(double value, DType dtype);

}  // namespace minic::loop::text
