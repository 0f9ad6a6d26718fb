// The lexer of the graph text form. Course module 2.
//
// One pass over the characters: skip white space and `//` comments, then read the longest
// token that starts here. Names after `%` and `@` are either bare ([A-Za-z0-9_.]+) or a
// quoted string; numbers are integers unless they have a `.` or an exponent (`inf` and `nan`
// are identifiers, `-inf` a float).
//
// Chapter: docs/module2-graph-ir.md#the-text-form
#include "lexer.h"

#include "text_syntax.h"

#include "minic/support/error.h"

#include <algorithm>

namespace minic::graph_text {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex_digit(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool is_identifier_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

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
  bool starts_with_at(size_t pos, std::string_view word) const {
    return pos <= text_.size() && text_.substr(pos).starts_with(word);
  }
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
    if (c == '%' || c == '@') {
      advance();
      token.kind = c == '%' ? TokenKind::kValue : TokenKind::kNodeName;
      token.text = read_name(c);
    } else if (c == '"') {
      token.kind = TokenKind::kString;
      token.text = read_string();
    } else if (is_digit(c) ||
               (c == '-' && (is_digit(peek(1)) || starts_with_at(pos_ + 1, "inf")))) {
      read_number(token);
    } else if (is_identifier_start(c)) {
      token.kind = TokenKind::kIdentifier;
      while (!at_end() && is_name_char(peek())) token.text += advance();
    } else if (c == '-' && peek(1) == '>') {
      token.kind = TokenKind::kPunct;
      token.text = "->";
      advance();
      advance();
    } else if (std::string_view("()[]{}<>,:=?").find(c) != std::string_view::npos) {
      token.kind = TokenKind::kPunct;
      token.text = std::string(1, advance());
    } else {
      error_here(fmt::format("unexpected character '{}'", c));
    }
  }

  // The name after `%` or `@`: bare characters or a quoted string.
  std::string read_name(char sigil) {
    if (peek() == '"') return read_string();
    std::string name;
    while (!at_end() && is_name_char(peek())) name += advance();
    if (name.empty()) {
      error_here(fmt::format("expected a name or a quoted string after '{}'", sigil));
    }
    return name;
  }

  std::string read_string() {
    advance();  // the opening quote
    std::string text;
    while (true) {
      if (at_end() || peek() == '\n') error_here("this string does not end (missing '\"')");
      char c = advance();
      if (c == '"') return text;
      if (c != '\\') {
        text += c;
        continue;
      }
      if (at_end()) error_here("this string does not end (missing '\"')");
      char escape = advance();
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
        default:
          error_here(fmt::format("unknown escape '\\{}' (use \\\" \\\\ \\n \\t \\r \\xHH)",
                                 escape));
      }
    }
  }

  void read_number(Token& token) {
    token.kind = TokenKind::kInteger;
    if (peek() == '-') token.text += advance();
    if (starts_with_at(pos_, "inf")) {
      token.kind = TokenKind::kFloat;
      for (int i = 0; i < 3; ++i) token.text += advance();
      return;
    }
    if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'X')) {
      token.text += advance();
      token.text += advance();
      while (is_hex_digit(peek())) token.text += advance();
      return;
    }
    while (is_digit(peek())) token.text += advance();
    if (peek() == '.') {
      token.kind = TokenKind::kFloat;
      token.text += advance();
      while (is_digit(peek())) token.text += advance();
    }
    if ((peek() == 'e' || peek() == 'E') &&
        (is_digit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && is_digit(peek(2))))) {
      token.kind = TokenKind::kFloat;
      token.text += advance();
      if (peek() == '+' || peek() == '-') token.text += advance();
      while (is_digit(peek())) token.text += advance();
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
    case TokenKind::kValue: return value_ref(token.text);
    case TokenKind::kNodeName:
      return fmt::format("@{}", is_bare_name(token.text) ? token.text : quote(token.text));
    case TokenKind::kInteger:
    case TokenKind::kFloat: return fmt::format("number {}", token.text);
    case TokenKind::kString: {
      std::string_view text = token.text;
      if (text.size() > 20) return fmt::format("string {}...", quote(text.substr(0, 20)));
      return fmt::format("string {}", quote(text));
    }
    case TokenKind::kPunct: return fmt::format("'{}'", token.text);
  }
  return "?";
}

std::vector<Token> tokenize(std::string_view text, const std::string& source) {
  return Lexer(text, source).run();
}

}  // namespace minic::graph_text
