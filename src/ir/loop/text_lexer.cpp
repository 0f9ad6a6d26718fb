// The lexer of the loop IR text form. Course module 3.
//
// One pass over the characters: skip white space and `//` comments, then read the longest
// token that starts here. A name is [A-Za-z_][A-Za-z0-9_]* in parts joined by single dots
// (`i.0`), so `0..n` and `i..n` split around the range dots. A number is an integer
// unless it has a fraction or an exponent; letters glued to it are its type suffix
// (`3i32`, `1.5f64`). A `-` is always its own token: the parser reads `-3` as a negative
// literal where an operand is expected.
//
// Chapter: docs/module3-loop-ir.md#3-the-text-form-and-the-equivalent-c
#include "text_lexer.h"

#include "minic/support/error.h"

#include <algorithm>

namespace minic::loop::text {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_name_char(char c) { return is_letter(c) || is_digit(c) || c == '_'; }
bool is_hex_digit(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

constexpr std::string_view kTwoCharPuncts[] = {"..", "==", "!=", "<=", ">=", "&&", "||"};
constexpr std::string_view kOneCharPuncts = "()[]{},:=@+-*/%<>!";

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  std::vector<Token> run() {
    std::vector<Token> tokens;
    while (true) {
      skip_space_and_comments();
      Token token;
      token.line = line_;
      token.column = column_;
      if (at_end()) {
        tokens.push_back(token);
        return tokens;
      }
      read_token(token);
      tokens.push_back(std::move(token));
    }
  }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  char advance() {
    char c = text_[pos_++];
    if (c == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    return c;
  }

  [[noreturn]] void error_here(const std::string& message) const {
    fail("{}:{}:{}: {}", source_, line_, column_, message);
  }

  void skip_space_and_comments() {
    while (!at_end()) {
      char c = peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        advance();
      } else if (c == '/' && peek(1) == '/') {
        while (!at_end() && peek() != '\n') advance();
      } else {
        return;
      }
    }
  }

  void read_token(Token& token) {
    char c = peek();
    if (is_digit(c)) {
      read_number(token);
    } else if (is_letter(c) || c == '_') {
      token.kind = TokenKind::kIdentifier;
      while (is_name_char(peek()) || (peek() == '.' && is_name_char(peek(1)))) {
        token.text += advance();
      }
    } else if (c == '"') {
      token.kind = TokenKind::kString;
      token.text = read_string();
    } else {
      read_punct(token);
    }
  }

  void read_punct(Token& token) {
    token.kind = TokenKind::kPunct;
    std::string_view rest = text_.substr(pos_);
    for (std::string_view punct : kTwoCharPuncts) {
      if (rest.starts_with(punct)) {
        token.text = std::string(punct);
        advance();
        advance();
        return;
      }
    }
    if (kOneCharPuncts.find(peek()) == std::string_view::npos) {
      error_here(fmt::format("unexpected character '{}'", peek()));
    }
    token.text = std::string(1, advance());
  }

  void read_number(Token& token) {
    token.kind = TokenKind::kInteger;
    while (is_digit(peek())) token.text += advance();
    if (peek() == '.' && is_digit(peek(1))) {
      token.kind = TokenKind::kFloat;
      token.text += advance();
      while (is_digit(peek())) token.text += advance();
    }
    bool exponent =
        (peek() == 'e' || peek() == 'E') &&
        (is_digit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && is_digit(peek(2))));
    if (exponent) {
      token.kind = TokenKind::kFloat;
      token.text += advance();
      if (peek() == '+' || peek() == '-') token.text += advance();
      while (is_digit(peek())) token.text += advance();
    }
    while (is_name_char(peek())) token.suffix += advance();
  }

  std::string read_string() {
    advance();  // the opening quote
    std::string text;
    while (true) {
      if (at_end() || peek() == '\n') error_here("this name does not end (missing '\"')");
      char c = advance();
      if (c == '"') return text;
      if (c != '\\') {
        text += c;
        continue;
      }
      char escape = at_end() ? '\0' : advance();
      switch (escape) {
        case '"': text += '"'; break;
        case '\\': text += '\\'; break;
        case 'n': text += '\n'; break;
        case 't': text += '\t'; break;
        case 'r': text += '\r'; break;
        case 'x': {
          if (!is_hex_digit(peek()) || !is_hex_digit(peek(1))) {
            error_here("expected two hex digits after '\\x'");
          }
          std::string hex{advance(), advance()};
          text += static_cast<char>(std::stoi(hex, nullptr, 16));
          break;
        }
        default: error_here("unknown escape in a name (use \\\" \\\\ \\n \\t \\r \\xHH)");
      }
    }
  }

  std::string_view text_;
  const std::string& source_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace

std::string describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::kEnd: return "end of input";
    case TokenKind::kIdentifier: return fmt::format("'{}'", token.text);
    case TokenKind::kString: return fmt::format("name \"{}\"", token.text.substr(0, 20));
    case TokenKind::kInteger:
    case TokenKind::kFloat: return fmt::format("number {}{}", token.text, token.suffix);
    case TokenKind::kPunct: return fmt::format("'{}'", token.text);
  }
  return "?";
}

std::vector<Token> tokenize(std::string_view text, const std::string& source) {
  return Lexer(text, source).run();
}

}  // namespace minic::loop::text
