// The text form of schedule traces: printing and parsing. Course module 4.
//
// The grammar, one instruction a line (blank lines and `#` comments are skipped):
//
//   line    := [names '='] primitive '(' [arg {',' arg}] ')'
//   names   := name {',' name}
//   arg     := name | integer | '[' [integer {',' integer}] ']' | string
//
// Names are [A-Za-z_][A-Za-z0-9_]*; strings are double-quoted with the escapes of
// minic::quote. The grammar is small enough for a character-level parser: no lexer.
//
// Chapter: docs/module4-schedules.md#1-schedules-are-traces
#include "minic/schedule/trace.h"

#include "minic/support/error.h"
#include "minic/support/token_cursor.h"

#include <fmt/format.h>

#include <cctype>
#include <sstream>

namespace minic::schedule {
namespace {

std::string print_arg(const TraceArg& arg) {
  if (const auto* var = std::get_if<TraceVar>(&arg)) return var->name;
  if (const auto* value = std::get_if<int64_t>(&arg)) return std::to_string(*value);
  if (const auto* list = std::get_if<std::vector<int64_t>>(&arg)) {
    return fmt::format("[{}]", fmt::join(*list, ", "));
  }
  return quote(std::get<std::string>(arg));
}

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Reads one line of a trace, character by character.
class LineParser {
 public:
  LineParser(const std::string& line, const std::string& filename, int line_number)
      : text_(line), filename_(filename), line_number_(line_number) {}

  Instruction parse() {
    Instruction instruction;
    std::vector<std::string> names = {name("a primitive or a trace variable")};
    skip_spaces();
    while (accept(',')) names.push_back(name("a trace variable"));
    if (accept('=')) {
      instruction.results = std::move(names);
      instruction.primitive = name("a primitive");
    } else if (names.size() == 1) {
      instruction.primitive = names[0];
    } else {
      error("expected '=' after the result names");
    }
    expect('(');
    if (!accept(')')) {
      do {
        instruction.args.push_back(arg());
      } while (accept(','));
      expect(')');
    }
    skip_spaces();
    if (pos_ < text_.size()) error(fmt::format("unexpected '{}' after the instruction", text_[pos_]));
    return instruction;
  }

 private:
  TraceArg arg() {
    skip_spaces();
    if (pos_ >= text_.size()) error("expected an argument");
    char c = text_[pos_];
    if (c == '"') return string_literal();
    if (c == '[') {
      ++pos_;
      std::vector<int64_t> list;
      if (!accept(']')) {
        do {
          list.push_back(integer());
        } while (accept(','));
        expect(']');
      }
      return list;
    }
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) return integer();
    return TraceVar{name("an argument")};
  }

  std::string name(const char* what) {
    skip_spaces();
    if (pos_ >= text_.size() || !is_name_start(text_[pos_])) error(fmt::format("expected {}", what));
    size_t start = pos_;
    while (pos_ < text_.size() && is_name_char(text_[pos_])) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  int64_t integer() {
    skip_spaces();
    size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    std::string digits = text_.substr(start, pos_ - start);
    if (digits.empty() || digits == "-") error("expected an integer");
    try {
      return std::stoll(digits);
    } catch (const std::out_of_range&) {
      error(fmt::format("integer {} is out of range", digits));
    }
  }

  std::string string_literal() {
    size_t start = pos_++;
    std::string value;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c != '\\') {
        value += c;
        continue;
      }
      if (pos_ >= text_.size()) break;
      char escaped = text_[pos_++];
      switch (escaped) {
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        case 'r': value += '\r'; break;
        case 'x': {
          auto hex = [&](size_t at) {
            return at < text_.size() && std::isxdigit(static_cast<unsigned char>(text_[at]));
          };
          if (!hex(pos_) || !hex(pos_ + 1)) error("\\x needs two hex digits");
          value += static_cast<char>(std::stoi(text_.substr(pos_, 2), nullptr, 16));
          pos_ += 2;
          break;
        }
        default: value += escaped;
      }
    }
    if (pos_ >= text_.size()) {
      pos_ = start;
      error("unterminated string");
    }
    ++pos_;
    return value;
  }

  void skip_spaces() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    skip_spaces();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!accept(c)) error(fmt::format("expected '{}'", c));
  }
  [[noreturn]] void error(const std::string& message) const {
    throw TraceError(fmt::format("{}:{}:{}: {}", filename_, line_number_, pos_ + 1, message));
  }

  const std::string& text_;
  const std::string& filename_;
  int line_number_;
  size_t pos_ = 0;
};

// The line without its comment: a `#` outside a string starts one.
std::string strip_comment(const std::string& line) {
  bool in_string = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (in_string && c == '\\') {
      ++i;
    } else if (c == '"') {
      in_string = !in_string;
    } else if (c == '#' && !in_string) {
      return line.substr(0, i);
    }
  }
  return line;
}

}  // namespace

std::string print_instruction(const Instruction& instruction) {
  std::vector<std::string> args;
  for (const TraceArg& arg : instruction.args) args.push_back(print_arg(arg));
  std::string call = fmt::format("{}({})", instruction.primitive, fmt::join(args, ", "));
  if (instruction.results.empty()) return call;
  return fmt::format("{} = {}", fmt::join(instruction.results, ", "), call);
}

std::string print_trace(const Trace& trace) {
  std::string text;
  for (const Instruction& instruction : trace.instructions) {
    text += print_instruction(instruction) + "\n";
  }
  return text;
}

Trace parse_trace(const std::string& text, const std::string& filename) {
  Trace trace;
  std::istringstream lines(text);
  std::string line;
  int line_number = 0;
  while (std::getline(lines, line)) {
    ++line_number;
    std::string code = strip_comment(line);
    if (code.find_first_not_of(" \t\r") == std::string::npos) continue;
    trace.instructions.push_back(LineParser(code, filename, line_number).parse());
  }
  return trace;
}

}  // namespace minic::schedule
