// The text form of the loop IR (.mloop): parsing. The syntax is described in printer.h.
//
// Course module 3. A hand-written lexer and a recursive-descent parser. Names are looked
// up in the scopes the text opens (parameters, allocations, loops, blocks), innermost
// first, so each use becomes the very Var or Buffer its binding made. Unsuffixed integer
// literals are i64 and unsuffixed float literals f32 (the parser infers no types from
// context: an f64 operand takes `1.0f64`).
//
// print_module(parse_loop_module(print_module(m), ...)) == print_module(m) for every
// module whose variables and buffers are all bound where they are used.
//
// Chapter: docs/module3-loop-ir.md#3-the-text-form-and-the-equivalent-c
#pragma once

#include "minic/ir/loop/stmt.h"

#include <string>

namespace minic::loop {

// Parses the functions of `text`. `source` names the text in errors (a path, "<stdin>").
// Throws Error "<source>:<line>:<col>: <reason>" at the first problem: a token that does
// not fit the grammar, a name bound nowhere, or a node invariant the IR's `make`
// functions check (a Store of i64 into an f32 buffer, a Load with too few indices), the
// position being that of the offending statement or operator.
LoopModule parse_loop_module(const std::string& text, const std::string& source);

// The function of `module` named `name`, or its only one where `name` is empty: what a
// tool schedules or runs. Error naming `source` where there is no such function, or
// several and no name (`how_to_name` then says how to give one: "with --func").
PrimFunc& select_function(LoopModule& module, const std::string& name, const std::string& source,
                          const std::string& how_to_name = "");

}  // namespace minic::loop
