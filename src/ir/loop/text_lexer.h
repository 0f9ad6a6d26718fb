// The lexer of the loop IR text form, and the cursor the parser reads tokens with.
// Course module 3.
//
// Splits .mloop text into tokens, each with the line and column where it starts, so that
// the parser can say "<source>:3:14: expected ')', found ','".
//
// Chapter: docs/module3-loop-ir.md#3-the-text-form-and-the-equivalent-c
#pragma once

#include "minic/support/token_cursor.h"

#include <string>
#include <string_view>
#include <vector>

namespace minic::loop::text {

enum class TokenKind {
  kEnd,         // end of input
  kIdentifier,  // for, i, i.0, threadIdx.x, f32x8, exp, inf, nanf64
  kString,      // "a/b": text is the decoded string (a quoted name)
  kInteger,     // 128, 3i32: text is the digits, suffix the type name after them
  kFloat,       // 1.5, 1e-45, 2.0f64: likewise
  kPunct,       // ( ) [ ] { } , : = @ .. + - * / % == != < <= > >= && || !
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;
  std::string suffix;  // numbers only: "i32" in 3i32, empty for none
  int line = 1;
  int column = 1;

  bool is_punct(std::string_view p) const { return kind == TokenKind::kPunct && text == p; }
  bool is_keyword(std::string_view k) const { return kind == TokenKind::kIdentifier && text == k; }
  // An identifier or a quoted string: what names a variable, buffer, block or function.
  bool is_name() const { return kind == TokenKind::kIdentifier || kind == TokenKind::kString; }
};

// "'('", "'for'", "number 3", "end of input": the token as an error message names it.
std::string describe(const Token& token);

// All tokens of `text`, ending with one kEnd token. `//` comments and white space are
// skipped. Throws Error "<source>:<line>:<col>: ..." on a character that starts no token
// or a string that does not end.
std::vector<Token> tokenize(std::string_view text, const std::string& source);

// The cursor the parser reads tokens with (minic/support/token_cursor.h).
using TokenCursor = minic::TokenCursor<Token>;

}  // namespace minic::loop::text
