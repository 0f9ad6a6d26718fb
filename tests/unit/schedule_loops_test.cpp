// Tests of the loop-restructuring schedule primitives split, reorder and fuse: Before/
// Expected pairs, every precondition's error, and the interpreter before and after.
// Course module 4. The loop-kind primitives are in schedule_loop_kinds_test.cpp.
#include "minic/schedule/primitives.h"

#include "schedule_kernels.h"
#include "schedule_test_util.h"

using namespace minic;
using namespace minic::schedule;
using namespace minic::schedule::test;

namespace {

const char* kScale = R"(func @scale(A: f32[100], B: f32[100]) {
  for i in 0..100 {
    block B(v = spatial(100) i) {
      reads(A[v]) writes(B[v])
      B[v] = A[v] * 2.0
    }
  }
}
)";

// Two blocks under one loop, one with a predicate of its own.
const char* kTwoBlocks = R"(func @two(A: f32[10], B: f32[10], C: f32[10]) {
  for i in 0..10 {
    block B(v = spatial(10) i) {
      B[v] = A[v] + 1.0
    }
    block C(v = spatial(10) i) where (i < 8) {
      C[v] = A[v] * 3.0
    }
  }
}
)";

// A loop whose bounds depend on another, and one that does not start at 0.
const char* kTriangle = R"(func @triangle(A: f32[8,8], B: f32[8,8]) {
  for i in 0..8 {
    for j in 0..+i + 1 {
      block B(vi = spatial(8) i, vj = spatial(8) j) {
        B[vi, vj] = A[vi, vj]
      }
    }
  }
  for r in 2..8 {
    block C(v = spatial(6) r - 2) {
      B[v, 0] = 0.0
    }
  }
}
)";

// Stores outside blocks (as lowered GPU code has them).
const char* kRawStores = R"(func @raw(A: f32[12], B: f32[12]) {
  for i in 0..12 {
    B[i] = A[i] + 1.0
  }
}
)";

// `fn` applied to a parsed copy of `before` gives `expected`, and computes the same.
void check_golden(const char* before, const std::function<void(loop::PrimFunc&)>& fn,
                  const char* expected) {
  loop::PrimFunc original = parse_func(before);
  loop::PrimFunc scheduled = original;
  fn(scheduled);
  CHECK(loop::print_func(scheduled) == loop::print_func(parse_func(expected)));
  check_same_outputs(original, scheduled);
}

}  // namespace

TEST_CASE("split by an exact divisor and with a guard", "[schedule]") {
  check_golden(kScale, [](loop::PrimFunc& f) { split(f, loop_named(f, "i"), {-1, 25}); },
               R"(func @scale(A: f32[100], B: f32[100]) {
  for i.0 in 0..4 {
    for i.1 in 0..25 {
      block B(v = spatial(100) i.0 * 25 + i.1) {
        reads(A[v]) writes(B[v])
        B[v] = A[v] * 2.0
      }
    }
  }
})");
  check_golden(kScale, [](loop::PrimFunc& f) { split(f, loop_named(f, "i"), {-1, 32}); },
               R"(func @scale(A: f32[100], B: f32[100]) {
  for i.0 in 0..4 {
    for i.1 in 0..32 {
      block B(v = spatial(100) i.0 * 32 + i.1) where (i.0 * 32 + i.1 < 100) {
        reads(A[v]) writes(B[v])
        B[v] = A[v] * 2.0
      }
    }
  }
})");
  // Three factors; the inferred one in the middle.
  check_golden(kScale, [](loop::PrimFunc& f) { split(f, loop_named(f, "i"), {2, -1, 5}); },
               R"(func @scale(A: f32[100], B: f32[100]) {
  for i.0 in 0..2 {
    for i.1 in 0..10 {
      for i.2 in 0..5 {
        block B(v = spatial(100) i.0 * 50 + i.1 * 5 + i.2) {
          reads(A[v]) writes(B[v])
          B[v] = A[v] * 2.0
        }
      }
    }
  }
})");
  // One factor: the loop renamed.
  check_golden(kScale, [](loop::PrimFunc& f) { split(f, loop_named(f, "i"), {-1}); },
               R"(func @scale(A: f32[100], B: f32[100]) {
  for i.0 in 0..100 {
    block B(v = spatial(100) i.0) {
      reads(A[v]) writes(B[v])
      B[v] = A[v] * 2.0
    }
  }
})");
}

TEST_CASE("split guards every block below the loop", "[schedule]") {
  check_golden(kTwoBlocks, [](loop::PrimFunc& f) { split(f, loop_named(f, "i"), {4, 3}); },
               R"(func @two(A: f32[10], B: f32[10], C: f32[10]) {
  for i.0 in 0..4 {
    for i.1 in 0..3 {
      block B(v = spatial(10) i.0 * 3 + i.1) where (i.0 * 3 + i.1 < 10) {
        B[v] = A[v] + 1.0
      }
      block C(v = spatial(10) i.0 * 3 + i.1) where (i.0 * 3 + i.1 < 8 && i.0 * 3 + i.1 < 10) {
        C[v] = A[v] * 3.0
      }
    }
  }
})");
  // The new loops' variables come back outermost first.
  loop::PrimFunc func = parse_func(kTwoBlocks);
  std::vector<loop::Expr> loops = split(func, loop_named(func, "i"), {-1, 2});
  REQUIRE(loops.size() == 2);
  CHECK(loops[0].same_as(loop_named(func, "i.0")));
  CHECK(loops[1].same_as(loop_named(func, "i.1")));
}

TEST_CASE("split refuses bad factors and loops it cannot split", "[schedule]") {
  loop::PrimFunc scale = parse_func(kScale);
  auto split_i = [&](std::vector<int64_t> factors) {
    return refusal(scale, [&](loop::PrimFunc& f) { split(f, loop_named(f, "i"), factors); });
  };
  CHECK_THAT(split_i({}), Catch::Contains("split: loop i needs at least one factor"));
  CHECK_THAT(split_i({-1, 4, -1}), Catch::Contains("split: loop i: at most one factor may be -1"));
  CHECK_THAT(split_i({0, 4}), Catch::Contains("split: loop i: factor 0 is not a positive"));
  CHECK_THAT(split_i({-3, 4}), Catch::Contains("factor -3 is not a positive"));
  CHECK_THAT(split_i({8, 12}),
             Catch::Contains("the factors of loop i cover 96 iterations, fewer than its "
                             "extent 100"));
  loop::PrimFunc triangle = parse_func(kTriangle);
  CHECK_THAT(refusal(triangle, [](loop::PrimFunc& f) { split(f, loop_named(f, "j"), {2, -1}); }),
             Catch::Contains("split: loop j must run over a constant range 0..N; it runs over "
                             "0..+i + 1"));
  CHECK_THAT(refusal(triangle, [](loop::PrimFunc& f) { split(f, loop_named(f, "r"), {2, -1}); }),
             Catch::Contains("loop r must run over a constant range 0..N; it runs over 2..+6"));
  // A guard cannot cover a store outside blocks; an exact split can.
  loop::PrimFunc raw = parse_func(kRawStores);
  CHECK_THAT(refusal(raw, [](loop::PrimFunc& f) { split(f, loop_named(f, "i"), {-1, 5}); }),
             Catch::Contains("split: loop i holds a store to B outside any block"));
  loop::PrimFunc exact = raw;
  split(exact, loop_named(exact, "i"), {-1, 4});
  check_same_outputs(raw, exact);
  // A loop a split replaced is no longer a loop.
  loop::Expr i = loop_named(scale, "i");
  loop::PrimFunc once = scale;
  split(once, i, {-1, 4});
  CHECK_THAT(refusal(once, [&](loop::PrimFunc& f) { split(f, i, {2, -1}); }),
             Catch::Contains("split: i is not a loop of @scale"));
}

TEST_CASE("reorder permutes a perfect nest, unnamed loops keep their places", "[schedule]") {
  check_golden(kGemmKernel,
               [](loop::PrimFunc& f) { reorder(f, {loop_named(f, "k"), loop_named(f, "i")}); },
               R"(func @gemm(A: f32[64,32], B: f32[32,48], C: f32[64,48]) {
  for k in 0..32 {
    for j in 0..48 {
      for i in 0..64 {
        block C(vi = spatial(64) i, vj = spatial(48) j, vk = reduce(32) k) {
          reads(A[vi, vk], B[vk, vj], C[vi, vj]) writes(C[vi, vj])
          init { C[vi, vj] = 0.0 }
          C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        }
      }
    }
  }
})");
  // Tiling: split both loops, then bring the tiles outside.
  loop::PrimFunc gemm = parse_func(kGemmKernel);
  loop::PrimFunc tiled = gemm;
  std::vector<loop::Expr> i = split(tiled, loop_named(tiled, "i"), {-1, 16});
  std::vector<loop::Expr> j = split(tiled, loop_named(tiled, "j"), {-1, 8});
  reorder(tiled, {i[0], j[0], loop_named(tiled, "k"), i[1], j[1]});
  std::string text = loop::print_func(tiled);
  CHECK(text.find("for i.0 in 0..4 {\n    for j.0 in 0..6 {\n      for k in 0..32 {\n"
                  "        for i.1 in 0..16 {\n          for j.1 in 0..8 {") != std::string::npos);
  check_same_outputs(gemm, tiled);
}

TEST_CASE("reorder refuses what is not a perfect nest or might change the result",
          "[schedule]") {
  loop::PrimFunc gemm = parse_func(kGemmKernel);
  auto reorder_named = [](std::vector<std::string> names) {
    return [names](loop::PrimFunc& f) {
      std::vector<loop::Expr> loops;
      for (const std::string& name : names) loops.push_back(loop_named(f, name));
      reorder(f, loops);
    };
  };
  CHECK_THAT(refusal(gemm, reorder_named({"i", "k", "i"})),
             Catch::Contains("reorder: loop i is named twice"));
  CHECK_THAT(refusal(gemm, [](loop::PrimFunc& f) { reorder(f, {}); }),
             Catch::Contains("reorder: needs at least one loop"));
  loop::PrimFunc softmax = parse_func(kSoftmaxKernel);
  std::vector<loop::Expr> sum_loops = get_loops(softmax, "row_sum");
  loop::Expr first_j = loop_named(softmax, "j");
  CHECK_THAT(refusal(softmax, [&](loop::PrimFunc& f) { reorder(f, {sum_loops[1], first_j}); }),
             Catch::Contains("are not nested one in the other"));
  CHECK_THAT(refusal(softmax, [&](loop::PrimFunc& f) { reorder(f, {first_j, sum_loops[0]}); }),
             Catch::Contains("reorder: the loops are not a perfect nest: loop i holds a Seq"));
  loop::PrimFunc triangle = parse_func(kTriangle);
  CHECK_THAT(refusal(triangle, reorder_named({"j", "i"})),
             Catch::Contains("reorder: the bounds of loop j use the variable of loop i"));
  // A fused loop feeding both a spatial and the reduction variable.
  loop::PrimFunc mixed = parse_func(kRowSumKernel);
  loop::Expr fused = fuse(mixed, get_loops(mixed, "S"));
  std::vector<loop::Expr> halves = split(mixed, fused, {-1, 5});
  CHECK_THAT(refusal(mixed, [&](loop::PrimFunc& f) { reorder(f, {halves[1], halves[0]}); }),
             Catch::Contains("reorder: loop i.k.fused.0 feeds both spatial and reduction "
                             "variables of block S, which has an init"));
  loop::PrimFunc bound = gemm;
  bind(bound, loop_named(bound, "i"), "blockIdx.x");
  CHECK_THAT(refusal(bound, reorder_named({"j", "i"})),
             Catch::Contains("reorder: loop i is bound to blockIdx.x; reorder before binding"));
}

TEST_CASE("reorder refuses to reorder blocks that pass data across iterations",
          "[schedule]") {
  // C reads T transposed: whether T[j, i] is written yet depends on the loop order.
  const char* transpose = R"(func @f(A: f32[4,4], C: f32[4,4]) {
  alloc T: f32[4,4] {
    for i in 0..4 {
      for j in 0..4 {
        block P(vi = spatial(4) i, vj = spatial(4) j) {
          T[vi, vj] = A[vi, vj]
        }
        block C(vi = spatial(4) i, vj = spatial(4) j) {
          C[vi, vj] = T[vj, vi]
        }
      }
    }
  }
})";
  loop::PrimFunc func = parse_func(transpose);
  CHECK_THAT(refusal(func, [](loop::PrimFunc& f) {
               reorder(f, {loop_named(f, "j"), loop_named(f, "i")});
             }),
             Catch::Contains("reorder: cannot show that the new order computes the same: block P "
                             "writes T and block C reads T"));
  // Reading the element written in the same iteration is fine.
  std::string local = transpose;
  local.replace(local.find("T[vj, vi]"), 9, "T[vi, vj]");
  loop::PrimFunc same_iteration = parse_func(local);
  loop::PrimFunc reordered = same_iteration;
  reorder(reordered, {loop_named(reordered, "j"), loop_named(reordered, "i")});
  check_same_outputs(same_iteration, reordered);
}

TEST_CASE("fuse makes one loop whose digits are the old loops", "[schedule]") {
  check_golden(kRowSumKernel, [](loop::PrimFunc& f) { fuse(f, get_loops(f, "S")); },
               R"(func @row_sum(X: f32[16,24], S: f32[16]) {
  for i.k.fused in 0..384 {
    block S(vi = spatial(16) floordiv(i.k.fused, 24), vk = reduce(24) floormod(i.k.fused, 24)) {
      reads(X[vi, vk], S[vi]) writes(S[vi])
      init { S[vi] = 0.0 }
      S[vi] = S[vi] + X[vi, vk]
    }
  }
})");
  // Three loops: an extent-1 loop is always 0, and the middle one needs no floormod, as
  // the loop outside it runs once.
  check_golden(kConv2dKernel,
               [](loop::PrimFunc& f) {
                 std::vector<loop::Expr> loops = get_loops(f, "Y");
                 fuse(f, {loops[0], loops[1], loops[2]});
               },
               R"(func @conv2d(X: f32[1,3,8,8], W: f32[4,3,3,3], Y: f32[1,4,6,6]) {
  for n.f.y.fused in 0..24 {
    for x in 0..6 {
      for c in 0..3 {
        for r in 0..3 {
          for s in 0..3 {
            block Y(vn = spatial(1) 0, vf = spatial(4) floordiv(n.f.y.fused, 6), vy = spatial(6) floormod(n.f.y.fused, 6), vx = spatial(6) x, vc = reduce(3) c, vr = reduce(3) r, vs = reduce(3) s) {
              reads(X[vn, vc, vy + vr, vx + vs], W[vf, vc, vr, vs], Y[vn, vf, vy, vx]) writes(Y[vn, vf, vy, vx])
              init { Y[vn, vf, vy, vx] = 0.0 }
              Y[vn, vf, vy, vx] = Y[vn, vf, vy, vx] + X[vn, vc, vy + vr, vx + vs] * W[vf, vc, vr, vs]
            }
          }
        }
      }
    }
  }
})");
}

TEST_CASE("fuse refuses loops that are not a perfect constant nest", "[schedule]") {
  loop::PrimFunc gemm = parse_func(kGemmKernel);
  std::vector<loop::Expr> loops = get_loops(gemm, "C");
  CHECK_THAT(refusal(gemm, [&](loop::PrimFunc& f) { fuse(f, {loops[0]}); }),
             Catch::Contains("fuse: needs at least two loops, got 1"));
  CHECK_THAT(refusal(gemm, [&](loop::PrimFunc& f) { fuse(f, {loops[0], loops[2]}); }),
             Catch::Contains("fuse: loop k is not the whole body of loop i"));
  CHECK_THAT(refusal(gemm, [&](loop::PrimFunc& f) { fuse(f, {loops[1], loops[0]}); }),
             Catch::Contains("fuse: loop i is not the whole body of loop j"));
  loop::PrimFunc triangle = parse_func(kTriangle);
  CHECK_THAT(refusal(triangle, [](loop::PrimFunc& f) {
               fuse(f, {loop_named(f, "i"), loop_named(f, "j")});
             }),
             Catch::Contains("fuse: loop j must run over a constant range 0..N"));
  loop::PrimFunc bound = gemm;
  bind(bound, loops[1], "threadIdx.x");
  CHECK_THAT(refusal(bound, [&](loop::PrimFunc& f) { fuse(f, {loops[0], loops[1]}); }),
             Catch::Contains("fuse: loop j is bound to threadIdx.x; fuse before binding"));
}

TEST_CASE("the reorder that the init rule refuses would compute something else",
          "[schedule]") {
  // The nest above, reordered by hand: for row 1 (fused values 24..47) the first iteration
  // is 25 (vk = 1), so the init at 24 comes later and drops the sum so far.
  loop::PrimFunc reordered = parse_func(R"(func @row_sum(X: f32[16,24], S: f32[16]) {
  for f.1 in 0..5 {
    for f.0 in 0..77 {
      block S(vi = spatial(16) floordiv(f.0 * 5 + f.1, 24), vk = reduce(24) floormod(f.0 * 5 + f.1, 24)) where (f.0 * 5 + f.1 < 384) {
        reads(X[vi, vk], S[vi]) writes(S[vi])
        init { S[vi] = 0.0 }
        S[vi] = S[vi] + X[vi, vk]
      }
    }
  }
})");
  loop::PrimFunc original = parse_func(kRowSumKernel);
  std::vector<Tensor> arguments = random_arguments(original, 3);
  CHECK_FALSE(same_results(run_on(original, arguments), run_on(reordered, arguments), true));
}
