// Unit tests for the loop IR interpreter on GPU-style code: thread blocks, shared memory,
// barriers (also inside loops and branches) and the data-race check. Course module 3.
#include "loop_test_util.h"
#include "minic/ir/loop/interpreter.h"

#include <catch2/catch.hpp>

using namespace minic;
using namespace minic::loop;
using namespace minic::loop::test;

namespace {

// Two thread blocks of 16 threads each reverse their 16 elements through shared memory:
//   for bx in blockIdx.x 0..2 { allocate S: shared f32[16] {
//     for tx in threadIdx.x 0..16 { S[tx] = A[bx*16 + tx]; barrier; B[bx*16 + tx] = S[15 - tx] }
//   } }
PrimFunc reverse_blocks(bool with_barrier) {
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
PrimFunc tiled_gemm(bool first_barrier, bool second_barrier) {
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

}  // namespace

TEST_CASE("threads reverse through shared memory across a barrier", "[loop_interp][gpu]") {
  Tensor a(DType::f32, {32}), b(DType::f32, {32});
  for (int n = 0; n < 32; ++n) a.values<float>()[n] = static_cast<float>(n);
  run_func(reverse_blocks(true), {&a, &b});
  for (int n = 0; n < 32; ++n) {
    int block = n / 16, lane = n % 16;
    REQUIRE(b.values<float>()[n] == static_cast<float>(block * 16 + 15 - lane));
  }
  // Without the barrier, thread 0 would read S[15] before thread 15 writes it.
  REQUIRE_THROWS_WITH(run_func(reverse_blocks(false), {&a, &b}),
                      Catch::Contains("data race on shared buffer S") &&
                          Catch::Contains("a barrier is missing"));
}

TEST_CASE("a shared-memory tiled GEMM with barriers in its k-tile loop", "[loop_interp][gpu]") {
  std::mt19937 rng(42);
  Tensor a = small_int_tensor({16, 16}, rng), b = small_int_tensor({16, 16}, rng);
  Tensor c(DType::f32, {16, 16});
  run_func(tiled_gemm(true, true), {&a, &b, &c});
  auto A = a.values<float>(), B = b.values<float>();
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 16; ++j) {
      float sum = 0.0f;
      for (int k = 0; k < 16; ++k) sum += A[i * 16 + k] * B[k * 16 + j];
      REQUIRE(c.values<float>()[i * 16 + j] == sum);
    }
  }
  // Either barrier missing: a thread reads a tile another thread is still writing, or
  // overwrites a tile another thread is still reading.
  REQUIRE_THROWS_WITH(run_func(tiled_gemm(false, true), {&a, &b, &c}),
                      Catch::Contains("data race on shared buffer"));
  REQUIRE_THROWS_WITH(run_func(tiled_gemm(true, false), {&a, &b, &c}),
                      Catch::Contains("data race on shared buffer"));
}

TEST_CASE("a threadIdx loop inside a loop on the same axis is the same thread",
          "[loop_interp][gpu]") {
  // for tx in threadIdx.x 0..8 { for ko in 0..2 {
  //   for t2 in threadIdx.x 0..8 { S[t2] = A[ko * 8 + t2] }   (a cooperative fetch)
  //   barrier; B[ko * 8 + tx] = S[7 - tx]; barrier } }
  Buffer A = BufferNode::make("A", DType::f32, {16});
  Buffer B = BufferNode::make("B", DType::f32, {16});
  Buffer S = BufferNode::make("S", DType::f32, {8}, MemoryScope::shared);
  Expr tx = Var::make("tx"), t2 = Var::make("t2"), ko = Var::make("ko");
  Stmt fetch = bind(t2, 8, "threadIdx.x", Store::make(S, {t2}, Load::make(A, {ko * 8 + t2})));
  Stmt use = Store::make(B, {ko * 8 + tx}, Load::make(S, {i64(7) - tx}));
  Stmt body = for_loop(ko, 2, Seq::make({fetch, barrier(), use, barrier()}));
  PrimFunc func{"fetch", {A, B}, Allocate::make(S, bind(tx, 8, "threadIdx.x", body))};
  Tensor a(DType::f32, {16}), b(DType::f32, {16});
  for (int n = 0; n < 16; ++n) a.values<float>()[n] = static_cast<float>(n);
  run_func(func, {&a, &b});
  for (int n = 0; n < 16; ++n) {
    REQUIRE(b.values<float>()[n] == static_cast<float>(n / 8 * 8 + 7 - n % 8));
  }
}

TEST_CASE("a barrier inside a branch some threads skip", "[loop_interp][gpu]") {
  // for tx in threadIdx.x 0..16 { if tx < 8 { S[tx] = A[tx]; barrier; B[tx] = S[7 - tx] } }
  // Threads 8..15 end at once; threads 0..7 meet at the barrier.
  Buffer A = BufferNode::make("A", DType::f32, {8});
  Buffer B = BufferNode::make("B", DType::f32, {8});
  Buffer S = BufferNode::make("S", DType::f32, {8}, MemoryScope::shared);
  Expr tx = Var::make("tx");
  Stmt body = Seq::make({Store::make(S, {tx}, Load::make(A, {tx})), barrier(),
                         Store::make(B, {tx}, Load::make(S, {i64(7) - tx}))});
  Stmt branch = IfThenElse::make(LT::make(tx, i64(8)), body);
  // S is allocated inside the thread loop: one S for the whole block.
  PrimFunc func{"half_reverse", {A, B}, bind(tx, 16, "threadIdx.x", Allocate::make(S, branch))};
  Tensor a(DType::f32, {8}), b(DType::f32, {8});
  for (int n = 0; n < 8; ++n) a.values<float>()[n] = static_cast<float>(n * 10);
  run_func(func, {&a, &b});
  for (int n = 0; n < 8; ++n) REQUIRE(b.values<float>()[n] == static_cast<float>((7 - n) * 10));

  // Threads waiting at two different barriers diverge: an error.
  Stmt split = IfThenElse::make(LT::make(tx, i64(8)), barrier(), barrier());
  PrimFunc diverge{"diverge", {A, B}, bind(tx, 16, "threadIdx.x", split)};
  REQUIRE_THROWS_WITH(run_func(diverge, {&a, &b}), Catch::Contains("two different barriers"));
}

TEST_CASE("local buffers belong to each thread; a thread loop shorter than the block",
          "[loop_interp][gpu]") {
  // for tx in threadIdx.x 0..8 { allocate L: local f32[1] { L[0] = A[tx] * 2; barrier;
  //   B[tx] = L[0] } }  then  for t2 in threadIdx.x 0..4 { B[t2] = B[t2] + 1 }
  Buffer A = BufferNode::make("A", DType::f32, {8});
  Buffer B = BufferNode::make("B", DType::f32, {8});
  Buffer L = BufferNode::make("L", DType::f32, {1}, MemoryScope::local);
  Expr tx = Var::make("tx"), t2 = Var::make("t2");
  Stmt body = Allocate::make(L, Seq::make({Store::make(L, {i64(0)}, Load::make(A, {tx}) * f32(2.0)),
                                           barrier(),
                                           Store::make(B, {tx}, Load::make(L, {i64(0)}))}));
  Stmt first = bind(tx, 8, "threadIdx.x", body);
  Stmt second = bind(t2, 4, "threadIdx.x", Store::make(B, {t2}, Load::make(B, {t2}) + f32(1.0)));
  PrimFunc func{"local", {A, B}, Seq::make({first, second})};
  Tensor a(DType::f32, {8}), b(DType::f32, {8});
  for (int n = 0; n < 8; ++n) a.values<float>()[n] = static_cast<float>(n);
  run_func(func, {&a, &b});
  for (int n = 0; n < 8; ++n) {
    REQUIRE(b.values<float>()[n] == static_cast<float>(n * 2 + (n < 4 ? 1 : 0)));
  }
}

TEST_CASE("threads writing the same value to one element is no race", "[loop_interp][gpu]") {
  // Every thread writes S[0] = 5, then after a barrier reads it; and every thread writes
  // B[tx] = S[0] + tx. Writes of equal values do not race; different values do.
  Buffer B = BufferNode::make("B", DType::f32, {4});
  Buffer S = BufferNode::make("S", DType::f32, {1}, MemoryScope::shared);
  Expr tx = Var::make("tx");
  auto make = [&](Expr value) {
    Stmt body = Seq::make({Store::make(S, {i64(0)}, value), barrier(),
                           Store::make(B, {tx}, Load::make(S, {i64(0)}) +
                                                    Cast::make(DataType::f32(), tx))});
    return PrimFunc{"broadcast", {B}, bind(tx, 4, "threadIdx.x", Allocate::make(S, body))};
  };
  Tensor b(DType::f32, {4});
  run_func(make(f32(5.0)), {&b});
  REQUIRE(b.values<float>()[3] == 8.0f);
  REQUIRE_THROWS_WITH(run_func(make(Cast::make(DataType::f32(), tx)), {&b}),
                      Catch::Contains("both write it, different values"));
}
