// Tests of the schedule primitives that change how a loop runs (vectorize, unroll,
// parallel, bind) and of annotate: Before/Expected pairs, every precondition's error, and
// the interpreter before and after. Course module 4.
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
      B[v] = A[v] * 2.0
    }
  }
}
)";

// Every iteration writes S[0]: the iterations are not independent.
const char* kLastWins = R"(func @last(A: f32[16], S: f32[1]) {
  for i in 0..16 {
    block S(v = spatial(16) i) {
      S[0] = A[v]
    }
  }
}
)";

// C reads T transposed: row i of C needs every row of T.
const char* kTranspose = R"(func @f(A: f32[4,4], C: f32[4,4]) {
  alloc T: f32[4,4] {
    for i in 0..4 {
      for j in 0..4 {
        block P(vi = spatial(4) i, vj = spatial(4) j) {
          T[vi, vj] = A[vi, vj]
        }
      }
      for j in 0..4 {
        block C(vi = spatial(4) i, vj = spatial(4) j) {
          C[vi, vj] = T[vj, vi]
        }
      }
    }
  }
}
)";

const char* kTriangle = R"(func @triangle(A: f32[8,8], B: f32[8,8]) {
  for i in 0..8 {
    for j in 0..+i + 1 {
      block B(vi = spatial(8) i, vj = spatial(8) j) {
        B[vi, vj] = A[vi, vj]
      }
    }
  }
}
)";

using Action = std::function<void(loop::PrimFunc&)>;

// `fn` on a copy of `func` gives text containing `expected`, and computes the same.
void check_applied(const loop::PrimFunc& func, const Action& fn, const std::string& expected) {
  loop::PrimFunc scheduled = func;
  fn(scheduled);
  std::string text = loop::print_func(scheduled);
  INFO(text);
  CHECK(text.find(expected) != std::string::npos);
  check_same_outputs(func, scheduled);
}

Action on_loop(const std::string& name,
               const std::function<void(loop::PrimFunc&, const loop::Expr&)>& fn) {
  return [name, fn](loop::PrimFunc& f) { fn(f, loop_named(f, name)); };
}

Action bind_to(const std::string& name, const std::string& axis) {
  // Qualified: with a std::string argument, argument-dependent lookup also finds std::bind.
  return on_loop(name, [axis](loop::PrimFunc& f, const loop::Expr& l) {
    schedule::bind(f, l, axis);
  });
}

}  // namespace

TEST_CASE("vectorize marks an independent loop of constant extent", "[schedule]") {
  loop::PrimFunc scale = parse_func(kScale);
  split(scale, loop_named(scale, "i"), {-1, 4});
  check_applied(scale, on_loop("i.1", vectorize),
                "  for i.0 in 0..25 {\n    vectorized for i.1 in 0..4 {\n");
  // The spatial loop of a reduction.
  check_applied(parse_func(kRowSumKernel), on_loop("i", vectorize), "vectorized for i in 0..16");
}

TEST_CASE("vectorize refuses races, unknown widths and loops it cannot hold", "[schedule]") {
  CHECK_THAT(refusal(parse_func(kTriangle), on_loop("j", vectorize)),
             Catch::Contains("vectorize: loop j needs a constant extent (the vector width); it "
                             "has i + 1"));
  CHECK_THAT(refusal(parse_func(kRowSumKernel), on_loop("k", vectorize)),
             Catch::Contains("vectorize: loop k feeds block S, whose reduction variable vk is "
                             "bound to k: the lanes would race on the accumulator"));
  loop::PrimFunc gemm = parse_func(kGemmKernel);
  parallel(gemm, loop_named(gemm, "j"));
  CHECK_THAT(refusal(gemm, on_loop("i", vectorize)),
             Catch::Contains("vectorize: loop i holds loop j, which is parallel"));
  CHECK_THAT(refusal(parse_func(kLastWins), on_loop("i", vectorize)),
             Catch::Contains("vectorize: cannot show that the iterations of loop i are "
                             "independent: block S writes S in more than one iteration"));
  loop::PrimFunc bound = parse_func(kScale);
  bind(bound, loop_named(bound, "i"), "threadIdx.x");
  CHECK_THAT(refusal(bound, on_loop("i", vectorize)),
             Catch::Contains("vectorize: loop i is bound to threadIdx.x"));
}

TEST_CASE("unroll marks any loop that is not bound to a GPU axis", "[schedule]") {
  check_applied(parse_func(kRowSumKernel), on_loop("k", unroll), "unrolled for k in 0..24");
  check_applied(parse_func(kTriangle), on_loop("j", unroll), "unrolled for j in 0..+i + 1");
  loop::PrimFunc bound = parse_func(kScale);
  bind(bound, loop_named(bound, "i"), "blockIdx.x");
  CHECK_THAT(refusal(bound, on_loop("i", unroll)),
             Catch::Contains("unroll: loop i is bound to blockIdx.x"));
}

TEST_CASE("parallel marks a loop whose iterations are independent", "[schedule]") {
  // Three blocks pass data through M and E, each within its own row.
  check_applied(parse_func(kSoftmaxKernel), on_loop("i", parallel), "parallel for i in 0..8");
  loop::PrimFunc gemm = parse_func(kGemmKernel);
  std::vector<loop::Expr> i = split(gemm, loop_named(gemm, "i"), {-1, 16});
  check_applied(gemm, on_loop("i.0", parallel), "parallel for i.0 in 0..4");
  check_applied(gemm, on_loop("i.1", parallel), "parallel for i.1 in 0..16");
  loop::PrimFunc fused = parse_func(kElementwiseKernel);
  fuse(fused, get_loops(fused, "add"));
  check_applied(fused, on_loop("i.j.fused", parallel), "parallel for i.j.fused in 0..768");
}

TEST_CASE("parallel refuses races and GPU loops", "[schedule]") {
  CHECK_THAT(refusal(parse_func(kRowSumKernel), on_loop("k", parallel)),
             Catch::Contains("parallel: loop k feeds block S, whose reduction variable vk is "
                             "bound to k: the threads would race on the accumulator"));
  CHECK_THAT(refusal(parse_func(kLastWins), on_loop("i", parallel)),
             Catch::Contains("block S writes S in more than one iteration"));
  CHECK_THAT(refusal(parse_func(kTranspose), on_loop("i", parallel)),
             Catch::Contains("parallel: cannot show that the iterations of loop i are "
                             "independent: block P writes T and block C reads T"));
  loop::PrimFunc gemm = parse_func(kGemmKernel);
  loop::PrimFunc outer_bound = gemm;
  bind(outer_bound, loop_named(outer_bound, "i"), "blockIdx.x");
  CHECK_THAT(refusal(outer_bound, on_loop("j", parallel)),
             Catch::Contains("parallel: loop j is inside loop i, bound to blockIdx.x"));
  CHECK_THAT(refusal(outer_bound, on_loop("i", parallel)),
             Catch::Contains("parallel: loop i is bound to blockIdx.x"));
  loop::PrimFunc inner_bound = gemm;
  bind(inner_bound, loop_named(inner_bound, "j"), "threadIdx.x");
  CHECK_THAT(refusal(inner_bound, on_loop("i", parallel)),
             Catch::Contains("parallel: loop i holds loop j, bound to threadIdx.x"));
}

TEST_CASE("bind maps loops to thread blocks and threads", "[schedule]") {
  loop::PrimFunc scale = parse_func(kScale);
  split(scale, loop_named(scale, "i"), {-1, 25});
  loop::PrimFunc bound = scale;
  bind(bound, loop_named(bound, "i.0"), "blockIdx.x");
  bind(bound, loop_named(bound, "i.1"), "threadIdx.x");
  CHECK(loop::print_func(bound) == loop::print_func(parse_func(R"(
func @scale(A: f32[100], B: f32[100]) {
  for i.0 in 0..4 bind(blockIdx.x) {
    for i.1 in 0..25 bind(threadIdx.x) {
      block B(v = spatial(100) i.0 * 25 + i.1) {
        B[v] = A[v] * 2.0
      }
    }
  }
})")));
  check_same_outputs(scale, bound);
  // Binding a loop again to its own axis changes nothing.
  loop::PrimFunc again = bound;
  bind(again, loop_named(again, "i.1"), "threadIdx.x");
  CHECK(loop::print_func(again) == loop::print_func(bound));
}

TEST_CASE("bind refuses bad axes, races and impossible nests", "[schedule]") {
  loop::PrimFunc gemm = parse_func(kGemmKernel);
  CHECK_THAT(refusal(gemm, bind_to("i", "threadIdx.w")),
             Catch::Contains("bind: 'threadIdx.w' is not a GPU axis"));
  CHECK_THAT(refusal(gemm, bind_to("k", "threadIdx.x")),
             Catch::Contains("bind: loop k feeds block C, whose reduction variable vk is bound "
                             "to k: the GPU threads would race on the accumulator"));
  CHECK_THAT(refusal(parse_func(kLastWins), bind_to("i", "blockIdx.x")),
             Catch::Contains("bind: cannot show that the iterations of loop i are independent"));
  loop::PrimFunc threads = gemm;
  bind(threads, loop_named(threads, "i"), "threadIdx.x");
  CHECK_THAT(refusal(threads, bind_to("j", "blockIdx.x")),
             Catch::Contains("bind: loop j is inside loop i, bound to threadIdx.x; it cannot be "
                             "bound to blockIdx.x"));
  CHECK_THAT(refusal(threads, bind_to("j", "threadIdx.x")),
             Catch::Contains("loop j is inside loop i, bound to threadIdx.x; it cannot be bound "
                             "to threadIdx.x"));
  CHECK_THAT(refusal(threads, bind_to("i", "threadIdx.y")),
             Catch::Contains("bind: loop i is already bound to threadIdx.x"));
  loop::PrimFunc blocks = gemm;
  bind(blocks, loop_named(blocks, "j"), "blockIdx.x");
  CHECK_THAT(refusal(blocks, bind_to("i", "threadIdx.x")),
             Catch::Contains("bind: loop i holds loop j, bound to blockIdx.x; it cannot be bound "
                             "to threadIdx.x"));
  loop::PrimFunc cpu = gemm;
  parallel(cpu, loop_named(cpu, "i"));
  CHECK_THAT(refusal(cpu, bind_to("i", "blockIdx.x")),
             Catch::Contains("bind: loop i is parallel (CPU threads)"));
}

TEST_CASE("annotate sets named hints on loops and blocks", "[schedule]") {
  loop::PrimFunc sum = parse_func(kRowSumKernel);
  loop::PrimFunc annotated = sum;
  annotate_loop(annotated, loop_named(annotated, "k"), "unroll_step", 4);
  annotate_loop(annotated, loop_named(annotated, "k"), "unroll_step", 8);
  annotate_block(annotated, "S", "tile_x", 2);
  CHECK(loop::print_func(annotated) == loop::print_func(parse_func(R"(
func @row_sum(X: f32[16,24], S: f32[16]) {
  for i in 0..16 {
    for k in 0..24 {unroll_step=8} {
      block S(vi = spatial(16) i, vk = reduce(24) k) {tile_x=2} {
        reads(X[vi, vk], S[vi]) writes(S[vi])
        init { S[vi] = 0.0 }
        S[vi] = S[vi] + X[vi, vk]
      }
    }
  }
})")));
  check_same_outputs(sum, annotated);
  for (const char* key : {"1x", "a-b", "", "a.b"}) {
    CHECK_THAT(refusal(sum, [&](loop::PrimFunc& f) { annotate_block(f, "S", key, 1); }),
               Catch::Contains("annotate_block: annotation key '" + std::string(key) +
                               "' is not a name"));
  }
  CHECK_THAT(refusal(sum, on_loop("i", [](loop::PrimFunc& f, const loop::Expr& l) {
               annotate_loop(f, l, "x y", 1);
             })),
             Catch::Contains("annotate_loop: annotation key 'x y' is not a name"));
  CHECK_THAT(refusal(sum, [](loop::PrimFunc& f) { annotate_block(f, "T", "k", 1); }),
             Catch::Contains("annotate_block: @row_sum has no block named 'T'"));
  CHECK_THAT(refusal(sum, [](loop::PrimFunc& f) {
               annotate_loop(f, loop::Var::make("z"), "k", 1);
             }),
             Catch::Contains("annotate_loop: z is not a loop of @row_sum"));
}
