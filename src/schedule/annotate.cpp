// annotate_loop and annotate_block: named integer hints on a loop or a block.
//
// Course module 4. An annotation changes nothing the kernel computes; it tells a later
// pass or the backend how to treat the loop or block (how far to unroll, which
// instruction to use). Setting a key again replaces its value.
//
// Before, annotate_loop(k, "unroll_step", 4):
//   for k in 0..32 { ... }
// After:
//   for k in 0..32 {unroll_step=4} { ... }
//
// Preconditions: the loop or block exists; the key is a name ([A-Za-z_][A-Za-z0-9_]*), so
// that it prints and parses back in the text form.
//
// Algorithm: rebuild the loop or block with the key set in its annotations.
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#include "minic/schedule/primitives.h"

#include "loop_tree.h"
#include "minic/support/error.h"

#include <algorithm>
#include <cctype>

namespace minic::schedule {
namespace {

void check_key(const std::string& primitive, const std::string& key) {
  auto is_word_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  };
  bool valid = !key.empty() && !std::isdigit(static_cast<unsigned char>(key[0])) &&
               std::all_of(key.begin(), key.end(), is_word_char);
  if (!valid) {
    fail("{}: annotation key '{}' is not a name (letters, digits and _, not starting with a "
         "digit)", primitive, key);
  }
}

}  // namespace

void annotate_loop(PrimFunc& func, const Expr& loop, const std::string& key, int64_t value) {
  check_key("annotate_loop", key);
  std::vector<loop::Stmt> path = loop_path(func, loop, "annotate_loop");
  const loop::For& node = *path.back().as<loop::For>();
  std::map<std::string, int64_t> annotations = node.annotations;
  annotations[key] = value;
  loop::Stmt annotated = loop::For::make(node.var, node.min, node.extent, node.for_kind,
                                         node.body, node.thread_axis, std::move(annotations));
  commit_body(func, replace_stmt(func.body, path.back(), annotated), "annotate_loop");
}

void annotate_block(PrimFunc& func, const std::string& block, const std::string& key,
                    int64_t value) {
  check_key("annotate_block", key);
  std::vector<loop::Stmt> path = block_path(func, block, "annotate_block");
  loop::Block::Parts parts = path.back().as<loop::Block>()->parts();
  parts.annotations[key] = value;
  commit_body(func, replace_stmt(func.body, path.back(), loop::Block::make(std::move(parts))),
              "annotate_block");
}

}  // namespace minic::schedule
