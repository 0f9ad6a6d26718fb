// Tests of the schedule primitives that make caches and move blocks: cache_read,
// cache_write, compute_at, reverse_compute_at. Course module 4. Before/Expected pairs,
// an error test for each precondition, and differential tests against the loop
// interpreter (see schedule_blocks_test.cpp).
#include "schedule_blocks_util.h"
#include "schedule_kernels.h"

namespace minic::schedule {
namespace {

using Catch::Matchers::Contains;
using loop::PrimFunc;
using test::error_of;
using test::expected;
using test::loop_of;
using test::parse_func;
using test::require_same_outputs;
namespace kernels = test;

}  // namespace

// --- cache_write and reverse_compute_at ---------------------------------------------------------

TEST_CASE("cache_write accumulates a matmul in a local buffer and copies it out",
          "[schedule_blocks]") {
  PrimFunc before = parse_func(kernels::kGemmKernel);
  PrimFunc func = before;
  CHECK(cache_write(func, "C", 0, loop::MemoryScope::local) == "C_local");
  CHECK(loop::print_func(func) ==
        expected(R"(func @gemm(A: f32[64,32], B: f32[32,48], C: f32[64,48]) {
  alloc C_local: f32[64,48] local {
    for i in 0..64 {
      for j in 0..48 {
        for k in 0..32 {
          block C(vi = spatial(64) i, vj = spatial(48) j, vk = reduce(32) k) {
            reads(A[vi, vk], B[vk, vj], C_local[vi, vj]) writes(C_local[vi, vj])
            init { C_local[vi, vj] = 0.0 }
            C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
          }
        }
      }
    }
    for ax0 in 0..64 {
      for ax1 in 0..48 {
        block C_local(v0 = spatial(64) ax0, v1 = spatial(48) ax1) {
          reads(C_local[v0, v1]) writes(C[v0, v1])
          C[v0, v1] = C_local[v0, v1]
        }
      }
    }
  }
})"));
  require_same_outputs(before, func);
}

TEST_CASE("reverse_compute_at moves the copy-out of a cached matmul under its tile loop",
          "[schedule_blocks]") {
  PrimFunc before = parse_func(kernels::kTiledGemmKernel);
  PrimFunc func = before;
  std::string copy = cache_write(func, "C", 0, loop::MemoryScope::local);
  reverse_compute_at(func, copy, loop_of(func, "C", 1));
  CHECK(loop::print_func(func) ==
        expected(R"(func @tiled(A: f32[32,16], B: f32[16,24], C: f32[32,24]) {
  alloc C_local: f32[32,24] local {
    for i.0 in 0..4 {
      for j.0 in 0..3 {
        for k.0 in 0..4 {
          for i.1 in 0..8 {
            for j.1 in 0..8 {
              for k.1 in 0..4 {
                block C(vi = spatial(32) i.0 * 8 + i.1, vj = spatial(24) j.0 * 8 + j.1, vk = reduce(16) k.0 * 4 + k.1) {
                  reads(A[vi, vk], B[vk, vj], C_local[vi, vj]) writes(C_local[vi, vj])
                  init { C_local[vi, vj] = 0.0 }
                  C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
                }
              }
            }
          }
        }
        for ax0 in 0..8 {
          for ax1 in 0..8 {
            block C_local(v0 = spatial(32) i.0 * 8 + ax0, v1 = spatial(24) j.0 * 8 + ax1) {
              reads(C_local[v0, v1]) writes(C[v0, v1])
              C[v0, v1] = C_local[v0, v1]
            }
          }
        }
      }
    }
  }
})"));
  require_same_outputs(before, func);
}

TEST_CASE("reverse_compute_at under the outer tile loop, in and inside the reduction loops",
          "[schedule_blocks]") {
  PrimFunc before = parse_func(kernels::kTiledGemmKernel);
  // Under k.0 the copy runs after every step of the reduction; the last copy of each
  // element is the final one. Under k.1 each iteration writes one element: no loops left.
  for (auto [depth, loops] : std::vector<std::pair<size_t, size_t>>{{0, 3}, {2, 5}, {5, 6}}) {
    INFO("under loop " << depth);
    PrimFunc func = before;
    std::string copy = cache_write(func, "C", 0, loop::MemoryScope::local);
    reverse_compute_at(func, copy, loop_of(func, "C", depth));
    CHECK(get_loops(func, copy).size() == loops);
    require_same_outputs(before, func);
  }
}

TEST_CASE("cache_write refuses what would change the result", "[schedule_blocks]") {
  PrimFunc gemm = parse_func(kernels::kGemmKernel);
  CHECK_THAT(error_of(gemm, [](PrimFunc& f) { cache_write(f, "C", 1, loop::MemoryScope::local); }),
             Contains("cache_write: block C has 1 write regions; there is no write 1"));
  PrimFunc accumulate = parse_func(R"(func @f(A: f32[4], C: f32[4]) {
  for i in 0..4 {
    block C(v = spatial(4) i) {
      reads(C[v], A[v]) writes(C[v])
      C[v] = C[v] + A[v]
    }
  }
})");
  CHECK_THAT(error_of(accumulate,
                      [](PrimFunc& f) { cache_write(f, "C", 0, loop::MemoryScope::local); }),
             Contains("cache_write: block C reads C without an init"));
  PrimFunc shared_loop = parse_func(R"(func @f(A: f32[4], C: f32[4], D: f32[4]) {
  for i in 0..4 {
    block C(v = spatial(4) i) {
      reads(A[v]) writes(C[v])
      C[v] = A[v]
    }
    block D(v = spatial(4) i) {
      reads(C[v]) writes(D[v])
      D[v] = C[v]
    }
  }
})");
  CHECK_THAT(error_of(shared_loop,
                      [](PrimFunc& f) { cache_write(f, "C", 0, loop::MemoryScope::local); }),
             Contains("cache_write: block D also uses C inside the loops of block C"));
  PrimFunc scattered = parse_func(R"(func @f(A: f32[8], C: f32[8]) {
  for i in 0..4 {
    block C(v = spatial(4) i) {
      reads(A[v]) writes(C[v * 2])
      C[v * 2] = A[v]
    }
  }
})");
  CHECK_THAT(error_of(scattered,
                      [](PrimFunc& f) { cache_write(f, "C", 0, loop::MemoryScope::local); }),
             Contains("not distinct spatial iteration variables"));
}

TEST_CASE("reverse_compute_at refuses what would change the result", "[schedule_blocks]") {
  PrimFunc tiled = parse_func(kernels::kTiledGemmKernel);
  std::string copy = cache_write(tiled, "C", 0, loop::MemoryScope::local);
  CHECK_THAT(error_of(tiled, [&](PrimFunc& f) { reverse_compute_at(f, "C", loop_of(f, copy, 0)); }),
             Contains("reverse_compute_at: loop ax0 comes after block C; use compute_at"));
  PrimFunc partial = parse_func(R"(func @f(A: f32[8], C: f32[8]) {
  alloc B: f32[8] {
    for i in 0..8 {
      block Q(v = spatial(8) i) {
        B[v] = A[v]
      }
    }
    for i in 0..4 {
      block P(v = spatial(4) i) {
        B[v] = A[v] * 2.0
      }
    }
    for i in 0..8 {
      block C(v = spatial(8) i) {
        C[v] = B[v]
      }
    }
  }
})");
  CHECK_THAT(error_of(partial,
                      [&](PrimFunc& f) { reverse_compute_at(f, "C", loop_of(f, "P", 0)); }),
             Contains("reverse_compute_at: cannot prove that the regions of B written in the "
                      "iterations of loop i cover every iteration of block C"));
  PrimFunc row_sum = parse_func(R"(func @f(A: f32[4,4], S: f32[4], T: f32[4]) {
  for i in 0..4 {
    block S(v = spatial(4) i) {
      reads(A[v, 0]) writes(S[v])
      S[v] = A[v, 0]
    }
  }
  for i in 0..4 {
    for k in 0..4 {
      block T(v = spatial(4) i, r = reduce(4) k) {
        reads(S[v], A[v, r], T[v]) writes(T[v])
        init { T[v] = 0.0 }
        T[v] = T[v] + S[v] * A[v, r]
      }
    }
  }
})");
  // A reduction that reads its output only at the element it writes moves: each element
  // is reduced again, whole, from its init.
  PrimFunc moved = row_sum;
  reverse_compute_at(moved, "T", loop_of(moved, "S", 0));
  require_same_outputs(row_sum, moved);
  CHECK_THAT(loop::print_func(moved), Contains("for ax0 in 0..4 {"));
  PrimFunc in_place = parse_func(R"(func @f(A: f32[4], S: f32[4]) {
  alloc B: f32[4] {
    for i in 0..4 {
      block B(v = spatial(4) i) {
        B[v] = A[v]
      }
    }
    for i in 0..4 {
      block S(v = spatial(4) i) {
        S[v] = S[v] + B[v]
      }
    }
  }
})");
  CHECK_THAT(error_of(in_place,
                      [&](PrimFunc& f) { reverse_compute_at(f, "S", loop_of(f, "B", 0)); }),
             Contains("reverse_compute_at: block S reads S, the buffer it writes"));
  CHECK_THAT(error_of(in_place,
                      [&](PrimFunc& f) { reverse_compute_at(f, "B", loop_of(f, "B", 0)); }),
             Contains("reverse_compute_at: block B is already under loop i"));
}

// --- cache_read and compute_at -----------------------------------------------------------------

TEST_CASE("cache_read stages A and B in shared memory; compute_at copies one tile at a time",
          "[schedule_blocks]") {
  PrimFunc before = parse_func(kernels::kTiledGemmKernel);
  PrimFunc func = before;
  CHECK(cache_read(func, "C", 0, loop::MemoryScope::shared) == "A_shared");
  CHECK(cache_read(func, "C", 1, loop::MemoryScope::shared) == "B_shared");
  require_same_outputs(before, func);
  Expr k_outer = loop_of(func, "C", 2);
  compute_at(func, "A_shared", k_outer);
  compute_at(func, "B_shared", k_outer);
  CHECK(loop::print_func(func) ==
        expected(R"(func @tiled(A: f32[32,16], B: f32[16,24], C: f32[32,24]) {
  alloc B_shared: f32[16,24] shared {
    alloc A_shared: f32[32,16] shared {
      for i.0 in 0..4 {
        for j.0 in 0..3 {
          for k.0 in 0..4 {
            for ax0 in 0..4 {
              for ax1 in 0..8 {
                block B_shared(v0 = spatial(16) k.0 * 4 + ax0, v1 = spatial(24) j.0 * 8 + ax1) {
                  reads(B[v0, v1]) writes(B_shared[v0, v1])
                  B_shared[v0, v1] = B[v0, v1]
                }
              }
            }
            for ax0 in 0..8 {
              for ax1 in 0..4 {
                block A_shared(v0 = spatial(32) i.0 * 8 + ax0, v1 = spatial(16) k.0 * 4 + ax1) {
                  reads(A[v0, v1]) writes(A_shared[v0, v1])
                  A_shared[v0, v1] = A[v0, v1]
                }
              }
            }
            for i.1 in 0..8 {
              for j.1 in 0..8 {
                for k.1 in 0..4 {
                  block C(vi = spatial(32) i.0 * 8 + i.1, vj = spatial(24) j.0 * 8 + j.1, vk = reduce(16) k.0 * 4 + k.1) {
                    reads(A_shared[vi, vk], B_shared[vk, vj], C[vi, vj]) writes(C[vi, vj])
                    init { C[vi, vj] = 0.0 }
                    C[vi, vj] = C[vi, vj] + A_shared[vi, vk] * B_shared[vk, vj]
                  }
                }
              }
            }
          }
        }
      }
    }
  }
})"));
  require_same_outputs(before, func);
}

TEST_CASE("compute_at guards a region that runs past the producer's domain",
          "[schedule_blocks]") {
  PrimFunc before = parse_func(kernels::kStencilKernel);
  PrimFunc func = before;
  compute_at(func, "B", loop_of(func, "C", 0));
  CHECK(loop::print_func(func) ==
        expected(R"(func @stencil(A: f32[64], C: f32[63]) {
  alloc B: f32[64] {
    for i.0 in 0..8 {
      for ax0 in 0..9 {
        block B(v = spatial(64) i.0 * 8 + ax0) where (i.0 * 8 + ax0 < 64) {
          reads(A[v]) writes(B[v])
          B[v] = A[v] * 2.0
        }
      }
      for i.1 in 0..8 {
        block C(v = spatial(63) i.0 * 8 + i.1) where (i.0 * 8 + i.1 < 63) {
          reads(B[v:+2]) writes(C[v])
          C[v] = B[v] + B[v + 1]
        }
      }
    }
  }
})"));
  require_same_outputs(before, func);
  // One level further in: two elements per iteration, no loop needed for a single one.
  PrimFunc inner = before;
  compute_at(inner, "B", loop_of(inner, "C", 1));
  CHECK(get_loops(inner, "B").size() == 3);
  require_same_outputs(before, inner);
}

TEST_CASE("compute_at moves a reduction producer whole under its consumer's loop",
          "[schedule_blocks]") {
  PrimFunc before = parse_func(kernels::kMatmulReluKernel);
  PrimFunc func = before;
  compute_at(func, "T", loop_of(func, "Y", 0));
  std::vector<Expr> loops = get_loops(func, "T");
  REQUIRE(loops.size() == 3);
  CHECK(loop::print_stmt(func.body).find("block T(vi = spatial(8) i, vj = spatial(8) ax0, "
                                         "vk = reduce(4) ax1)") != std::string::npos);
  require_same_outputs(before, func);
}

TEST_CASE("compute_at moves an epilogue under the loop of its cache's copy-out",
          "[schedule_blocks]") {
  PrimFunc before = parse_func(kernels::kMatmulReluKernel);
  PrimFunc func = before;
  std::string copy = cache_write(func, "Y", 0, loop::MemoryScope::local);
  compute_at(func, "Y", loop_of(func, copy, 0));
  CHECK(get_loops(func, "Y").size() == 2);
  require_same_outputs(before, func);
}

TEST_CASE("cache_read refuses what would change the result", "[schedule_blocks]") {
  PrimFunc gemm = parse_func(kernels::kGemmKernel);
  CHECK_THAT(error_of(gemm, [](PrimFunc& f) { cache_read(f, "C", 3, loop::MemoryScope::shared); }),
             Contains("cache_read: block C has 3 read regions; there is no read 3"));
  CHECK_THAT(error_of(gemm, [](PrimFunc& f) { cache_read(f, "C", 2, loop::MemoryScope::shared); }),
             Contains("cache_read: block C writes C as well as reading it"));
  PrimFunc writer_inside = parse_func(R"(func @f(A: f32[4], C: f32[4]) {
  for i in 0..4 {
    block W(v = spatial(4) i) {
      writes(A[v])
      A[v] = 1.0
    }
    block C(v = spatial(4) i) {
      reads(A[v]) writes(C[v])
      C[v] = A[v]
    }
  }
})");
  CHECK_THAT(error_of(writer_inside,
                      [](PrimFunc& f) { cache_read(f, "C", 0, loop::MemoryScope::shared); }),
             Contains("cache_read: block W writes A inside the loops of block C"));
}

TEST_CASE("compute_at refuses a loop it cannot move the producer under", "[schedule_blocks]") {
  PrimFunc stencil = parse_func(kernels::kStencilKernel);
  CHECK_THAT(error_of(stencil, [](PrimFunc& f) { compute_at(f, "C", loop_of(f, "B", 0)); }),
             Contains("compute_at: loop i comes before block C; use reverse_compute_at"));
  CHECK_THAT(error_of(stencil, [](PrimFunc& f) { compute_at(f, "B", loop_of(f, "B", 0)); }),
             Contains("compute_at: block B is already under loop i"));
  PrimFunc nested = parse_func(R"(func @f(A: f32[4,4], C: f32[4,4], D: f32[4,4]) {
  alloc B: f32[4,4] {
    for i in 0..4 {
      for j in 0..4 {
        block B(vi = spatial(4) i, vj = spatial(4) j) {
          B[vi, vj] = A[vi, vj]
        }
      }
      for j in 0..4 {
        block X(vi = spatial(4) i, vj = spatial(4) j) {
          D[vi, vj] = A[vi, vj]
        }
      }
    }
    for i in 0..4 {
      for j in 0..4 {
        block C(vi = spatial(4) i, vj = spatial(4) j) {
          C[vi, vj] = B[vi, vj]
        }
      }
    }
  }
})");
  CHECK_THAT(error_of(nested, [](PrimFunc& f) { compute_at(f, "B", loop_of(f, "C", 0)); }),
             Contains("compute_at: the loops of block B and loop i are not siblings"));
  PrimFunc chain = parse_func(kernels::kElementwiseKernel);
  CHECK_THAT(error_of(chain, [](PrimFunc& f) { compute_at(f, "nothing", loop_of(f, "sub", 0)); }),
             Contains("compute_at: @chain has no block named 'nothing'"));
}

TEST_CASE("compute_at refuses a producer that others read, an output, or one whose input changes",
          "[schedule_blocks]") {
  PrimFunc outside = parse_func(R"(func @f(A: f32[4], C: f32[4], D: f32[4]) {
  alloc B: f32[4] {
    for i in 0..4 {
      block B(v = spatial(4) i) {
        B[v] = A[v]
      }
    }
    for i in 0..4 {
      block C(v = spatial(4) i) {
        C[v] = B[v]
      }
    }
    for i in 0..4 {
      block D(v = spatial(4) i) {
        D[v] = B[v]
      }
    }
  }
})");
  CHECK_THAT(error_of(outside, [](PrimFunc& f) { compute_at(f, "B", loop_of(f, "C", 0)); }),
             Contains("compute_at: block D reads B outside loop i"));
  PrimFunc param_output = parse_func(R"(func @f(A: f32[4], B: f32[4], C: f32[4]) {
  for i in 0..4 {
    block B(v = spatial(4) i) {
      B[v] = A[v]
    }
  }
  for i in 0..4 {
    block C(v = spatial(4) i) {
      C[v] = B[v]
    }
  }
})");
  CHECK_THAT(error_of(param_output, [](PrimFunc& f) { compute_at(f, "B", loop_of(f, "C", 0)); }),
             Contains("compute_at: block B writes B, a parameter of @f"));
  PrimFunc input_written = parse_func(R"(func @f(A: f32[4], C: f32[4]) {
  alloc B: f32[4] {
    for i in 0..4 {
      block B(v = spatial(4) i) {
        B[v] = A[v]
      }
    }
    for i in 0..4 {
      block C(v = spatial(4) i) {
        C[v] = B[v]
      }
      block W(v = spatial(4) i) {
        A[v] = 0.0
      }
    }
  }
})");
  CHECK_THAT(error_of(input_written, [](PrimFunc& f) { compute_at(f, "B", loop_of(f, "C", 0)); }),
             Contains("compute_at: block W writes A, which block B reads"));
}

}  // namespace minic::schedule
