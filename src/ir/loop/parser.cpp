// The loop IR parser, first half: functions, statements and blocks. Course module 3.
//
// Recursive descent, one method per construct of the grammar:
//
//   module     := function*
//   function   := 'func' '@' NAME '(' [decl (',' decl)*] ')' '{' statement* '}'
//   decl       := NAME ':' DTYPE '[' [INT (',' INT)*] ']' ['strides' '[' INTS ']'] [SCOPE]
//   statement  := [parallel | vectorized | unrolled] 'for' NAME 'in' RANGE
//                     ['bind' '(' AXIS ')'] [annotations] '{' statement* '}'
//               | 'block' NAME '(' [iter (',' iter)*] ')' ['where' '(' expr ')']
//                     [annotations] '{' block-body '}'
//               | 'alloc' decl '{' statement* '}'
//               | 'if' '(' expr ')' '{' statement* '}' ['else' '{' statement* '}']
//               | 'evaluate' expr | CALL | NAME '[' exprs ']' '=' expr
//   RANGE      := INT '..' INT | expr '..' '+' expr
//   iter       := NAME '=' ('spatial' | 'reduce') '(' INT ')' expr
//   block-body := ('alloc_buffer' decl)* ['reads' '(' regions ')'] ['writes' '(' regions ')']
//                 ['init' '{' statement* '}'] statement*
//
// Each binding opens a scope (Scope::bind) that closes with its construct (pop_to), in
// the same places the printer opens them; a loop's bounds and a block's bindings are read
// before the names they bind are in scope.
//
// Chapter: docs/module3-loop-ir.md#3-the-text-form-and-the-equivalent-c
#include "minic/ir/loop/parser.h"

#include "parser_state.h"
#include "text_syntax.h"

#include "minic/tensor/tensor.h"

#include <algorithm>

namespace minic::loop {

namespace text {

LoopModule Parser::module() {
  LoopModule module;
  while (in_.peek().kind != TokenKind::kEnd) module.functions.push_back(function());
  return module;
}

PrimFunc Parser::function() {
  in_.expect_keyword("func");
  in_.expect_punct("@");
  PrimFunc func;
  func.name = name("a function name");
  size_t depth = buffers_.depth();
  in_.expect_punct("(");
  if (!in_.accept_punct(")")) {
    do {
      func.params.push_back(buffer_declaration());
    } while (in_.accept_punct(","));
    in_.expect_punct(")");
  }
  in_.expect_punct("{");
  func.body = statements();
  in_.expect_punct("}");
  buffers_.pop_to(depth);
  return func;
}

Buffer Parser::buffer_declaration() {
  Token at = in_.peek();
  std::string buffer_name = name("a buffer name");
  in_.expect_punct(":");
  const Token& dtype_token = in_.peek();
  std::optional<DType> dtype;
  if (dtype_token.kind == TokenKind::kIdentifier) dtype = dtype_from_name(dtype_token.text);
  if (!dtype) in_.expected("an element type (f32, i64, ...)");
  in_.take();
  auto integers = [&](std::string_view what) {
    std::vector<int64_t> values;
    in_.expect_punct("[");
    if (in_.accept_punct("]")) return values;
    do {
      values.push_back(integer(what));
    } while (in_.accept_punct(","));
    in_.expect_punct("]");
    return values;
  };
  std::vector<int64_t> shape = integers("a dimension");
  int64_t elements = 1;
  for (int64_t dim : shape) {
    if (dim > 0 && __builtin_mul_overflow(elements, dim, &elements)) {
      in_.error_at(at, fmt::format("buffer {} has more than 2^63 elements", buffer_name));
    }
  }
  std::vector<int64_t> strides = row_major_strides(shape);
  if (in_.accept_keyword("strides")) strides = integers("a stride");
  MemoryScope scope = MemoryScope::global;
  if (in_.accept_keyword("shared")) {
    scope = MemoryScope::shared;
  } else if (in_.accept_keyword("local")) {
    scope = MemoryScope::local;
  } else {
    in_.accept_keyword("global");
  }
  Buffer buffer = build(
      at, [&] { return BufferNode::make_strided(buffer_name, *dtype, shape, strides, scope); });
  buffers_.bind(buffer_name, buffer);
  return buffer;
}

Stmt Parser::statements() {
  std::vector<Stmt> stmts;
  while (!in_.peek().is_punct("}") && in_.peek().kind != TokenKind::kEnd) {
    stmts.push_back(statement());
  }
  if (stmts.empty()) return Stmt();
  return Seq::make(std::move(stmts));
}

Stmt Parser::braced_body(std::string_view what) {
  Token open = in_.expect_punct("{");
  Stmt body = statements();
  if (!body) in_.error_at(open, fmt::format("{} needs at least one statement", what));
  in_.expect_punct("}");
  return body;
}

Stmt Parser::statement() {
  NestingGuard guard(*this);
  const Token& next = in_.peek();
  if (next.is_keyword("for") || next.is_keyword("parallel") || next.is_keyword("vectorized") ||
      next.is_keyword("unrolled")) {
    return for_loop();
  }
  if (next.is_keyword("block")) return block();
  if (next.is_keyword("alloc")) return allocate();
  if (next.is_keyword("if")) return if_then_else();
  if (next.is_keyword("evaluate")) {
    Token at = in_.take();
    Expr value = expr();
    return build(at, [&] { return Evaluate::make(value); });
  }
  bool keyword = next.kind == TokenKind::kIdentifier && is_keyword(next.text);
  if (next.is_name() && !keyword && in_.peek(1).is_punct("[")) return store();
  if (next.kind == TokenKind::kIdentifier && !keyword &&
      (in_.peek(1).is_punct("(") || in_.peek(1).is_punct("<"))) {
    Token at = next;
    Expr value = expr();
    return build(at, [&] { return Evaluate::make(value); });
  }
  in_.expected("a statement");
}

Stmt Parser::for_loop() {
  Token at = in_.peek();
  ForKind kind = ForKind::serial;
  if (in_.accept_keyword("parallel")) {
    kind = ForKind::parallel;
  } else if (in_.accept_keyword("vectorized")) {
    kind = ForKind::vectorized;
  } else if (in_.accept_keyword("unrolled")) {
    kind = ForKind::unrolled;
  }
  in_.expect_keyword("for");
  Token var_token = in_.peek();
  std::string var_name = name("a loop variable");
  in_.expect_keyword("in");
  Expr min = expr();
  in_.expect_punct("..");
  Expr extent;
  if (in_.accept_punct("+")) {
    extent = expr();
  } else {
    const IntImm* lo = min.as<IntImm>();
    if (!lo || min.type() != DataType::int64()) {
      in_.expected("'+' (a loop that does not start at a constant is written MIN..+EXTENT)");
    }
    Token end_token = in_.peek();
    int64_t end = integer("the end of the range");
    int64_t size = 0;
    if (__builtin_sub_overflow(end, lo->value, &size)) {
      in_.error_at(end_token, "the range's extent does not fit in 64 bits");
    }
    extent = IntImm::make(size);
  }
  std::string axis;
  if (in_.accept_keyword("bind")) {
    in_.expect_punct("(");
    axis = name("a thread axis (threadIdx.x, blockIdx.y, ...)");
    in_.expect_punct(")");
    if (kind != ForKind::serial) {
      in_.error_at(at, "a loop bound to a thread axis has no other kind");
    }
    kind = ForKind::thread_binding;
  }
  std::map<std::string, int64_t> notes = annotations();
  Expr var = build(var_token, [&] { return Var::make(var_name); });
  size_t depth = vars_.depth();
  vars_.bind(var_name, var);
  Stmt body = braced_body("a loop");
  vars_.pop_to(depth);
  return build(at, [&] { return For::make(var, min, extent, kind, body, axis, notes); });
}

bool Parser::at_annotations() const {
  return in_.peek().is_punct("{") && in_.peek(1).is_name() && in_.peek(2).is_punct("=");
}

std::map<std::string, int64_t> Parser::annotations() {
  std::map<std::string, int64_t> notes;
  if (!at_annotations()) return notes;
  in_.expect_punct("{");
  do {
    Token at = in_.peek();
    std::string key = name("an annotation name");
    in_.expect_punct("=");
    int64_t value = integer("an integer annotation value");
    if (!notes.emplace(key, value).second) {
      in_.error_at(at, fmt::format("annotation '{}' given twice", key));
    }
  } while (in_.accept_punct(","));
  in_.expect_punct("}");
  return notes;
}

Stmt Parser::block() {
  Token at = in_.expect_keyword("block");
  Block::Parts parts;
  parts.name = name("a block name");
  // The bindings read the variables outside the block, so its own come into scope after.
  in_.expect_punct("(");
  std::vector<std::string> iter_names;
  if (!in_.accept_punct(")")) {
    do {
      parts.iter_vars.push_back(iter_var(iter_names));
    } while (in_.accept_punct(","));
    in_.expect_punct(")");
  }
  size_t var_depth = vars_.depth();
  size_t buffer_depth = buffers_.depth();
  for (size_t k = 0; k < iter_names.size(); ++k) vars_.bind(iter_names[k], parts.iter_vars[k].var);
  if (in_.accept_keyword("where")) {
    in_.expect_punct("(");
    parts.predicate = expr();
    in_.expect_punct(")");
  }
  parts.annotations = annotations();
  in_.expect_punct("{");
  while (in_.accept_keyword("alloc_buffer")) parts.alloc_buffers.push_back(buffer_declaration());
  if (in_.accept_keyword("reads")) parts.reads = regions();
  if (in_.accept_keyword("writes")) parts.writes = regions();
  if (in_.accept_keyword("init")) parts.init = braced_body("init");
  parts.body = statements();
  in_.expect_punct("}");
  vars_.pop_to(var_depth);
  buffers_.pop_to(buffer_depth);
  return build(at, [&] { return Block::make(std::move(parts)); });
}

IterVar Parser::iter_var(std::vector<std::string>& names) {
  Token at = in_.peek();
  std::string var_name = name("an iteration variable");
  if (std::find(names.begin(), names.end(), var_name) != names.end()) {
    in_.error_at(at, fmt::format("iteration variable '{}' appears twice", var_name));
  }
  names.push_back(var_name);
  in_.expect_punct("=");
  IterVar iter;
  if (in_.accept_keyword("reduce")) {
    iter.kind = IterKind::reduce;
  } else if (!in_.accept_keyword("spatial")) {
    in_.expected("'spatial' or 'reduce'");
  }
  in_.expect_punct("(");
  iter.extent = integer("the extent of the iteration variable");
  in_.expect_punct(")");
  iter.binding = expr();
  iter.var = build(at, [&] { return Var::make(var_name); });
  return iter;
}

std::vector<BufferRegion> Parser::regions() {
  std::vector<BufferRegion> result;
  in_.expect_punct("(");
  do {
    Token at = in_.peek();
    if (!at.is_name()) in_.expected("a buffer region (A[i, 0:4])");
    in_.take();
    BufferRegion region{lookup_buffer(at), {}};
    in_.expect_punct("[");
    if (!in_.accept_punct("]")) {
      do {
        region.region.push_back(range());
      } while (in_.accept_punct(","));
      in_.expect_punct("]");
    }
    if (static_cast<int64_t>(region.region.size()) != region.buffer->rank()) {
      in_.error_at(at, fmt::format("buffer {} has {} dimensions, the region {}", at.text,
                                   region.buffer->rank(), region.region.size()));
    }
    result.push_back(std::move(region));
  } while (in_.accept_punct(","));
  in_.expect_punct(")");
  return result;
}

Range Parser::range() {
  Range r{expr(), IntImm::make(1)};
  if (!in_.accept_punct(":")) return r;
  if (in_.accept_punct("+")) {
    r.extent = expr();
    return r;
  }
  const IntImm* lo = r.min.as<IntImm>();
  if (!lo || r.min.type() != DataType::int64()) {
    in_.expected("'+' (a range that does not start at a constant is written MIN:+EXTENT)");
  }
  Token end_token = in_.peek();
  int64_t end = integer("the end of the range");
  int64_t size = 0;
  if (__builtin_sub_overflow(end, lo->value, &size)) {
    in_.error_at(end_token, "the range's extent does not fit in 64 bits");
  }
  r.extent = IntImm::make(size);
  return r;
}

Stmt Parser::allocate() {
  Token at = in_.expect_keyword("alloc");
  size_t depth = buffers_.depth();
  Buffer buffer = buffer_declaration();
  Stmt body = braced_body("an allocation");
  buffers_.pop_to(depth);
  return build(at, [&] { return Allocate::make(buffer, body); });
}

Stmt Parser::if_then_else() {
  Token at = in_.expect_keyword("if");
  in_.expect_punct("(");
  Expr condition = expr();
  in_.expect_punct(")");
  Stmt then_case = braced_body("an if");
  Stmt else_case;
  if (in_.accept_keyword("else")) else_case = braced_body("an else");
  return build(at, [&] { return IfThenElse::make(condition, then_case, else_case); });
}

Stmt Parser::store() {
  Token at = in_.take();
  Buffer buffer = lookup_buffer(at);
  std::vector<Expr> indices = expr_list("[", "]");
  in_.expect_punct("=");
  Expr value = expr();
  return build(at, [&] { return Store::make(buffer, indices, value); });
}

}  // namespace text

LoopModule parse_loop_module(const std::string& text, const std::string& source) {
  return text::Parser(text, source).module();
}

PrimFunc& select_function(LoopModule& module, const std::string& name, const std::string& source,
                          const std::string& how_to_name) {
  if (name.empty()) {
    if (module.functions.size() != 1) {
      fail("{} holds {} functions; name the one to use{}", source, module.functions.size(),
           how_to_name.empty() ? "" : " " + how_to_name);
    }
    return module.functions.front();
  }
  for (PrimFunc& func : module.functions) {
    if (func.name == name) return func;
  }
  fail("{} has no function @{}", source, name);
}

}  // namespace minic::loop
