// Tests of the schedule primitives that remove or split blocks and pad buffers:
// compute_inline, reverse_compute_inline, decompose_reduction, storage_align. Course
// module 4. (The primitives that move blocks and make caches are tested in
// schedule_blocks_move_test.cpp.)
//
// Each primitive has Before/Expected pairs (the expected text written by hand, parsed and
// printed so that only the IR is compared), an error test for each precondition, and a
// differential test: the loop interpreter runs the kernel before and after on the same
// random inputs, and every output must be identical.
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

// --- compute_inline ---------------------------------------------------------------------------

TEST_CASE("compute_inline substitutes a producer into both its consumers",
          "[schedule_blocks]") {
  PrimFunc before = parse_func(kernels::kTwoConsumerKernel);
  PrimFunc func = before;
  compute_inline(func, "B");
  CHECK(loop::print_func(func) ==
        expected(R"(func @two_consumers(A: f32[16,8], D: f32[16,8]) {
  alloc C: f32[16,8] {
    for i in 0..16 {
      for j in 0..8 {
        block C(vi = spatial(16) i, vj = spatial(8) j) {
          reads(A[vi, vj]) writes(C[vi, vj])
          C[vi, vj] = A[vi, vj] * 2.0 + 1.0
        }
      }
    }
    for i in 0..16 {
      for j in 0..8 {
        block D(vi = spatial(16) i, vj = spatial(8) j) {
          reads(C[vi, vj], A[vi, vj]) writes(D[vi, vj])
          D[vi, vj] = C[vi, vj] * (A[vi, vj] * 2.0)
        }
      }
    }
  }
})"));
  require_same_outputs(before, func);
  compute_inline(func, "C");
  CHECK(get_block_names(func) == std::vector<std::string>{"D"});
  require_same_outputs(before, func);
}

TEST_CASE("compute_inline inlines an elementwise chain into its last step",
          "[schedule_blocks]") {
  PrimFunc before = parse_func(kernels::kElementwiseKernel);
  PrimFunc func = before;
  compute_inline(func, "add");
  compute_inline(func, "relu_scale");
  CHECK(loop::print_func(func) ==
        expected(R"(func @chain(A: f32[32,24], B: f32[32,24], D: f32[32,24]) {
  for i in 0..32 {
    for j in 0..24 {
      block sub(vi = spatial(32) i, vj = spatial(24) j) {
        reads(A[vi, vj], B[vi, vj]) writes(D[vi, vj])
        D[vi, vj] = max(A[vi, vj] + B[vi, vj], 0.0) * 2.0 - A[vi, vj]
      }
    }
  }
})"));
  require_same_outputs(before, func);
}

TEST_CASE("compute_inline refuses a reduction, an output and a partial or scattered store",
          "[schedule_blocks]") {
  PrimFunc matmul = parse_func(kernels::kMatmulReluKernel);
  CHECK_THAT(error_of(matmul, [](PrimFunc& f) { compute_inline(f, "T"); }),
             Contains("compute_inline: block T is a reduction"));
  PrimFunc chain = parse_func(kernels::kElementwiseKernel);
  CHECK_THAT(error_of(chain, [](PrimFunc& f) { compute_inline(f, "sub"); }),
             Contains("block sub writes D, a parameter of @chain"));
  CHECK_THAT(error_of(chain, [](PrimFunc& f) { compute_inline(f, "nothing"); }),
             Contains("compute_inline: @chain has no block named 'nothing'"));
  PrimFunc transposed = parse_func(R"(func @f(A: f32[4,4], C: f32[4,4]) {
  alloc B: f32[4,4] {
    for i in 0..4 {
      for j in 0..4 {
        block B(vi = spatial(4) i, vj = spatial(4) j) {
          B[vi, vi] = A[vi, vj]
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
  CHECK_THAT(error_of(transposed, [](PrimFunc& f) { compute_inline(f, "B"); }),
             Contains("block B stores to B at indices that are not its iteration variables"));
  PrimFunc partial = parse_func(R"(func @f(A: f32[8], C: f32[4]) {
  alloc B: f32[8] {
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
  }
})");
  CHECK_THAT(error_of(partial, [](PrimFunc& f) { compute_inline(f, "B"); }),
             Contains("block B writes only part of B"));
}

TEST_CASE("compute_inline refuses a producer whose value is not its expression alone",
          "[schedule_blocks]") {
  PrimFunc two_writers = parse_func(R"(func @f(A: f32[4], C: f32[4]) {
  alloc B: f32[4] {
    for i in 0..4 {
      block B(v = spatial(4) i) {
        B[v] = A[v]
      }
    }
    for i in 0..4 {
      block B2(v = spatial(4) i) {
        B[v] = A[v] + 1.0
      }
    }
    for i in 0..4 {
      block C(v = spatial(4) i) {
        C[v] = B[v]
      }
    }
  }
})");
  CHECK_THAT(error_of(two_writers, [](PrimFunc& f) { compute_inline(f, "B"); }),
             Contains("block B is not the only writer of B: block B2 writes it too"));
  PrimFunc input_changes = parse_func(R"(func @f(A: f32[4], C: f32[4]) {
  alloc B: f32[4] {
    for i in 0..4 {
      block B(v = spatial(4) i) {
        B[v] = A[v]
      }
    }
    for i in 0..4 {
      block A2(v = spatial(4) i) {
        A[v] = 0.0
      }
    }
    for i in 0..4 {
      block C(v = spatial(4) i) {
        C[v] = B[v]
      }
    }
  }
})");
  CHECK_THAT(error_of(input_changes, [](PrimFunc& f) { compute_inline(f, "B"); }),
             Contains("block A2 writes A, which block B reads"));
  PrimFunc predicated = parse_func(R"(func @f(A: f32[4], C: f32[4]) {
  alloc B: f32[4] {
    for i in 0..4 {
      block B(v = spatial(4) i) where (i < 2) {
        B[v] = A[v]
      }
    }
    for i in 0..4 {
      block C(v = spatial(4) i) {
        C[v] = B[v]
      }
    }
  }
})");
  CHECK_THAT(error_of(predicated, [](PrimFunc& f) { compute_inline(f, "B"); }),
             Contains("has the predicate i < 2, which is more than a guard"));
  PrimFunc self_read = parse_func(R"(func @f(A: f32[4], C: f32[4]) {
  alloc B: f32[4] {
    for i in 0..4 {
      block B(v = spatial(4) i) {
        B[v] = B[v] + A[v]
      }
    }
    for i in 0..4 {
      block C(v = spatial(4) i) {
        C[v] = B[v]
      }
    }
  }
})");
  CHECK_THAT(error_of(self_read, [](PrimFunc& f) { compute_inline(f, "B"); }),
             Contains("block B reads B, the buffer it writes"));
}

// --- decompose_reduction -----------------------------------------------------------------------

TEST_CASE("rfactor keeps the results of a sum, a maximum and a softmax's row", "[schedule_blocks]") {
  // The row sum over k split by 8, partials over k.1; the softmax's maximum and sum over
  // their whole loop, inside the row loop that also normalises (the maximum must be
  // complete before the sum reads it).
  PrimFunc row_sum = parse_func(kernels::kRowSumKernel);
  PrimFunc split = row_sum;
  std::vector<Expr> parts = schedule::split(split, loop_of(split, "S", 1), {-1, 8});
  CHECK(rfactor(split, "S", parts[1], loop::MemoryScope::global) == "S_rf");
  CHECK_THAT(loop::print_func(split), Contains("S_rf: f32[16,8]"));
  require_same_outputs(row_sum, split);
  // The partials' axis first: each of the 8 partials a row of 16.
  PrimFunc first = row_sum;
  std::vector<Expr> first_parts = schedule::split(first, loop_of(first, "S", 1), {-1, 8});
  rfactor(first, "S", first_parts[1], loop::MemoryScope::global, 0);
  CHECK_THAT(loop::print_func(first), Contains("S_rf: f32[8,16]"));
  require_same_outputs(row_sum, first);

  PrimFunc softmax = parse_func(kernels::kSoftmaxKernel);
  PrimFunc factored = softmax;
  rfactor(factored, "row_max", loop_of(factored, "row_max", 1), loop::MemoryScope::global);
  rfactor(factored, "row_sum", loop_of(factored, "row_sum", 1), loop::MemoryScope::global);
  require_same_outputs(softmax, factored);

  // A loop feeding the outputs is no reduction loop.
  CHECK_THAT(error_of(row_sum, [&](PrimFunc& f) {
               rfactor(f, "S", loop_of(f, "S", 0), loop::MemoryScope::global);
             }),
             Contains("rfactor: loop i is not a loop around block S that feeds its reduction"));
}

TEST_CASE("decompose_reduction puts a matmul's init before its reduction loop",
          "[schedule_blocks]") {
  PrimFunc before = parse_func(kernels::kGemmKernel);
  PrimFunc func = before;
  CHECK(decompose_reduction(func, "C", loop_of(func, "C", 2)) == "C_init");
  CHECK(loop::print_func(func) ==
        expected(R"(func @gemm(A: f32[64,32], B: f32[32,48], C: f32[64,48]) {
  for i in 0..64 {
    for j in 0..48 {
      block C_init(vi = spatial(64) i, vj = spatial(48) j) {
        writes(C[vi, vj])
        C[vi, vj] = 0.0
      }
      for k in 0..32 {
        block C(vi = spatial(64) i, vj = spatial(48) j, vk = reduce(32) k) {
          reads(A[vi, vk], B[vk, vj], C[vi, vj]) writes(C[vi, vj])
          C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        }
      }
    }
  }
})"));
  require_same_outputs(before, func);
}

TEST_CASE("decompose_reduction above the spatial loops copies them for the init",
          "[schedule_blocks]") {
  PrimFunc before = parse_func(kernels::kRowSumKernel);
  PrimFunc func = before;
  decompose_reduction(func, "S", loop_of(func, "S", 0));
  CHECK(loop::print_func(func) ==
        expected(R"(func @row_sum(X: f32[16,24], S: f32[16]) {
  for i in 0..16 {
    block S_init(vi = spatial(16) i) {
      writes(S[vi])
      S[vi] = 0.0
    }
  }
  for i in 0..16 {
    for k in 0..24 {
      block S(vi = spatial(16) i, vk = reduce(24) k) {
        reads(X[vi, vk], S[vi]) writes(S[vi])
        S[vi] = S[vi] + X[vi, vk]
      }
    }
  }
})"));
  require_same_outputs(before, func);
  PrimFunc inner = before;
  decompose_reduction(inner, "S", loop_of(inner, "S", 1));
  require_same_outputs(before, inner);
  PrimFunc tiled = parse_func(kernels::kTiledGemmKernel);
  PrimFunc tiled_before = tiled;
  decompose_reduction(tiled, "C", loop_of(tiled, "C", 2));
  CHECK(get_loops(tiled, "C_init").size() == 4);
  require_same_outputs(tiled_before, tiled);
}

TEST_CASE("decompose_reduction refuses what would change the result", "[schedule_blocks]") {
  PrimFunc tiled = parse_func(kernels::kTiledGemmKernel);
  CHECK_THAT(error_of(tiled, [](PrimFunc& f) { decompose_reduction(f, "C", loop_of(f, "C", 3)); }),
             Contains("decompose_reduction: loop i.1 is inside the reduction loop k.0 of block C"));
  decompose_reduction(tiled, "C", loop_of(tiled, "C", 2));
  CHECK_THAT(error_of(tiled, [](PrimFunc& f) { decompose_reduction(f, "C", loop_of(f, "C", 2)); }),
             Contains("decompose_reduction: block C has no init"));
  PrimFunc two = parse_func(kernels::kMatmulReluKernel);
  CHECK_THAT(error_of(two, [](PrimFunc& f) { decompose_reduction(f, "T", loop_of(f, "Y", 0)); }),
             Contains("decompose_reduction: loop i is not a loop around block T"));
  PrimFunc mixed = parse_func(R"(func @f(A: f32[4], S: f32[4]) {
  for i in 0..4 {
    block S(v = spatial(4) i, r = reduce(4) i) {
      reads(A[r]) writes(S[v])
      init { S[v] = 0.0 }
      S[v] = S[v] + A[r]
    }
  }
})");
  CHECK_THAT(error_of(mixed, [](PrimFunc& f) { decompose_reduction(f, "S", loop_of(f, "S", 0)); }),
             Contains("loop i feeds both spatial and reduction variables of block S"));
}

// --- reverse_compute_inline --------------------------------------------------------------------

TEST_CASE("reverse_compute_inline folds a ReLU epilogue into the bias add",
          "[schedule_blocks]") {
  PrimFunc before = parse_func(kernels::kBiasReluKernel);
  PrimFunc func = before;
  reverse_compute_inline(func, "Y");
  CHECK(loop::print_func(func) ==
        expected(R"(func @bias_relu(X: f32[16,8], bias: f32[8], Y: f32[16,8]) {
  for i in 0..16 {
    for j in 0..8 {
      block T(vi = spatial(16) i, vj = spatial(8) j) {
        reads(X[vi, vj], bias[vj]) writes(Y[vi, vj])
        Y[vi, vj] = max(X[vi, vj] + bias[vj], 0.0)
      }
    }
  }
})"));
  require_same_outputs(before, func);
}

TEST_CASE("reverse_compute_inline refuses what would change the result", "[schedule_blocks]") {
  PrimFunc matmul = parse_func(kernels::kMatmulReluKernel);
  CHECK_THAT(error_of(matmul, [](PrimFunc& f) { reverse_compute_inline(f, "Y"); }),
             Contains("reverse_compute_inline: the producer T of block Y is a reduction"));
  PrimFunc two_readers = parse_func(kernels::kTwoConsumerKernel);
  CHECK_THAT(error_of(two_readers, [](PrimFunc& f) { reverse_compute_inline(f, "C"); }),
             Contains("reverse_compute_inline: block D also reads B"));
  CHECK_THAT(error_of(two_readers, [](PrimFunc& f) { reverse_compute_inline(f, "D"); }),
             Contains("reverse_compute_inline: block D reads what two blocks write"));
  PrimFunc transposed = parse_func(R"(func @f(A: f32[4,4], C: f32[4,4]) {
  alloc B: f32[4,4] {
    for i in 0..4 {
      for j in 0..4 {
        block B(vi = spatial(4) i, vj = spatial(4) j) {
          B[vi, vj] = A[vi, vj]
        }
      }
    }
    for i in 0..4 {
      for j in 0..4 {
        block C(vi = spatial(4) i, vj = spatial(4) j) {
          C[vi, vj] = B[vi, vj] + B[vj, vi]
        }
      }
    }
  }
})");
  CHECK_THAT(error_of(transposed, [](PrimFunc& f) { reverse_compute_inline(f, "C"); }),
             Contains("reverse_compute_inline: block C reads B at different indices"));
  PrimFunc output = parse_func(R"(func @f(A: f32[4], B: f32[4], C: f32[4]) {
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
  CHECK_THAT(error_of(output, [](PrimFunc& f) { reverse_compute_inline(f, "C"); }),
             Contains("reverse_compute_inline: block B writes B, a parameter of @f"));
}

// --- storage_align -----------------------------------------------------------------------------

TEST_CASE("storage_align pads the row stride of a shared tile", "[schedule_blocks]") {
  PrimFunc before = parse_func(kernels::kTiledGemmKernel);
  PrimFunc func = before;
  std::string copy = cache_read(func, "C", 0, loop::MemoryScope::shared);
  storage_align(func, copy, 0, 0, 32, 1);
  std::string text = loop::print_func(func);
  CHECK(text.find("alloc A_shared: f32[32,16] strides[33,1] shared {") != std::string::npos);
  require_same_outputs(before, func);
  // Aligning again with another factor keeps the padding consistent.
  storage_align(func, copy, 0, 0, 8, 0);
  CHECK(loop::print_func(func).find("strides[40,1]") != std::string::npos);
  require_same_outputs(before, func);
}

TEST_CASE("storage_align refuses parameters and bad arguments", "[schedule_blocks]") {
  PrimFunc gemm = parse_func(kernels::kGemmKernel);
  CHECK_THAT(error_of(gemm, [](PrimFunc& f) { storage_align(f, "C", 0, 0, 32, 1); }),
             Contains("storage_align: C is a parameter of @gemm"));
  std::string copy = cache_read(gemm, "C", 0, loop::MemoryScope::shared);
  CHECK_THAT(error_of(gemm, [&](PrimFunc& f) { storage_align(f, copy, 0, 2, 32, 1); }),
             Contains("storage_align: A_shared has 2 dimensions; there is no axis 2"));
  CHECK_THAT(error_of(gemm, [&](PrimFunc& f) { storage_align(f, copy, 0, 0, 32, 32); }),
             Contains("factor 32 and offset 32 do not satisfy"));
  CHECK_THAT(error_of(gemm, [&](PrimFunc& f) { storage_align(f, copy, 1, 0, 32, 1); }),
             Contains("storage_align: block A_shared has 1 write regions; there is no write 1"));
}

}  // namespace minic::schedule
