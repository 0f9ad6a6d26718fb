// Unit tests for the loop IR interpreter on GPU-style code: thread blocks, shared memory,
// barriers (also inside loops and branches) and the data-race check. Course module 3.
#include "gpu_test_kernels.h"
#include "loop_test_util.h"
#include "minic/ir/loop/interpreter.h"

#include <catch2/catch.hpp>

using namespace minic;
using namespace minic::loop;
using namespace minic::loop::test;

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
