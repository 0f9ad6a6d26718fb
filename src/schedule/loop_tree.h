// Finding and replacing statements in a function's body: what every schedule primitive
// does before and after its own rewrite. Private to src/schedule.
//
// Course module 4. Loop IR statements are immutable and shared, so a primitive never
// edits a loop in place: it finds the statement (a loop by its variable, a block by its
// name), builds the new statement, and rebuilds the path from the root to it
// (replace_stmt). The path also answers "which loops are above this block?".
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#pragma once

#include "minic/ir/loop/stmt.h"

#include <functional>
#include <string>
#include <vector>

namespace minic::schedule {

using loop::Stmt;

// The statements from the root down to the For whose variable is `loop_var`, the For
// last; empty if there is none.
std::vector<Stmt> path_to_loop(const Stmt& root, const loop::Var* loop_var);
// The statements from the root down to the block named `name`, the Block last; empty if
// there is none.
std::vector<Stmt> path_to_block(const Stmt& root, const std::string& name);

// The path to the For of `loop` (a loop variable) in the function, the For last; fails
// naming `primitive` if the variable is not a loop of the function (for example one that
// a split replaced).
std::vector<Stmt> loop_path(const loop::PrimFunc& func, const loop::Expr& loop,
                            const std::string& primitive);
// The For of `loop`; fails as loop_path.
const loop::For& find_loop(const loop::PrimFunc& func, const loop::Expr& loop,
                           const std::string& primitive);
// The path to the block named `name`, the Block last; fails naming `primitive`.
std::vector<Stmt> block_path(const loop::PrimFunc& func, const std::string& name,
                             const std::string& primitive);

// The For statements of a path, outermost first.
std::vector<const loop::For*> loops_on_path(const std::vector<Stmt>& path);

// `root` with the statement `target` (found by identity) replaced by `replacement`. A
// null replacement removes the statement from the Seq that holds it. `target` must be in
// `root` (an internal error otherwise).
Stmt replace_stmt(const Stmt& root, const Stmt& target, const Stmt& replacement);

// Every block of `root`, in program order.
std::vector<const loop::Block*> collect_blocks(const Stmt& root);

// The name of a loop for messages: its variable's name.
std::string loop_name(const loop::Expr& loop);

}  // namespace minic::schedule

namespace minic::schedule {

// `loop` with another kind (and GPU axis), its variable, bounds, body and annotations kept.
Stmt with_loop_kind(const loop::For& loop, loop::ForKind kind, const std::string& thread_axis);

// Verifies a primitive's result and makes it the function's body. A result that does not
// verify is refused: "<primitive>: the result would not be valid loop IR: <reason>".
void commit_body(loop::PrimFunc& func, Stmt body, const std::string& primitive);

}  // namespace minic::schedule

namespace minic::schedule {

// The first loop in `root` (itself included, outermost first) that `match` accepts; null
// if none does.
const loop::For* find_loop_where(const Stmt& root,
                                 const std::function<bool(const loop::For&)>& match);

}  // namespace minic::schedule
