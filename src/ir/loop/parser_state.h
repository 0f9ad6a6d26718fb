// The loop IR parser's state, shared by its two halves: parser_expr.cpp (expressions,
// literals, types) and parser.cpp (statements, blocks, functions). Course module 3.
//
// Chapter: docs/module3-loop-ir.md#3-the-text-form-and-the-equivalent-c
#pragma once

#include "text_lexer.h"

#include "minic/ir/loop/stmt.h"
#include "minic/support/error.h"

#include <string_view>
#include <utility>

namespace minic::loop::text {

// Names bound in nested scopes, innermost last; lookups search innermost first.
template <typename T>
class Scope {
 public:
  const T* find(const std::string& name) const {
    for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
      if (it->first == name) return &it->second;
    }
    return nullptr;
  }
  void bind(std::string name, T value) { entries_.emplace_back(std::move(name), std::move(value)); }
  size_t depth() const { return entries_.size(); }
  void pop_to(size_t depth) { entries_.resize(depth); }

 private:
  std::vector<std::pair<std::string, T>> entries_;
};

class Parser {
 public:
  Parser(std::string_view text, const std::string& source) : in_(tokenize(text, source), source) {}

  LoopModule module();

 private:
  // --- statements (parser.cpp) --------------------------------------------------------------
  PrimFunc function();
  // Statements up to the next `}` (not taken): null for none, one, or a Seq.
  Stmt statements();
  Stmt statement();
  Stmt for_loop();
  Stmt block();
  Stmt allocate();
  Stmt if_then_else();
  Stmt store();
  IterVar iter_var(std::vector<std::string>& names);
  std::vector<BufferRegion> regions();
  Range range();
  std::map<std::string, int64_t> annotations();
  bool at_annotations() const;
  Buffer buffer_declaration();
  // `{ statements }` that must hold at least one statement.
  Stmt braced_body(std::string_view what);

  // --- expressions (parser_expr.cpp) --------------------------------------------------------
  Expr expr();
  Expr binary(int level);
  Expr unary();
  Expr primary();
  Expr literal(bool negative);
  Expr named(const Token& name);
  Expr intrinsic_form(const Token& keyword);
  std::vector<Expr> expr_list(std::string_view open, std::string_view close);
  DataType type();
  int64_t integer(std::string_view what);
  std::string name(std::string_view what);
  Buffer lookup_buffer(const Token& name);

  // Runs `make` (an IR node's constructor); its invariant errors become parse errors at
  // `at`.
  template <typename Make>
  auto build(const Token& at, Make&& make) -> decltype(make()) {
    try {
      return make();
    } catch (const Error& error) {
      constexpr std::string_view kInternal = "internal error (a bug in minic): ";
      std::string_view message = error.what();
      if (message.starts_with(kInternal)) message.remove_prefix(kInternal.size());
      in_.error_at(at, std::string(message));
    }
  }

  // Counts nesting, so that absurdly deep input is an error rather than a stack overflow.
  class NestingGuard {
   public:
    explicit NestingGuard(Parser& parser);
    ~NestingGuard() { --parser_.nesting_; }

   private:
    Parser& parser_;
  };

  TokenCursor in_;
  Scope<Expr> vars_;
  Scope<Buffer> buffers_;
  int nesting_ = 0;
};

}  // namespace minic::loop::text
