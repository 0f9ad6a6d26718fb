// GPU-style test kernels, written out as a CUDA programmer would: shared-memory stages
// with their barriers, or without them (for the race check and the insert-barriers pass).
// Course modules 3 and 6.
#pragma once

#include "loop_test_util.h"

namespace minic::loop::test {

// Two thread blocks of 16 threads each reverse their 16 elements through shared memory:
//   for bx in blockIdx.x 0..2 { allocate S: shared f32[16] {
//     for tx in threadIdx.x 0..16 { S[tx] = A[bx*16 + tx]; barrier; B[bx*16 + tx] = S[15 - tx] }
//   } }
inline PrimFunc reverse_blocks(bool with_barrier) {
  Buffer A = BufferNode::make("A", DType::f32, {32});
  Buffer B = BufferNode::make("B", DType::f32, {32});
  Buffer S = BufferNode::make("S", DType::f32, {16}, MemoryScope::shared);
  Expr bx = Var::make("bx"), tx = Var::make("tx");
  Expr global = bx * 16 + tx;
  std::vector<Stmt> body = {Store::make(S, {tx}, Load::make(A, {global})),
                            Store::make(B, {global}, Load::make(S, {i64(15) - tx}))};
  if (with_barrier) body.insert(body.begin() + 1, barrier());
  Stmt threads = bind(tx, 16, "threadIdx.x", Seq::make(body));
  return {"reverse", {A, B}, bind(bx, 2, "blockIdx.x", Allocate::make(S, threads))};
}

// C = A x B for 16 x 16 matrices, tiled as a CUDA programmer would: 2 x 2 thread blocks
// of 4 x 4 threads, each thread computing 2 x 2 outputs in a local accumulator; the k
// dimension in 4 tiles of 4, each tile of A and B loaded into shared memory by all the
// threads together, between two barriers inside the k-tile loop.
inline PrimFunc tiled_gemm(bool first_barrier, bool second_barrier) {
  Buffer A = BufferNode::make("A", DType::f32, {16, 16});
  Buffer B = BufferNode::make("B", DType::f32, {16, 16});
  Buffer C = BufferNode::make("C", DType::f32, {16, 16});
  Buffer As = BufferNode::make("As", DType::f32, {8, 4}, MemoryScope::shared);
  Buffer Bs = BufferNode::make("Bs", DType::f32, {4, 8}, MemoryScope::shared);
  Buffer acc = BufferNode::make("acc", DType::f32, {2, 2}, MemoryScope::local);
  Expr by = Var::make("by"), bx = Var::make("bx"), ty = Var::make("ty"), tx = Var::make("tx");
  Expr ko = Var::make("ko"), ki = Var::make("ki"), ii = Var::make("ii"), jj = Var::make("jj");
  Expr r = Var::make("r"), s = Var::make("s");
  // Each of the 16 threads loads 2 of the 32 elements of each tile: element e = t * 2 + r.
  Expr e = (ty * 4 + tx) * 2 + r;
  Expr e2 = (ty * 4 + tx) * 2 + s;
  Stmt load_a = Store::make(As, {FloorDiv::make(e, i64(4)), FloorMod::make(e, i64(4))},
                            Load::make(A, {by * 8 + FloorDiv::make(e, i64(4)),
                                           ko * 4 + FloorMod::make(e, i64(4))}));
  Stmt load_b = Store::make(Bs, {FloorDiv::make(e2, i64(8)), FloorMod::make(e2, i64(8))},
                            Load::make(B, {ko * 4 + FloorDiv::make(e2, i64(8)),
                                           bx * 8 + FloorMod::make(e2, i64(8))}));
  Expr product = Load::make(As, {ty * 2 + ii, ki}) * Load::make(Bs, {ki, tx * 2 + jj});
  Stmt update = Store::make(acc, {ii, jj}, Load::make(acc, {ii, jj}) + product);
  std::vector<Stmt> tile = {for_loop(r, 2, load_a), for_loop(s, 2, load_b)};
  if (first_barrier) tile.push_back(barrier());
  tile.push_back(for_loop(ki, 4, for_loop(ii, 2, for_loop(jj, 2, update))));
  if (second_barrier) tile.push_back(barrier());
  Expr zi = Var::make("zi"), zj = Var::make("zj"), wi = Var::make("wi"), wj = Var::make("wj");
  Stmt zero = for_loop(zi, 2, for_loop(zj, 2, Store::make(acc, {zi, zj}, f32(0.0))));
  Stmt write_c = Store::make(C, {by * 8 + ty * 2 + wi, bx * 8 + tx * 2 + wj},
                             Load::make(acc, {wi, wj}));
  Stmt write = for_loop(wi, 2, for_loop(wj, 2, write_c));
  Stmt thread = Allocate::make(acc, Seq::make({zero, for_loop(ko, 4, Seq::make(tile)), write}));
  Stmt threads = bind(ty, 4, "threadIdx.y", bind(tx, 4, "threadIdx.x", thread));
  Stmt blocks = bind(by, 2, "blockIdx.y",
                     bind(bx, 2, "blockIdx.x", Allocate::make(As, Allocate::make(Bs, threads))));
  return {"tiled_gemm", {A, B, C}, blocks};
}


}  // namespace minic::loop::test
