// storage_align: pad the stride of one dimension of an allocated buffer.
//
// Course module 4. A shared-memory tile of 32 x 32 floats has a row stride of 32 words:
// the threads of a warp reading one column all hit the same bank and wait for each
// other. A row stride of 33 spreads them over every bank. On a CPU the same padding keeps
// the rows of a tile out of one cache set.
//
//   Before                                      After storage_align(f, "S", 0, 0, 32, 1)
//   alloc S: f32[32,32] shared {                alloc S: f32[32,32] strides[33,1] shared {
//     ... block S(...) { S[v0, v1] = ... }        ... block S(...) { S[v0, v1] = ... }
//
// The strides are computed from the innermost dimension out: each stride is at least the
// size of what it steps over (stride[d + 1] * shape[d + 1]) plus the padding the buffer
// already had there; the stride of `axis` is then rounded up to the next value with
// stride % factor == offset.
//
// Preconditions (each failure names the block, the buffer and the reason):
//   - `write_index` names one of the block's write regions; its buffer is allocated inside
//     the function (an Allocate or a block's alloc_buffers), not a parameter, whose layout
//     is the caller's;
//   - 0 <= axis < rank, factor > 0, 0 <= offset < factor.
//
// Algorithm:
//   1. check the preconditions;
//   2. compute the new strides;
//   3. make a new Buffer node with them and replace the old one everywhere (allocation,
//      loads, stores, regions).
//
// Chapter: docs/module4-schedules.md#2-the-primitives
#include "minic/schedule/primitives.h"

#include "block_edit.h"
#include "loop_tree.h"

#include "minic/support/error.h"

namespace minic::schedule {

void storage_align(PrimFunc& func, const std::string& block_name, int write_index, int axis,
                   int64_t factor, int64_t offset) {
  constexpr const char* kPrimitive = "storage_align";
  const loop::Block& block = get_block(func, block_name);
  if (write_index < 0 || write_index >= static_cast<int>(block.writes.size())) {
    fail("{}: block {} has {} write regions; there is no write {}", kPrimitive, block_name,
         block.writes.size(), write_index);
  }
  const loop::Buffer buffer = block.writes[static_cast<size_t>(write_index)].buffer;
  if (is_param(func, buffer.get())) {
    fail("{}: {} is a parameter of @{}; only buffers allocated in the function can be padded",
         kPrimitive, buffer->name, func.name);
  }
  if (axis < 0 || axis >= buffer->rank()) {
    fail("{}: {} has {} dimensions; there is no axis {}", kPrimitive, buffer->name,
         buffer->rank(), axis);
  }
  if (factor <= 0 || offset < 0 || offset >= factor) {
    fail("{}: factor {} and offset {} do not satisfy factor > 0 and 0 <= offset < factor",
         kPrimitive, factor, offset);
  }

  std::vector<int64_t> strides = buffer->strides;
  for (int d = static_cast<int>(buffer->rank()) - 1; d >= 0; --d) {
    size_t dim = static_cast<size_t>(d);
    int64_t dense = 1;
    int64_t padding = std::max<int64_t>(buffer->strides[dim] - 1, 0);
    if (dim + 1 < strides.size()) {
      dense = strides[dim + 1] * buffer->shape[dim + 1];
      padding = std::max<int64_t>(
          buffer->strides[dim] - buffer->strides[dim + 1] * buffer->shape[dim + 1], 0);
    }
    strides[dim] = dense + padding;
    if (d == axis) {
      int64_t remainder = ((strides[dim] - offset) % factor + factor) % factor;
      if (remainder != 0) strides[dim] += factor - remainder;
    }
  }
  loop::Buffer aligned = loop::BufferNode::make_strided(buffer->name, buffer->dtype,
                                                        buffer->shape, strides, buffer->scope);
  Stmt body = replace_buffer(func.body, buffer, aligned);
  if (!buffer_use(body).touches(aligned.get())) {
    fail("{}: {} is not used in @{}", kPrimitive, buffer->name, func.name);
  }
  commit_body(func, body, kPrimitive);
}

}  // namespace minic::schedule
