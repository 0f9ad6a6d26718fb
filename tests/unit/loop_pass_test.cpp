// Unit tests for the loop passes that restructure loops and buffers: lower-blocks,
// flatten-buffers, partition-loops, unroll-loops. Each pass runs on the test kernels against
// the interpreter (same random inputs, identical outputs, the result verifies), with a
// golden text for a small case and the errors. simplify is loop_simplify_test.cpp; the
// cleanup passes and the pipeline loop_pass_cleanup_test.cpp. Course module 3.
#include "loop_pass_kernels.h"
#include "minic/passes/loop/flatten_buffers.h"
#include "minic/passes/loop/partition_loops.h"
#include "minic/passes/loop/unroll_loops.h"

#include <catch2/catch.hpp>

using namespace minic;
using namespace minic::loop;
using namespace minic::loop::test;

TEST_CASE("lower-blocks: blocks become loops, ifs and allocations", "[loop_pass]") {
  SECTION("a reduction's init runs under `if (reduction bindings == 0)`") {
    PrimFunc func = parse_func(kMatmul);
    PrimFunc result = lower_blocks(func);
    CHECK(print_stmt(result.body) ==
          "for i in 0..6 {\n"
          "  for j in 0..7 {\n"
          "    for k in 0..5 {\n"
          "      if (k == 0) {\n"
          "        C[i, j] = 0.0\n"
          "      }\n"
          "      C[i, j] = C[i, j] + A[i, k] * B[k, j]\n"
          "    }\n"
          "  }\n"
          "}\n");
    require_same_results(func, result);
  }
  SECTION("a predicate becomes an if, alloc_buffers become Allocates") {
    PrimFunc tail = lower_blocks(parse_func(kGuardedTail));
    CHECK(print_stmt(tail.body) ==
          "for io in 0..4 {\n"
          "  for ii in 0..32 {\n"
          "    if (io * 32 + ii < 100) {\n"
          "      B[io * 32 + ii] = A[io * 32 + ii] * 2.0\n"
          "    }\n"
          "  }\n"
          "}\n");
    PrimFunc softmax = lower_blocks(parse_func(kSoftmax));
    CHECK(print_stmt(softmax.body).rfind("alloc M: f32[4] {\n  alloc S: f32[4] {\n", 0) == 0);
  }
  SECTION("every kernel: no block is left, and the results are the same") {
    for (const auto& [name, text] : all_pass_kernels()) {
      INFO("kernel " << name);
      PrimFunc func = parse_func(text);
      PrimFunc result = lower_blocks(func);
      CHECK(census(result).stmts[StmtKind::Block] == 0);
      require_same_results(func, result, 3);
    }
  }
}

TEST_CASE("flatten-buffers: one index through the strides", "[loop_pass]") {
  SECTION("a transpose") {
    PrimFunc func = parse_func(R"(
func @f(A: f32[4,8], B: f32[8,4]) {
  for i in 0..4 {
    for j in 0..8 {
      B[j, i] = A[i, j]
    }
  }
}
)");
    PrimFunc result = flatten_buffers(func);
    CHECK(print_func(result) ==
          "func @f(A: f32[32], B: f32[32]) {\n"
          "  for i in 0..4 {\n"
          "    for j in 0..8 {\n"
          "      B[j * 4 + i] = A[i * 8 + j]\n"
          "    }\n"
          "  }\n"
          "}\n");
    require_same_results(func, result);
  }
  SECTION("vector indices, padded strides, scalars") {
    PrimFunc func = parse_func(R"(
func @f(X: f32[4,8], Y: f32[4,8], s: f32[]) {
  alloc T: f32[4,4] strides[5,1] local {
    for i in 0..4 {
      for jo in 0..2 {
        Y[i, ramp(jo * 4, 1, 4)] = X[i, ramp(jo * 4, 1, 4)] + broadcast(s[], 4)
      }
      T[i, 3] = X[i, 7]
    }
    for i in 0..4 {
      Y[i, 0] = T[3 - i, 3]
    }
  }
}
)");
    PrimFunc result = flatten_buffers(func);
    std::string text = print_func(result);
    CHECK(text.find("func @f(X: f32[32], Y: f32[32], s: f32[1])") != std::string::npos);
    CHECK(text.find("alloc T: f32[19] local") != std::string::npos);
    CHECK(text.find("Y[ramp(i * 8 + jo * 4, 1, 4)] = X[ramp(i * 8 + jo * 4, 1, 4)] + "
                    "broadcast(s[0], 4)") != std::string::npos);
    CHECK(text.find("T[i * 5 + 3] = X[i * 8 + 7]") != std::string::npos);
    require_same_results(func, result);
  }
  SECTION("blocks must be lowered first") {
    REQUIRE_THROWS_WITH(flatten_buffers(parse_func(kMatmul)),
                        Catch::Contains("block C; run lower-blocks first"));
  }
  SECTION("every kernel, after lower-blocks") {
    check_after_lowering([](PrimFunc func) {
      PrimFunc result = flatten_buffers(func);
      CHECK(census(result).ranks == std::set<int64_t>{1});
      return result;
    });
  }
}

TEST_CASE("partition-loops: guarded tails are cut off", "[loop_pass]") {
  SECTION("a split tail under a block predicate") {
    PrimFunc func = parse_func(kGuardedTail);
    PrimFunc result = partition_loops(func);
    CHECK(print_stmt(result.body) ==
          "for io in 0..3 {\n"
          "  for ii in 0..32 {\n"
          "    block B(v = spatial(100) io * 32 + ii) {\n"
          "      reads(A[v]) writes(B[v])\n"
          "      B[v] = A[v] * 2.0\n"
          "    }\n"
          "  }\n"
          "}\n"
          "for ii in 0..4 {\n"
          "  block B(v = spatial(100) ii + 96) {\n"
          "    reads(A[v]) writes(B[v])\n"
          "    B[v] = A[v] * 2.0\n"
          "  }\n"
          "}\n");
    require_same_results(func, result);
  }
  SECTION("a two-dimensional tail under an if: no if is left") {
    PrimFunc func = parse_func(kGuardedTail2d);
    PrimFunc result = partition_loops(func);
    CHECK(census(result).stmts[StmtKind::IfThenElse] == 0);
    require_same_results(func, result);
  }
  SECTION("a guard at the start of the range, as padding makes") {
    PrimFunc func = parse_func(R"(
func @f(A: f32[10], B: f32[10]) {
  for i in 0..10 {
    if (i >= 2) {
      B[i] = A[i - 2]
    } else {
      B[i] = 0.0
    }
  }
}
)");
    PrimFunc result = partition_loops(func);
    CHECK(print_stmt(result.body) ==
          "for i in 0..2 {\n"
          "  B[i] = 0.0\n"
          "}\n"
          "for i in 2..10 {\n"
          "  B[i] = A[i - 2]\n"
          "}\n");
    require_same_results(func, result);
  }
  SECTION("every kernel, before and after lower-blocks") {
    for (const auto& [name, text] : all_pass_kernels()) {
      INFO("kernel " << name);
      PrimFunc func = parse_func(text);
      require_same_results(func, partition_loops(func), 5);
    }
    check_after_lowering(partition_loops);
  }
}

TEST_CASE("partition-loops: selects and short loops", "[loop_pass]") {
  SECTION("a select's borders on both sides, conjunct by conjunct") {
    PrimFunc func = parse_func(R"(
func @f(A: f32[16], B: f32[16]) {
  for i in 0..16 {
    B[i] = select(i >= 1 && i < 15, A[i - 1], 0.0)
  }
}
)");
    PrimFunc result = partition_loops(func);
    CHECK(print_stmt(result.body) ==
          "B[0] = 0.0\n"
          "for i in 1..15 {\n"
          "  B[i] = A[i - 1]\n"
          "}\n"
          "B[15] = 0.0\n");
    require_same_results(func, result);
  }
  SECTION("a short loop guarded in every iteration is peeled; a peeled part's long loops "
          "keep their guards") {
    PrimFunc func = parse_func(R"(
func @f(A: f32[2,16], B: f32[2,16]) {
  for t in 0..2 {
    for j in 0..8 {
      B[t, j * 2] = select(t * 8 + j >= 1 && t * 8 + j < 15, A[t, j], 0.0)
    }
  }
}
)");
    PrimFunc result = partition_loops(func);
    CHECK(print_stmt(result.body) ==
          "for j in 0..8 {\n"
          "  B[0, j * 2] = select(j >= 1, A[0, j], 0.0)\n"
          "}\n"
          "for j in 0..7 {\n"
          "  B[1, j * 2] = A[1, j]\n"
          "}\n"
          "B[1, 14] = 0.0\n");
    require_same_results(func, result);
  }
}

TEST_CASE("partition-loops: loops it leaves as they are", "[loop_pass]") {
  SECTION("a loop bound directly to a block variable is cut only after lower-blocks") {
    PrimFunc func = parse_func(R"(
func @f(A: f32[10], B: f32[10]) {
  for i in 0..10 {
    block B(v = spatial(10) i) where (i >= 2) {
      B[v] = A[v - 2]
    }
  }
}
)");
    CHECK(print_func(partition_loops(func)) == print_func(func));
    PrimFunc lowered = partition_loops(lower_blocks(func));
    CHECK(print_stmt(lowered.body) ==
          "for i in 2..10 {\n"
          "  B[i] = A[i - 2]\n"
          "}\n");
    require_same_results(func, lowered);
  }
  SECTION("a guard that holds on a short first part is left: a reduction's first step") {
    PrimFunc func = parse_func(R"(
func @f(A: f32[8,16], C: f32[8]) {
  for i in 0..8 {
    for k in 0..16 {
      if (k == 0) {
        C[i] = 0.0
      }
      C[i] = C[i] + A[i, k]
    }
  }
}
)");
    CHECK(print_func(partition_loops(func)) == print_func(func));
  }
  SECTION("loops bound to a GPU axis are not cut") {
    PrimFunc func = parse_func(R"(
func @f(A: f32[100], B: f32[100]) {
  for bx in 0..4 bind(blockIdx.x) {
    for tx in 0..32 bind(threadIdx.x) {
      if (bx * 32 + tx < 100) {
        B[bx * 32 + tx] = A[bx * 32 + tx]
      }
    }
  }
}
)");
    CHECK(print_func(partition_loops(func)) == print_func(func));
  }
}

TEST_CASE("unroll-loops: copies of the body", "[loop_pass]") {
  SECTION("nested unrolled loops unroll completely") {
    PrimFunc func = parse_func(R"(
func @f(C: f32[2,2]) {
  unrolled for i in 0..2 {
    unrolled for j in 1..+2 {
      C[i, j - 1] = 0.0
    }
  }
}
)");
    PrimFunc result = unroll_loops(func);
    CHECK(print_stmt(result.body) ==
          "C[0, 1 - 1] = 0.0\n"
          "C[0, 2 - 1] = 0.0\n"
          "C[1, 1 - 1] = 0.0\n"
          "C[1, 2 - 1] = 0.0\n");
    require_same_results(func, result);
  }
  SECTION("a loop beyond the limit, and one of unknown extent, stay") {
    PrimFunc func = parse_func(R"(
func @f(A: f32[100], B: f32[100]) {
  unrolled for i in 0..100 {
    B[i] = A[i]
  }
  for n in 1..3 {
    unrolled for j in 0..+n {
      B[j] = A[j] + 1.0
    }
  }
}
)");
    CHECK(print_func(unroll_loops(func)) == print_func(func));
  }
  SECTION("every kernel: no unrolled loop is left, and the results are the same") {
    for (const auto& [name, text] : all_pass_kernels()) {
      INFO("kernel " << name);
      PrimFunc func = parse_func(text);
      PrimFunc result = unroll_loops(func);
      CHECK(census(result).loops[ForKind::unrolled] == 0);
      require_same_results(func, result, 9);
    }
  }
}
