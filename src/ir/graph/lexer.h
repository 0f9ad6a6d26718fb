// The lexer of the graph text form, and the cursor the parser reads tokens with.
// Course module 2.
//
// Splits .mgraph text into tokens, each with the line and column where it starts, so
// that the parser can say "<source>:3:14: expected ')', found ','".
#pragma once

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

// A position in a token list, with the error reporting every parsing function shares.
class TokenCursor {
 public:
  TokenCursor(std::vector<Token> tokens, std::string source)
      : tokens_(std::move(tokens)), source_(std::move(source)) {}

  // The token `ahead` places on (the kEnd token past the end).
  const Token& peek(size_t ahead = 0) const;
  Token take();
  // Takes the next token if it is that punctuation / keyword.
  bool accept_punct(std::string_view punct);
  bool accept_keyword(std::string_view keyword);
  // Takes the next token, which must be that punctuation / keyword / kind.
  Token expect_punct(std::string_view punct);
  Token expect_keyword(std::string_view keyword);
  Token expect(TokenKind kind, std::string_view what);

  // Throws "<source>:<line>:<col>: <message>" at `token`.
  [[noreturn]] void error_at(const Token& token, const std::string& message) const;
  // Throws "<source>:<line>:<col>: expected <what>, found <next token>".
  [[noreturn]] void expected(std::string_view what) const;

 private:
  std::vector<Token> tokens_;
  std::string source_;
  size_t pos_ = 0;
};

}  // namespace minic::graph_text
