// The lexer of the loop IR text form, and the cursor the parser reads tokens with.
// Course module 3.
//
// Splits .mloop text into tokens, each with the line and column where it starts, so that
// the parser can say "<source>:3:14: expected ')', found ','".
#pragma once

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
  // Takes the next token, which must be that punctuation / keyword.
  Token expect_punct(std::string_view punct);
  Token expect_keyword(std::string_view keyword);

  // Throws "<source>:<line>:<col>: <message>" at `token`.
  [[noreturn]] void error_at(const Token& token, const std::string& message) const;
  // Throws "<source>:<line>:<col>: expected <what>, found <next token>".
  [[noreturn]] void expected(std::string_view what) const;

 private:
  std::vector<Token> tokens_;
  std::string source_;
  size_t pos_ = 0;
};

}  // namespace minic::loop::text
