// cache_read: a new block copies a buffer a block reads into a buffer of a faster scope,
// and the block reads the copy.
//
// Course module 4. The first step of every tiled GPU GEMM: stage the tiles of A and B in
// shared memory. cache_read copies the whole buffer, before the block's outermost loop;
// compute_at then moves the copy under a tile loop, where it copies only the tile.
//
//   Before                                   After cache_read(f, "C", 0, shared)
//   for i in 0..64 {                         alloc A_shared: f32[64,32] shared {
//     for j in 0..48 {                         for ax0 in 0..64 {
//       for k in 0..32 {                         for ax1 in 0..32 {
//         block C(...) {                           block A_shared(v0 = spatial(64) ax0, ...) {
//           reads(A[vi, vk], ...)                    reads(A[v0, v1]) writes(A_shared[v0, v1])
//           C[vi, vj] = C[vi, vj]                    A_shared[v0, v1] = A[v0, v1]
//             + A[vi, vk] * B[vk, vj]          ...
//                                              for i in 0..64 {
//                                                ...
//                                                  block C(...) {
//                                                    reads(A_shared[vi, vk], ...)
//                                                    C[vi, vj] = C[vi, vj]
//                                                      + A_shared[vi, vk] * B[vk, vj]
//
// Preconditions (each failure names the block and the reason):
//   - `read_index` names one of the block's read regions, buffer A;
//   - the block does not write A, and no other block inside the block's outermost loop
//     writes A (the copy, taken before that loop, would be stale).
//
// Algorithm:
//   1. check the preconditions;
//   2. make the buffer `<A>_<scope>` (the name made unique), A's shape and type;
//   3. build the copy nest over the whole of A and put it just before the block's
//      outermost loop; allocate the new buffer around the function's body;
//   4. rewrite the block to read the copy (its loads and read regions).
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#include "minic/schedule/primitives.h"

#include "block_edit.h"
#include "loop_tree.h"

#include "minic/support/error.h"

namespace minic::schedule {

std::string cache_read(PrimFunc& func, const std::string& block_name, int read_index,
                       MemoryScope scope) {
  constexpr const char* kPrimitive = "cache_read";
  std::vector<Stmt> path = block_path(func, block_name, kPrimitive);
  const loop::Block& block = *path.back().as<loop::Block>();
  if (read_index < 0 || read_index >= static_cast<int>(block.reads.size())) {
    fail("{}: block {} has {} read regions; there is no read {}", kPrimitive, block_name,
         block.reads.size(), read_index);
  }
  const loop::Buffer buffer = block.reads[static_cast<size_t>(read_index)].buffer;
  if (block_buffer_use(block).writes_buffer(buffer.get())) {
    fail("{}: block {} writes {} as well as reading it; cache_write it instead", kPrimitive,
         block_name, buffer->name);
  }
  size_t anchor = 0;
  while (anchor + 1 < path.size() && !path[anchor].as<loop::For>()) ++anchor;
  for (const loop::Block* other : collect_blocks(path[anchor])) {
    if (other != &block && block_buffer_use(*other).writes_buffer(buffer.get())) {
      fail("{}: block {} writes {} inside the loops of block {}; a copy taken before them "
           "would be stale", kPrimitive, other->name, buffer->name, block_name);
    }
  }

  std::string name = unique_buffer_name(func, fmt::format("{}_{}", buffer->name,
                                                          loop::memory_scope_name(scope)));
  loop::Buffer cache = loop::BufferNode::make(name, buffer->dtype, buffer->shape, scope);
  std::string copy_name = unique_block_name(func, name);
  Stmt nest = copy_nest(copy_name, buffer, cache, buffer->shape);

  Stmt new_block = replace_buffer(path.back(), buffer, cache);
  Stmt body = replace_stmt(func.body, path.back(), new_block);
  std::vector<Stmt> new_path = path_to_block(body, block_name);
  new_path.resize(anchor + 1);
  body = insert_beside(body, new_path, nest, /*after=*/false);
  commit_body(func, loop::Allocate::make(cache, body), kPrimitive);
  return copy_name;
}

}  // namespace minic::schedule
