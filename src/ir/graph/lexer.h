// The lexer of the graph text form, and the cursor the parser reads tokens with.
// Course module 2.
//
// Splits .mgraph text into tokens, each with the line and column where it starts, so
// that the parser can say "<source>:3:14: expected ')', found ','".
//
// Chapter: docs/module2-graph-ir.md#the-text-form
#pragma once

#include "minic/support/token_cursor.h"

#include <string>
#include <string_view>
#include <vector>

namespace minic::graph_text {

enum class TokenKind {
  kEnd,         // end of input
  kIdentifier,  // graph, const, Conv, f32, kernel_shape, _, inf, nan, ...
  kValue,       // %x or %"a/b": text is the name without % and quotes
  kNodeName,    // @relu_1 or @"a/b": text is the name
  kInteger,     // 3, -1, 0x7fc00001
  kFloat,       // 0.5, -1e-05, -inf
  kString,      // "constant": text is the decoded string
  kPunct,       // one of ( ) [ ] { } < > , : = ? or the arrow ->
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;
  int line = 1;
  int column = 1;

  bool is(TokenKind k, std::string_view t) const { return kind == k && text == t; }
  bool is_punct(std::string_view t) const { return is(TokenKind::kPunct, t); }
  bool is_keyword(std::string_view t) const { return is(TokenKind::kIdentifier, t); }
};

// "'('", "%x", "identifier 'foo'", "end of input": the token as an error message names it.
std::string describe(const Token& token);

// All tokens of `text`, ending with one kEnd token. Comments (`//` to the end of the line)
// and white space are skipped. Throws Error "<source>:<line>:<col>: ..." on a character
// that starts no token or a string that does not end.
std::vector<Token> tokenize(std::string_view text, const std::string& source);

// The cursor the parser reads tokens with (minic/support/token_cursor.h).
using TokenCursor = minic::TokenCursor<Token>;

}  // namespace minic::graph_text
