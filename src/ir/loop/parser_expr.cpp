// The loop IR parser, second half: expressions, literals and types. Course module 3.
//
// Precedence climbing over the operator table kBinaryOps, loosest level first:
//
//   expr     := level 1
//   level n  := level n+1 (OP_n level n+1)*      left-associative; comparisons never chain
//   level 6  := '!' level 6 | primary
//   primary  := NUMBER | '-' NUMBER | true | false | inf | nan | '(' expr ')'
//             | NAME | NAME '[' exprs ']' | INTRINSIC ['<' TYPE '>'] '(' exprs ')'
//             | cast '<' TYPE '>' '(' expr ')' | min | max | floordiv | floormod | select
//             | ramp '(' expr ',' expr ',' INT ')' | broadcast '(' expr ',' INT ')'
//
// There is no negation node: `-` before a number is part of the literal.
//
// Chapter: docs/module3-loop-ir.md#3-the-text-form-and-the-equivalent-c
#include "parser_state.h"
#include "text_syntax.h"

#include <charconv>
#include <deque>
#include <cmath>
#include <limits>

namespace minic::loop::text {

namespace {

using MakeBinary = Expr (*)(Expr, Expr);

struct BinaryOp {
  std::string_view symbol;
  int level;
  MakeBinary make;
};

constexpr int kCompareLevel = 3;
constexpr int kUnaryLevel = 6;
constexpr int kMaxNesting = 200;

const BinaryOp kBinaryOps[] = {
    {"||", 1, &Or::make}, {"&&", 2, &And::make}, {"==", 3, &EQ::make}, {"!=", 3, &NE::make},
    {"<", 3, &LT::make},  {"<=", 3, &LE::make},  {">", 3, &GT::make},  {">=", 3, &GE::make},
    {"+", 4, &Add::make}, {"-", 4, &Sub::make},  {"*", 5, &Mul::make}, {"/", 5, &Div::make},
    {"%", 5, &Mod::make},
};

const BinaryOp* binary_op(const Token& token, int level) {
  if (token.kind != TokenKind::kPunct) return nullptr;
  for (const BinaryOp& op : kBinaryOps) {
    if (op.level == level && op.symbol == token.text) return &op;
  }
  return nullptr;
}

// The binary nodes spelled as calls.
MakeBinary binary_call(std::string_view name) {
  if (name == "min") return &Min::make;
  if (name == "max") return &Max::make;
  if (name == "floordiv") return &FloorDiv::make;
  if (name == "floormod") return &FloorMod::make;
  return nullptr;
}

bool is_number(const Token& token) {
  return token.kind == TokenKind::kInteger || token.kind == TokenKind::kFloat;
}

bool is_special_float(const Token& token) {
  return token.kind == TokenKind::kIdentifier && special_float_type(token.text).has_value();
}

}  // namespace

Parser::NestingGuard::NestingGuard(Parser& parser) : parser_(parser) {
  if (++parser_.nesting_ > kMaxNesting) {
    --parser_.nesting_;
    parser_.in_.error_at(parser_.in_.peek(),
                         fmt::format("nested more than {} levels deep", kMaxNesting));
  }
}

Expr Parser::expr() {
  NestingGuard guard(*this);
  return binary(1);
}

Expr Parser::binary(int level) {
  if (level == kUnaryLevel) return unary();
  Expr lhs = binary(level + 1);
  // Each operator of a chain puts the chain so far one level deeper in the tree (a + b + c
  // is (a + b) + c), so it counts as a level of nesting until the chain ends: else a line
  // of thousands of `+` parses into a tree that the printer and every visitor recurse
  // through until the stack overflows.
  std::deque<NestingGuard> chain;
  while (const BinaryOp* op = binary_op(in_.peek(), level)) {
    chain.emplace_back(*this);
    Token at = in_.take();
    Expr rhs = binary(level + 1);
    lhs = build(at, [&] { return op->make(lhs, rhs); });
    if (level == kCompareLevel && binary_op(in_.peek(), level)) {
      in_.error_at(in_.peek(), "comparisons do not chain: add parentheses");
    }
  }
  return lhs;
}

Expr Parser::unary() {
  if (!in_.peek().is_punct("!")) return primary();
  Token at = in_.take();
  NestingGuard guard(*this);
  Expr operand = unary();
  return build(at, [&] { return Not::make(operand); });
}

Expr Parser::primary() {
  const Token& next = in_.peek();
  if (is_number(next) || is_special_float(next)) return literal(false);
  if (next.is_punct("-")) {
    in_.take();
    if (!is_number(in_.peek()) && !is_special_float(in_.peek())) {
      in_.expected("a number after '-' (there is no negation: write 0 - x)");
    }
    return literal(true);
  }
  if (in_.accept_punct("(")) {
    Expr inner = expr();
    in_.expect_punct(")");
    return inner;
  }
  if (next.is_keyword("true") || next.is_keyword("false")) {
    Token token = in_.take();
    return IntImm::make(token.text == "true" ? 1 : 0, DataType::boolean());
  }
  if (next.is_name()) return named(in_.take());
  in_.expected("an expression");
}

Expr Parser::literal(bool negative) {
  Token token = in_.take();
  if (token.kind == TokenKind::kIdentifier) {  // inf, nan, inff64, ...
    DType dtype = *special_float_type(token.text);
    double value = token.text.starts_with("inf") ? std::numeric_limits<double>::infinity()
                                                 : std::numeric_limits<double>::quiet_NaN();
    return build(token, [&] { return FloatImm::make(negative ? -value : value, {dtype, 1}); });
  }
  DType dtype = token.kind == TokenKind::kFloat ? kDefaultFloatType : kDefaultIntType;
  if (!token.suffix.empty()) {
    std::optional<DType> suffix = dtype_from_name(token.suffix);
    if (!suffix) in_.error_at(token, fmt::format("unknown type suffix '{}'", token.suffix));
    dtype = *suffix;
  }
  if (is_float(dtype)) {
    std::optional<double> value = read_float(token.text, negative, dtype);
    if (!value) {
      in_.error_at(token, fmt::format("{} does not fit in {}", token.text, dtype_name(dtype)));
    }
    return build(token, [&] { return FloatImm::make(*value, {dtype, 1}); });
  }
  if (token.kind == TokenKind::kFloat) {
    in_.error_at(token, fmt::format("{} is not an integer ({})", token.text, dtype_name(dtype)));
  }
  std::string digits = negative ? "-" + token.text : token.text;
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) {
    in_.error_at(token, fmt::format("{} does not fit in 64 bits", digits));
  }
  return build(token, [&] { return IntImm::make(value, {dtype, 1}); });
}

// An expression that starts with a name: a variable, a load, an intrinsic or a call.
Expr Parser::named(const Token& name) {
  if (name.kind == TokenKind::kIdentifier && is_keyword(name.text)) return intrinsic_form(name);
  if (in_.peek().is_punct("[")) {
    Buffer buffer = lookup_buffer(name);
    std::vector<Expr> indices = expr_list("[", "]");
    return build(name, [&] { return Load::make(buffer, indices); });
  }
  bool typed_call = in_.peek().is_punct("<") && in_.peek(1).kind == TokenKind::kIdentifier &&
                    type_from_text(in_.peek(1).text) && in_.peek(2).is_punct(">") &&
                    in_.peek(3).is_punct("(");
  if (name.kind == TokenKind::kIdentifier && (in_.peek().is_punct("(") || typed_call)) {
    std::optional<DataType> type;
    if (typed_call) {
      in_.take();
      type = this->type();
      in_.expect_punct(">");
    }
    std::vector<Expr> args = expr_list("(", ")");
    if (!type) type = args.empty() ? DataType::int64() : args[0].type();
    return build(name, [&] { return Call::make(*type, name.text, args); });
  }
  const Expr* var = vars_.find(name.text);
  if (!var) in_.error_at(name, fmt::format("unknown variable '{}'", name.text));
  return *var;
}

// cast, select, min, max, floordiv, floormod, ramp, broadcast: keywords that build a node.
Expr Parser::intrinsic_form(const Token& keyword) {
  const std::string& word = keyword.text;
  if (word == "cast") {
    in_.expect_punct("<");
    DataType type = this->type();
    in_.expect_punct(">");
    in_.expect_punct("(");
    Expr value = expr();
    in_.expect_punct(")");
    return build(keyword, [&] { return Cast::make(type, value); });
  }
  if (word == "ramp" || word == "broadcast") {
    in_.expect_punct("(");
    Expr base = expr();
    in_.expect_punct(",");
    Expr stride = word == "ramp" ? expr() : Expr();
    if (word == "ramp") in_.expect_punct(",");
    Token at = in_.peek();
    int64_t lanes = integer("the number of lanes");
    if (lanes < 2 || lanes > std::numeric_limits<int>::max()) {
      in_.error_at(at, fmt::format("{} lanes (a vector has 2 or more)", lanes));
    }
    in_.expect_punct(")");
    if (word == "ramp") return build(keyword, [&] { return Ramp::make(base, stride, lanes); });
    return build(keyword, [&] { return Broadcast::make(base, lanes); });
  }
  MakeBinary make = binary_call(word);
  if (word != "select" && !make) {
    in_.error_at(keyword, fmt::format("expected an expression, found '{}'", word));
  }
  std::vector<Expr> args = expr_list("(", ")");
  size_t arity = word == "select" ? 3 : 2;
  if (args.size() != arity) {
    in_.error_at(keyword, fmt::format("{} takes {} arguments, not {}", word, arity, args.size()));
  }
  if (word == "select") {
    return build(keyword, [&] { return Select::make(args[0], args[1], args[2]); });
  }
  return build(keyword, [&] { return make(args[0], args[1]); });
}

std::vector<Expr> Parser::expr_list(std::string_view open, std::string_view close) {
  in_.expect_punct(open);
  std::vector<Expr> exprs;
  if (in_.accept_punct(close)) return exprs;
  do {
    exprs.push_back(expr());
  } while (in_.accept_punct(","));
  in_.expect_punct(close);
  return exprs;
}

DataType Parser::type() {
  const Token& token = in_.peek();
  std::optional<DataType> type;
  if (token.kind == TokenKind::kIdentifier) type = type_from_text(token.text);
  if (!type) in_.expected("a type (f32, i64, f32x8, ...)");
  in_.take();
  return *type;
}

int64_t Parser::integer(std::string_view what) {
  bool negative = in_.accept_punct("-");
  const Token& token = in_.peek();
  if (token.kind != TokenKind::kInteger || !token.suffix.empty()) in_.expected(what);
  std::string digits = negative ? "-" + token.text : token.text;
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) {
    in_.error_at(token, fmt::format("{} does not fit in 64 bits", digits));
  }
  in_.take();
  return value;
}

std::string Parser::name(std::string_view what) {
  const Token& token = in_.peek();
  bool keyword = token.kind == TokenKind::kIdentifier && is_keyword(token.text);
  if (!token.is_name() || keyword) in_.expected(what);
  return in_.take().text;
}

Buffer Parser::lookup_buffer(const Token& name) {
  const Buffer* buffer = buffers_.find(name.text);
  if (!buffer) in_.error_at(name, fmt::format("unknown buffer '{}'", name.text));
  return *buffer;
}

}  // namespace minic::loop::text
