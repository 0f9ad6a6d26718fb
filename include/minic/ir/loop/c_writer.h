// CWriter: the walk that writes a loop IR function as C-family source. Course module 3.
//
// Two printers share it: the equivalent C of module 3 (c_printer.h, for reading) and the
// CUDA back end of module 6 (src/codegen/cuda/), which writes kernels NVRTC compiles. Both
// write expressions, stores, blocks and branches the same way; they differ in what a loop
// kind, an allocation and a pointer parameter become. Those are the virtual hooks:
//
//   for_loop       a For: C writes every kind as a C loop (a comment names its kind);
//                  CUDA writes a thread-bound loop as its thread's index, guarded
//   declare_array  an Allocate's storage: C arrays; CUDA `__shared__` and registers
//   barrier        a barrier statement: `__syncthreads();` in both
//   identifier     a C name: CUDA C++ reserves more words than C
//   prelude_call   the function min, max, floordiv and floormod call
//
// What the walk writes, whatever the dialect:
//   - buffers are flat pointers indexed with their strides: A[i, j] is A[i * 64 + j];
//   - a vector store or expression statement runs lane by lane (a loop over `lane`, whose
//     expressions are that lane's scalars: ramp(b, s, n) is b + lane * s);
//   - a block binds its iteration variables as constants, then its predicate, its init
//     (when every reduction variable is 0) and its body;
//   - every variable and buffer shares one namespace of C names, bound in a scope stack:
//     a name that is no C identifier or is reserved is rewritten, a clash gets a suffix;
//   - operators take C's precedence; operands are parenthesised only where C needs it.
//
// Chapter: docs/module3-loop-ir.md#3-the-text-form-and-the-equivalent-c
#pragma once

#include "minic/ir/loop/stmt.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace minic::loop {

class CWriter {
 public:
  virtual ~CWriter() = default;

 protected:
  // --- names ---
  // Binds `node` (a Var or a BufferNode) to a fresh C name made from `own`.
  std::string bind(const void* node, const std::string& own);
  // The C name bound to `node`, or `own` made an identifier if it is unbound.
  std::string lookup(const void* node, const std::string& own) const;
  // Names bound after a scope_depth() are dropped by end_scope(depth).
  size_t scope_depth() const { return names_.size(); }
  void end_scope(size_t depth) { names_.resize(depth); }

  // --- expressions ---
  // The C text of `e` and its precedence (c_syntax::Precedence).
  std::pair<std::string, int> expr(const Expr& e);
  std::string text(const Expr& e) { return expr(e).first; }
  // `e`, parenthesised if it binds less tightly than `least`.
  std::string operand(const Expr& e, int least);
  // buffer[flat index].
  std::string access(const Buffer& buffer, const std::vector<Expr>& indices);
  // The end of a loop's range, min + extent, as C compares a loop variable with it.
  std::string loop_end(const For* node);

  // --- statements ---
  void line(const std::string& text);
  void indented(const Stmt& body);
  void stmt(const Stmt& s);

  // The C name of `own` (c_syntax::c_identifier), and the function a min, max, floordiv
  // or floormod calls (c_syntax::prelude_function): a dialect may reserve more names.
  virtual std::string identifier(std::string_view own) const;
  virtual std::string prelude_call(ExprKind kind) const;

  virtual void for_loop(const For* node) = 0;
  // `for (int64_t v = min; v < end; ++v) {  // comment`, the body, `}` (index_type_).
  void c_loop(const For* node, const std::string& comment);
  virtual void declare_array(const Buffer& buffer) = 0;
  virtual void barrier();

  std::string out_;
  int indent_ = 0;
  // The C type of loop and iteration variables: int64_t, as the loop IR computes
  // indices; a dialect may narrow it where the indices provably fit.
  std::string index_type_ = "int64_t";

 private:
  void store(const Store* node);
  void evaluate(const Evaluate* node);
  void block(const Block* node);
  template <typename Body>
  void per_lane(int lanes, const char* what, Body&& body);

  std::vector<std::pair<const void*, std::string>> names_;
};

}  // namespace minic::loop
