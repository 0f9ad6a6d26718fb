// Prefetching the data of the next iteration of an outer loop (the next panel of a GEMM's
// weights, the next pass of a convolution's) into L2 while this one computes. Course
// module 6; the schedule rules that annotate the loops are module 4's
// (prefetch_next_panel in src/schedule/rules/block_roles.cpp, prefetch_next_pass in
// src/schedule/rules/cpu_conv.cpp).
//
// Inside a loop annotated prefetch_ahead = d, a vector load of one of the function's
// inputs (a parameter it never writes) is followed by prefetches, into L2 (prefetcht1):
//   - of its own lines d elements on, once per distinct load of the loop's body
//     (emit_prefetch): each step asks for the lines of the next region it will read;
//   - or, under a loop annotated prefetch_spread = s too (n iterations, the prefetch_ahead
//     loop's K steps inside each, counted across the loops nested in it), of a line or less
//     a step, so that the n * K steps fetch the region d elements on once between them,
//     evenly (emit_spread_prefetch): the body's distinct loads read s elements a step
//     from each region, and the one that starts a region prefetches it.
// The first form asks for a whole region in the first iteration of the loop around, as
// fast as that iteration reads its own data from cache: faster than memory delivers it
// (docs/module4-schedules.md, section 4, measures the two).
//
// Chapter: docs/module6-llvm-cpu.md#2-expressions-statements-intrinsics
#include "codegen.h"

#include "minic/ir/loop/analysis.h"

#include <algorithm>

namespace minic::codegen::llvm_backend {

using namespace minic::loop;

void CodeGen::emit_prefetches(const Load* node, llvm::Type* element, llvm::Value* pointer) {
  const int lanes = node->type.lanes;
  if (lanes == 1 || !inputs_.count(node->buffer.get()) || already_prefetched(node)) return;
  const int64_t element_bytes = dtype_size(node->buffer->dtype);
  prefetch_.done.push_back(node);
  if (!prefetch_.share.index || prefetch_.step.extent == 0) {
    emit_prefetch(element, element_bytes, pointer, lanes);
    return;
  }
  const bool starts_region = prefetch_.done_lanes % prefetch_.spread == 0;
  prefetch_.done_lanes += lanes;
  if (starts_region) emit_spread_prefetch(element, element_bytes, pointer);
}

bool CodeGen::already_prefetched(const Load* node) const {
  // An unrolled tile loads the same vector of B once per row; LLVM merges the loads, not
  // the prefetches, so each is emitted once per body.
  return std::any_of(prefetch_.done.begin(), prefetch_.done.end(), [&](const Load* other) {
    if (other->buffer.get() != node->buffer.get()) return false;
    for (size_t d = 0; d < node->indices.size(); ++d) {
      if (!same_expr(other->indices[d], node->indices[d])) return false;
    }
    return true;
  });
}

void CodeGen::emit_prefetch(llvm::Type* element, int64_t element_bytes, llvm::Value* pointer,
                            int lanes) {
  // One prefetch (into L2: locality 2, a read of data) per 64-byte line of the vector, the
  // lines prefetch_.ahead elements on. The address may lie past the buffer's end (the
  // last panel's next); a prefetch does not access memory, so no inbounds.
  const int64_t per_line = std::max<int64_t>(64 / element_bytes, 1);
  auto& B = builder_;
  for (int64_t first = 0; first < lanes; first += per_line) {
    llvm::Value* at = B.CreateGEP(element, pointer, i64(prefetch_.ahead + first));
    B.CreateIntrinsic(llvm::Intrinsic::prefetch, {at->getType()},
                      {at, B.getInt32(0), B.getInt32(2), B.getInt32(1)});
  }
}

void CodeGen::emit_spread_prefetch(llvm::Type* element, int64_t element_bytes,
                                   llvm::Value* pointer) {
  // The prefetch_ahead loop (K steps k, counted across the loops inside it, each reading
  // s = prefetch_.spread elements on from the last) reads a region of K * s elements from
  // `start`, the load's address less k * s;
  // the region prefetch_.ahead elements on has L = K * s * bytes / 64 lines. Iteration i of
  // the n of the prefetch_spread loop prefetches, at step k, line
  //   floor((i * K + k) * L / (n * K))
  // of it: the n * K steps of the spread loop's iterations prefetch the L lines once,
  // evenly spread (a line or less a step), where every iteration prefetching the whole
  // region would ask for it all in its first iteration, faster than memory delivers it.
  auto& B = builder_;
  const int64_t steps = prefetch_.step.extent;
  const int64_t share = prefetch_.share.extent;
  const int64_t per_line = std::max<int64_t>(64 / element_bytes, 1);
  const int64_t lines = std::max<int64_t>(steps * prefetch_.spread / per_line, 1);
  llvm::Value* k = prefetch_.step.index;
  llvm::Value* slot = B.CreateAdd(B.CreateMul(prefetch_.share.index, i64(steps)), k);
  llvm::Value* line = B.CreateUDiv(B.CreateMul(slot, i64(lines)), i64(share * steps));
  llvm::Value* offset = B.CreateAdd(
      B.CreateSub(i64(prefetch_.ahead), B.CreateMul(k, i64(prefetch_.spread))),
      B.CreateMul(line, i64(per_line)));
  llvm::Value* at = B.CreateGEP(element, pointer, offset);  // may lie past the end: no inbounds
  B.CreateIntrinsic(llvm::Intrinsic::prefetch, {at->getType()},
                    {at, B.getInt32(0), B.getInt32(2), B.getInt32(1)});
}

}  // namespace minic::codegen::llvm_backend
