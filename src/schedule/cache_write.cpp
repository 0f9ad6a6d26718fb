// cache_write: a block computes into a new buffer of a faster scope; a new block copies
// the result out to the original buffer.
//
// Course module 4. On a GPU a block accumulates in registers ("local") and writes global
// memory once; on a CPU a tile of the output stays in cache. reverse_compute_at then moves
// the copy-out under a tile loop of the block.
//
//   Before                                   After cache_write(f, "C", 0, local)
//   for i in 0..64 {                         alloc C_local: f32[64,48] local {
//     for j in 0..48 {                         for i in 0..64 {
//       for k in 0..32 {                         for j in 0..48 {
//         block C(vi = .. i, vj = .. j,            for k in 0..32 {
//                 vk = reduce(32) k) {               block C(...) {
//           init { C[vi, vj] = 0.0 }                   init { C_local[vi, vj] = 0.0 }
//           C[vi, vj] = C[vi, vj] + ...                C_local[vi, vj] = C_local[vi, vj] + ...
//   ...                                        ...
//                                              for ax0 in 0..64 {
//                                                for ax1 in 0..48 {
//                                                  block C_local(v0 = spatial(64) ax0, ...) {
//                                                    reads(C_local[v0, v1]) writes(C[v0, v1])
//                                                    C[v0, v1] = C_local[v0, v1]
//
// Preconditions (each failure names the block and the reason):
//   - `write_index` names one of the block's write regions, buffer B;
//   - every store to B in the block's body and init is B[v...] with distinct spatial
//     iteration variables, the same in each store, not under a loop or branch inside the
//     block: the block writes exactly the box of those variables' extents;
//   - the block reads B only at those indices, and only if it has an init (a reduction
//     starts from its init; anything else would read the empty cache);
//   - its predicate (if any) only guards its domain;
//   - no other block inside the block's outermost loop touches B (it would see B before
//     the copy-out).
//
// Algorithm:
//   1. check the preconditions;
//   2. make the buffer `<B>_<scope>` (the name made unique), B's shape and type;
//   3. rewrite the block to use it (loads, stores, init, regions);
//   4. build the copy-out nest over the box the block writes and put it just after the
//      block's outermost loop; allocate the new buffer around the function's body.
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#include "minic/schedule/primitives.h"

#include "block_edit.h"
#include "loop_tree.h"
#include "preconditions.h"

#include "minic/support/error.h"

namespace minic::schedule {
namespace {

using loop::Block;

constexpr const char* kPrimitive = "cache_write";

bool same_indices(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  for (size_t d = 0; d < a.size(); ++d) {
    if (!same_expr(a[d], b[d])) return false;
  }
  return true;
}

// The indices every store to `buffer` in the block uses (checked to be the same).
std::vector<Expr> write_indices(const Block& block, const loop::Buffer& buffer) {
  std::vector<Expr> indices;
  for (const Stmt& part : {block.init, block.body}) {
    StoreList list = stores_of(part);
    for (const loop::Store* store : list.stores) {
      if (store->buffer != buffer) continue;
      if (list.nested) {
        fail("{}: block {} stores to {} under a loop or branch of its own", kPrimitive,
             block.name, buffer->name);
      }
      if (indices.empty()) indices = store->indices;
      if (!same_indices(indices, store->indices)) {
        fail("{}: block {} stores to {} at different indices", kPrimitive, block.name,
             buffer->name);
      }
    }
  }
  if (indices.empty()) {
    fail("{}: block {} declares a write of {} but never stores to it", kPrimitive, block.name,
         buffer->name);
  }
  return indices;
}

}  // namespace

std::string cache_write(PrimFunc& func, const std::string& block_name, int write_index,
                        MemoryScope scope) {
  std::vector<Stmt> path = block_path(func, block_name, kPrimitive);
  const Block& block = *path.back().as<Block>();
  if (write_index < 0 || write_index >= static_cast<int>(block.writes.size())) {
    fail("{}: block {} has {} write regions; there is no write {}", kPrimitive, block_name,
         block.writes.size(), write_index);
  }
  const loop::Buffer buffer = block.writes[static_cast<size_t>(write_index)].buffer;
  std::vector<Expr> indices = write_indices(block, buffer);
  std::optional<std::vector<size_t>> positions = iter_var_positions(block, indices);
  bool spatial = positions.has_value();
  for (size_t position : positions.value_or(std::vector<size_t>{})) {
    spatial = spatial && block.iter_vars[position].kind == loop::IterKind::spatial;
  }
  if (!spatial) {
    fail("{}: block {} stores to {} at indices that are not distinct spatial iteration "
         "variables", kPrimitive, block_name, buffer->name);
  }
  std::vector<loop::Access> loads =
      loop::accesses_of(loop::collect_accesses(block.body), buffer.get(), loop::AccessKind::load);
  if (!loads.empty() && !block.init) {
    fail("{}: block {} reads {} without an init: it would read the cache before writing it",
         kPrimitive, block_name, buffer->name);
  }
  for (const loop::Access& load : loads) {
    if (!same_indices(load.indices, indices)) {
      fail("{}: block {} reads {} at other indices than it writes", kPrimitive, block_name,
           buffer->name);
    }
  }
  require(kPrimitive, guards_only_its_domain(block));
  size_t anchor = 0;
  while (anchor + 1 < path.size() && !path[anchor].as<loop::For>()) ++anchor;
  for (const loop::Block* other : collect_blocks(path[anchor])) {
    if (other != &block && block_buffer_use(*other).touches(buffer.get())) {
      fail("{}: block {} also uses {} inside the loops of block {}", kPrimitive, other->name,
           buffer->name, block_name);
    }
  }

  std::string name = unique_buffer_name(func, fmt::format("{}_{}", buffer->name,
                                                          loop::memory_scope_name(scope)));
  loop::Buffer cache = loop::BufferNode::make(name, buffer->dtype, buffer->shape, scope);
  Stmt new_block = replace_buffer(path.back(), buffer, cache);
  Stmt body = replace_stmt(func.body, path.back(), new_block);

  // The copy-out block: B[v...] = cache[v...] over the box the block writes.
  std::string copy_name = unique_block_name(func, name);
  std::vector<int64_t> extents;
  for (size_t position : *positions) extents.push_back(block.iter_vars[position].extent);
  Stmt nest = copy_nest(copy_name, cache, buffer, extents);
  std::vector<Stmt> new_path = path_to_block(body, block_name);
  new_path.resize(anchor + 1);
  body = insert_beside(body, new_path, nest, /*after=*/true);
  commit_body(func, loop::Allocate::make(cache, body), kPrimitive);
  return copy_name;
}

}  // namespace minic::schedule
