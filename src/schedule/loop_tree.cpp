// Paths to statements, replacing a statement, collecting blocks. Course module 4.
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#include "loop_tree.h"

#include "minic/ir/loop/verifier.h"
#include "minic/ir/loop/visitor.h"
#include "minic/support/error.h"

namespace minic::schedule {
namespace {

using loop::Block;
using loop::For;

// The children of a statement, in program order (a block's init before its body).
std::vector<Stmt> children(const Stmt& stmt) {
  switch (stmt.kind()) {
    case loop::StmtKind::For:
      return {stmt.as<For>()->body};
    case loop::StmtKind::Block: {
      const Block* block = stmt.as<Block>();
      std::vector<Stmt> result;
      if (block->init) result.push_back(block->init);
      result.push_back(block->body);
      return result;
    }
    case loop::StmtKind::Allocate:
      return {stmt.as<loop::Allocate>()->body};
    case loop::StmtKind::Seq:
      return stmt.as<loop::Seq>()->stmts;
    case loop::StmtKind::IfThenElse: {
      const auto* branch = stmt.as<loop::IfThenElse>();
      std::vector<Stmt> result = {branch->then_case};
      if (branch->else_case) result.push_back(branch->else_case);
      return result;
    }
    case loop::StmtKind::Store:
    case loop::StmtKind::Evaluate:
      return {};
  }
  return {};
}

// Depth-first search for the first statement `match` accepts; fills `path`.
template <typename Match>
bool find_path(const Stmt& stmt, const Match& match, std::vector<Stmt>& path) {
  if (!stmt) return false;
  path.push_back(stmt);
  if (match(stmt)) return true;
  for (const Stmt& child : children(stmt)) {
    if (find_path(child, match, path)) return true;
  }
  path.pop_back();
  return false;
}

// `stmt` rebuilt with its child `target` replaced by `replacement`.
Stmt with_child_replaced(const Stmt& stmt, const Stmt& target, const Stmt& replacement) {
  if (const auto* node = stmt.as<For>()) {
    return For::make(node->var, node->min, node->extent, node->for_kind, replacement,
                     node->thread_axis, node->annotations);
  }
  if (const auto* node = stmt.as<Block>()) {
    Block::Parts parts = node->parts();
    if (parts.init.same_as(target)) {
      parts.init = replacement;
    } else {
      parts.body = replacement;
    }
    return Block::make(std::move(parts));
  }
  if (const auto* node = stmt.as<loop::Allocate>()) {
    return loop::Allocate::make(node->buffer, replacement);
  }
  if (const auto* node = stmt.as<loop::Seq>()) {
    std::vector<Stmt> stmts;
    for (const Stmt& child : node->stmts) {
      if (!child.same_as(target)) {
        stmts.push_back(child);
      } else if (replacement) {
        stmts.push_back(replacement);
      }
    }
    return loop::Seq::make(std::move(stmts));
  }
  const auto* node = stmt.as<loop::IfThenElse>();
  MINIC_CHECK(node != nullptr);
  if (node->then_case.same_as(target)) {
    return loop::IfThenElse::make(node->condition, replacement, node->else_case);
  }
  return loop::IfThenElse::make(node->condition, node->then_case, replacement);
}

class BlockCollector : public loop::IRVisitor {
 public:
  std::vector<const Block*> blocks;
  void visit_Block(const Block* node) override {
    blocks.push_back(node);
    IRVisitor::visit_Block(node);
  }
};

}  // namespace

std::vector<Stmt> path_to_loop(const Stmt& root, const loop::Var* loop_var) {
  std::vector<Stmt> path;
  auto match = [&](const Stmt& stmt) {
    const For* node = stmt.as<For>();
    return node && node->var.get() == loop_var;
  };
  find_path(root, match, path);
  return path;
}

std::vector<Stmt> path_to_block(const Stmt& root, const std::string& name) {
  std::vector<Stmt> path;
  auto match = [&](const Stmt& stmt) {
    const Block* node = stmt.as<Block>();
    return node && node->name == name;
  };
  find_path(root, match, path);
  return path;
}

std::vector<Stmt> loop_path(const loop::PrimFunc& func, const loop::Expr& loop,
                            const std::string& primitive) {
  const loop::Var* var = loop.as<loop::Var>();
  if (!var) fail("{}: a loop is named by its loop variable, not by an expression", primitive);
  std::vector<Stmt> path = path_to_loop(func.body, var);
  if (path.empty()) {
    fail("{}: {} is not a loop of @{} (a primitive applied before may have replaced it)",
         primitive, var->name, func.name);
  }
  return path;
}

const loop::For& find_loop(const loop::PrimFunc& func, const loop::Expr& loop,
                           const std::string& primitive) {
  return *loop_path(func, loop, primitive).back().as<For>();
}

std::vector<Stmt> block_path(const loop::PrimFunc& func, const std::string& name,
                             const std::string& primitive) {
  std::vector<Stmt> path = path_to_block(func.body, name);
  if (path.empty()) fail("{}: @{} has no block named '{}'", primitive, func.name, name);
  return path;
}

std::vector<const loop::For*> loops_on_path(const std::vector<Stmt>& path) {
  std::vector<const For*> loops;
  for (const Stmt& stmt : path) {
    if (const For* node = stmt.as<For>()) loops.push_back(node);
  }
  return loops;
}

Stmt replace_stmt(const Stmt& root, const Stmt& target, const Stmt& replacement) {
  std::vector<Stmt> path;
  find_path(root, [&](const Stmt& stmt) { return stmt.same_as(target); }, path);
  MINIC_CHECK(!path.empty());
  Stmt current = replacement;
  for (size_t i = path.size() - 1; i-- > 0;) {
    current = with_child_replaced(path[i], path[i + 1], current);
  }
  return current;
}

std::vector<const loop::Block*> collect_blocks(const Stmt& root) {
  BlockCollector collector;
  collector.visit(root);
  return collector.blocks;
}

std::string loop_name(const loop::Expr& loop) {
  const loop::Var* var = loop.as<loop::Var>();
  return var ? var->name : "(not a loop)";
}

}  // namespace minic::schedule

namespace minic::schedule {

Stmt with_loop_kind(const loop::For& loop, loop::ForKind kind, const std::string& thread_axis) {
  return loop::For::make(loop.var, loop.min, loop.extent, kind, loop.body, thread_axis,
                         loop.annotations);
}

void commit_body(loop::PrimFunc& func, Stmt body, const std::string& primitive) {
  loop::PrimFunc result = func;
  result.body = std::move(body);
  try {
    loop::verify_func(result);
  } catch (const Error& error) {
    fail("{}: the result would not be valid loop IR: {}", primitive, error.what());
  }
  func.body = std::move(result.body);
}

}  // namespace minic::schedule

namespace minic::schedule {

const loop::For* find_loop_where(const Stmt& root,
                                 const std::function<bool(const loop::For&)>& match) {
  std::vector<Stmt> path;
  auto matches = [&](const Stmt& stmt) {
    const loop::For* node = stmt.as<loop::For>();
    return node && match(*node);
  };
  return find_path(root, matches, path) ? path.back().as<loop::For>() : nullptr;
}

}  // namespace minic::schedule
