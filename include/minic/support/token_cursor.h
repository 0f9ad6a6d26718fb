// A position in a list of tokens, with the error reporting a recursive-descent parser
// needs. Shared by the parsers of the graph text form (src/ir/graph) and the loop IR text
// form (src/ir/loop), whose lexers each define their own Token.
// Course module 1.
//
// `Token` needs `kind`, `line`, `column`, `is_punct(text)` and `is_keyword(text)`, and
// a function `describe(const Token&)` in its namespace that names the token for error
// messages ("'('", "end of input"). The token list ends with one end-of-input token.
//
// Chapter: docs/module1-overview.md#support-code-srcsupport
#pragma once

#include "minic/support/error.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace minic {

template <typename Token>
class TokenCursor {
 public:
  TokenCursor(std::vector<Token> tokens, std::string source)
      : tokens_(std::move(tokens)), source_(std::move(source)) {}

  // The token `ahead` places on (the end-of-input token past the end).
  const Token& peek(size_t ahead = 0) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  Token take() {
    Token token = peek();
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return token;
  }
  // Takes the next token if it is that punctuation / keyword.
  bool accept_punct(std::string_view punct) {
    if (!peek().is_punct(punct)) return false;
    take();
    return true;
  }
  bool accept_keyword(std::string_view keyword) {
    if (!peek().is_keyword(keyword)) return false;
    take();
    return true;
  }
  // Takes the next token, which must be that punctuation / keyword / kind.
  Token expect_punct(std::string_view punct) {
    if (!peek().is_punct(punct)) expected(fmt::format("'{}'", punct));
    return take();
  }
  Token expect_keyword(std::string_view keyword) {
    if (!peek().is_keyword(keyword)) expected(fmt::format("'{}'", keyword));
    return take();
  }
  template <typename Kind>
  Token expect(Kind kind, std::string_view what) {
    if (peek().kind != kind) expected(what);
    return take();
  }

  // Throws "<source>:<line>:<col>: <message>" at `token`.
  [[noreturn]] void error_at(const Token& token, const std::string& message) const {
    fail("{}:{}:{}: {}", source_, token.line, token.column, message);
  }
  // Throws "<source>:<line>:<col>: expected <what>, found <next token>".
  [[noreturn]] void expected(std::string_view what) const {
    error_at(peek(), fmt::format("expected {}, found {}", what, describe(peek())));
  }

 private:
  std::vector<Token> tokens_;
  std::string source_;
  size_t pos_ = 0;
};

// `text` in double quotes, with `"`, `\`, newline, tab and carriage return escaped by a
// backslash and other control bytes as \xHH: how both text forms write names and strings
// that are not plain identifiers.
std::string quote(std::string_view text);

}  // namespace minic
