// What the block and memory primitives (cache_read, cache_write, compute_at,
// reverse_compute_at, compute_inline, reverse_compute_inline, decompose_reduction,
// storage_align) share besides regions (region.h) and preconditions (preconditions.h):
// which blocks read and write a buffer (the access analysis), the loop nest that holds
// one block alone, moving a nest or a statement, replacing a buffer, fresh names. Private
// to src/schedule.
//
// Course module 4. These primitives move a block, or a copy of one, from one place in the
// loop nest to another. Their legality questions are all about buffers: "does anything
// between here and there write what this block reads?" The helpers answer with the
// loads and stores a block really makes (its init and body), not only its declared
// regions, so a stale region never makes a primitive produce wrong code.
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#pragma once

#include "minic/ir/loop/access.h"
#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/stmt.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace minic::schedule {

using loop::Buffer;
using loop::BufferNode;
using loop::Stmt;

// Which buffers a statement or one block reads and writes: the loop IR's access
// analysis (include/minic/ir/loop/access.h).
using loop::block_buffer_use;
using loop::buffer_use;
using loop::BufferUse;

// The path (from `root`) to every block, in program order.
std::vector<std::vector<Stmt>> all_block_paths(const Stmt& root);

// True if `path` passes through `stmt`.
bool passes_through(const std::vector<Stmt>& path, const Stmt& stmt);

// Two statements in one Seq: where the path `a` and the path `b` (from one root) part,
// when that is at a Seq. `index` is the Seq's index in both paths; `a_position` and
// `b_position` are the positions of a[index + 1] and b[index + 1] in it.
struct SeqSiblings {
  size_t index = 0;
  size_t a_position = 0;
  size_t b_position = 0;
};
std::optional<SeqSiblings> seq_siblings(const std::vector<Stmt>& a, const std::vector<Stmt>& b);

// Where compute_at and reverse_compute_at start from: the path to the block, the path to
// the loop, the index in the block's path of its nest root (nest_root_index), that
// nest's path, and where the nest and the loop sit in the sequence that holds both.
struct NestMove {
  std::vector<Stmt> path;
  std::vector<Stmt> loop_path;
  size_t root = 0;
  std::vector<Stmt> nest_path;
  SeqSiblings siblings;
};
// Fails, naming `primitive`, if the block is already under the loop, or if its loop nest
// and the loop are not siblings in one sequence.
NestMove locate_nest_move(const loop::PrimFunc& func, const std::string& block,
                          const loop::Expr& loop, const char* primitive);

// The function's body with the nest of `move` removed and `nest` put first (at_start) or
// last in the body of the loop of `move`: the last step of compute_at and
// reverse_compute_at.
Stmt move_nest_into_loop(const loop::PrimFunc& func, const NestMove& move, const Stmt& nest,
                         bool at_start);

// True if `buffer` is a parameter of `func`.
bool is_param(const loop::PrimFunc& func, const BufferNode* buffer);

// The index in `path` (from block_path) of the outermost statement of the loop nest that
// holds the block alone: every For from there down has the next statement as its whole
// body. The block's own index when no loop holds it alone.
size_t nest_root_index(const std::vector<Stmt>& path);

// `root` with `stmt` put just before (after = false) or after the statement path.back(),
// in the Seq that holds it (a new Seq when its parent is not one). `path` runs from
// `root` to the anchor statement.
Stmt insert_beside(const Stmt& root, const std::vector<Stmt>& path, const Stmt& stmt,
                   bool after);

// `body` with `first` put at its start (or `last` at its end), flattening a Seq body.
Stmt prepend_stmt(const Stmt& body, const Stmt& first);
Stmt append_stmt(const Stmt& body, const Stmt& last);

// replace_buffer (every use of one buffer made another's) is a loop IR rewrite:
// include/minic/ir/loop/analysis.h.
using loop::replace_buffer;

// `root` without the allocation of `buffer` (an Allocate or a block's alloc_buffers
// entry); `root` unchanged if it does not allocate it.
Stmt remove_allocation(const Stmt& root, const BufferNode* buffer);

// A buffer (block) name not yet used in `func`: `base`, else `base_1`, `base_2`, ...
std::string unique_buffer_name(const loop::PrimFunc& func, const std::string& base);
std::string unique_block_name(const loop::PrimFunc& func, const std::string& base);

// True if both paths (from the same root) pass through one For: the statements at their
// ends run inside one loop.
bool share_loop(const std::vector<Stmt>& a, const std::vector<Stmt>& b);

// The conjuncts of a predicate (`a && b && c` gives a, b, c); empty for none.
std::vector<loop::Expr> conjuncts(const loop::Expr& predicate);

// True if `condition` is a guard of the block's domain: `binding < extent` for one of its
// iteration variables (structurally the same binding). A split that does not divide
// leaves such guards; they exclude only points outside the block's domain.
bool is_domain_guard(const loop::Block& block, const loop::Expr& condition);

// One iteration variable of a row-major index: its position in the block and its stride.
struct IndexDigit {
  size_t position;
  int64_t stride;
};

// The iteration variables that `index` combines in row-major order, outermost first:
// w2 * 56 + w3 with w3 of extent 56 is {w2, 56}, {w3, 1} (the index a fused loop gives);
// a variable alone is one digit of stride 1. nullopt for any other index.
std::optional<std::vector<IndexDigit>> row_major_digits(const loop::Block& block,
                                                        const loop::Expr& index);

// For each index, the position of the iteration variable that it is exactly (a Var);
// nullopt if an index is anything else or two indices are the same variable.
std::optional<std::vector<size_t>> iter_var_positions(const loop::Block& block,
                                                      const std::vector<loop::Expr>& indices);

// True if some iteration variable of `kind` of the block is bound to an expression of
// `var` (a loop around it): the loop feeds that kind of variable.
bool feeds(const loop::Block& block, const loop::Var* var, loop::IterKind kind);

// True if `indices` are the block's spatial iteration variables, each once (in any
// order): a store at them writes one element per iteration of the spatial variables.
bool at_spatial_vars(const loop::Block& block, const std::vector<loop::Expr>& indices);

// The stores of `stmt` (a block's body or init), outermost first, and whether one sits
// under a loop or a branch inside the statement.
struct StoreList {
  std::vector<const loop::Store*> stores;
  bool nested = false;
};
StoreList stores_of(const Stmt& stmt);

// Structural equality of index expressions (include/minic/ir/loop/analysis.h).
using loop::same_expr;

// The copy of the box [0, extents) of `from` into `to`: loops ax0, ax1, ... around
//   block NAME(v0 = spatial(e0) ax0, ...) { reads(from[v0, ...]) writes(to[v0, ...])
//                                           to[v0, ...] = from[v0, ...] }
Stmt copy_nest(const std::string& name, const Buffer& from, const Buffer& to,
               const std::vector<int64_t>& extents);

// `base + offset`, leaving out a zero base.
loop::Expr plus(const loop::Expr& base, const loop::Expr& offset);

}  // namespace minic::schedule
