// Every refusal of compute_at, reverse_compute_at and decompose_reduction (and the
// shared predicate check of cache_write): one small kernel per named precondition, and
// the exact message. Course module 4.
#include "schedule_refusal_util.h"

using namespace minic;
using namespace minic::schedule;
using namespace minic::schedule::test;

namespace {

// Producer B under loop p, consumer C under loop i; B and E allocated.
std::string chain(const std::string& producer, const std::string& consumer) {
  return "func @f(A: f32[4], I: i64[4], C: f32[4]) {\n"
         "  alloc B: f32[4] {\n"
         "    alloc E: f32[4] {\n"
         "      for p in 0..4 {\n" + producer + "      }\n"
         "      for i in 0..4 {\n" + consumer + "      }\n"
         "    }\n"
         "  }\n"
         "}\n";
}

const char* const kProducer = "block B(v = spatial(4) p) { B[v] = A[v] * 2.0 }\n";
const char* const kConsumer = "block C(v = spatial(4) i) { C[v] = B[v] + 1.0 }\n";

const std::vector<RefusalCase> kComputeAtRefusals = {
    {"nest_is_before_loop", chain(kProducer, kConsumer), "C", "p",
     "compute_at: loop p comes before block C; use reverse_compute_at to move a consumer"},
    {"is_one_store",
     chain("block B(v = spatial(4) p) {\n B[v] = A[v]\n B[v] = B[v] * 2.0\n }\n",
           kConsumer),
     "B", "i", "compute_at: block B is not one store of an expression (buffer[...] = expr)"},
    {"stores_one_element",
     chain("block B(v = spatial(4) p) { B[3 - v] = A[v] }\n", kConsumer), "B", "i",
     "compute_at: block B stores to B at indices that are not its spatial iteration "
     "variables, each once"},
    {"is_not_parameter",
     R"(func @f(A: f32[4], B: f32[4], C: f32[4]) {
  for p in 0..4 {
    block B(v = spatial(4) p) { B[v] = A[v] * 2.0 }
  }
  for i in 0..4 {
    block C(v = spatial(4) i) { C[v] = B[v] + 1.0 }
  }
})",
     "B", "i", "compute_at: block B writes B, a parameter of @f; the function's outputs stay"},
    {"writes_one_buffer",
     chain("block B(v = spatial(4) p) {\n writes(B[v], E[v])\n B[v] = A[v]\n }\n",
           kConsumer),
     "B", "i", "compute_at: block B writes more than one buffer"},
    {"recomputes_the_same",
     chain("block B(v = spatial(4) p) { B[v] = B[v] + A[v] }\n", kConsumer), "B", "i",
     "compute_at: block B reads B, the buffer it writes, without an init; computing an "
     "element twice would change it"},
    {"guards_only_its_domain",
     chain("block B(v = spatial(4) p) where (p < 2) { B[v] = A[v] }\n", kConsumer),
     "B", "i",
     "compute_at: block B has the predicate p < 2, which is more than a guard of its domain"},
    {"is_only_writer",
     chain(kProducer, "block C(v = spatial(4) i) { C[v] = B[v] + 1.0 }\n"
                           "block B2(w = spatial(4) i) { B[w] = 0.0 }\n"),
     "B", "i", "compute_at: block B is not the only writer of B: block B2 writes it too"},
    {"readers_are_under_loop",
     R"(func @f(A: f32[4], C: f32[4], D: f32[4]) {
  alloc B: f32[4] {
    for p in 0..4 {
      block B(v = spatial(4) p) { B[v] = A[v] * 2.0 }
    }
    for i in 0..4 {
      block C(v = spatial(4) i) { C[v] = B[v] + 1.0 }
    }
    for j in 0..4 {
      block D(v = spatial(4) j) { D[v] = B[v] }
    }
  }
})",
     "B", "i", "compute_at: block D reads B outside loop i"},
    {"inputs_unchanged_until_loop",
     R"(func @f(A: f32[4], C: f32[4]) {
  alloc B: f32[4] {
    for p in 0..4 {
      block B(v = spatial(4) p) { B[v] = A[v] * 2.0 }
    }
    for j in 0..4 {
      block W(v = spatial(4) j) { A[v] = 0.0 }
    }
    for i in 0..4 {
      block C(v = spatial(4) i) { C[v] = B[v] + 1.0 }
    }
  }
})",
     "B", "i",
     "compute_at: block W writes A, which block B reads; moving B under loop i would change "
     "what it reads"},
    {"is_read_under_loop",
     chain(kProducer, "block C(v = spatial(4) i) { C[v] = A[v] + 1.0 }\n"), "B", "i",
     "compute_at: no block under loop i reads B, the output of block B"},
    {"region_of (unbounded)",
     chain(kProducer, "for j in 0..4 {\n"
                      " block C(v = spatial(4) i, w = spatial(4) j) { C[v] = B[I[w]] }\n"
                      "}\n"),
     "B", "i", "compute_at: cannot bound the index I[j] of buffer B"},
};

const std::vector<RefusalCase> kReverseComputeAtRefusals = {
    {"nest_is_after_loop", chain(kProducer, kConsumer), "B", "i",
     "reverse_compute_at: loop i comes after block B; use compute_at to move a producer"},
    {"reductions_run_whole",
     R"(func @f(A: f32[4], C: f32[4]) {
  alloc B: f32[4] {
    for p in 0..4 {
      block B(v = spatial(4) p) { B[v] = A[v] * 2.0 }
    }
    for i in 0..4 {
      for k in 0..4 {
        block C(v = spatial(4) i, r = reduce(4) k) {
          init { C[v] = 0.0 }
          C[v] = C[v] + B[r]
        }
      }
    }
  }
})",
     "C", "p",
     "reverse_compute_at: block C's reduction variable r would not run over its whole extent"},
    {"recomputes_the_same",
     R"(func @f(A: f32[4], C: f32[4]) {
  alloc B: f32[4] {
    for p in 0..4 {
      block B(v = spatial(4) p) { B[v] = A[v] * 2.0 }
    }
    for i in 0..4 {
      for k in 0..4 {
        block C(v = spatial(4) i, r = reduce(4) k) {
          init { C[v] = 0.0 }
          C[v] = C[0] + B[v]
        }
      }
    }
  }
})",
     "C", "p",
     "reverse_compute_at: block C is a reduction that is not one store reading only the "
     "element it writes"},
    {"reads_no_output",
     chain(kProducer, "block C(v = spatial(4) i) { C[v] = C[v] + B[v] }\n"), "C",
     "p", "reverse_compute_at: block C reads C, the buffer it writes"},
    {"guards_only_its_domain",
     chain(kProducer, "block C(v = spatial(4) i) where (i < 2) { C[v] = B[v] }\n"),
     "C", "p",
     "reverse_compute_at: block C has the predicate i < 2, which is more than a guard of its "
     "domain"},
    {"has_one_input_from_loop (a use of the output)",
     chain("block B(v = spatial(4) p) { B[v] = A[v] * 2.0 }\n"
           "block W(w = spatial(4) p) { E[w] = C[w] }\n",
           kConsumer),
     "C", "p", "reverse_compute_at: block W uses C, which block C writes"},
    {"has_one_input_from_loop (written outside the loop)",
     R"(func @f(A: f32[4], C: f32[4]) {
  alloc B: f32[4] {
    for p in 0..4 {
      block B(v = spatial(4) p) { B[v] = A[v] * 2.0 }
    }
    for j in 0..4 {
      block W(v = spatial(4) j) { A[v] = 0.0 }
    }
    for i in 0..4 {
      block C(v = spatial(4) i) { C[v] = B[v] + A[v] }
    }
  }
})",
     "C", "p", "reverse_compute_at: block W writes A, which block C reads, outside loop p"},
    {"has_one_input_from_loop (two buffers)",
     chain("block B(v = spatial(4) p) { B[v] = A[v] }\n"
           "block E(w = spatial(4) p) { E[w] = A[w] }\n",
           "block C(v = spatial(4) i) { C[v] = B[v] + E[v] }\n"),
     "C", "p", "reverse_compute_at: block C reads two buffers written under loop p: B and E"},
    {"has_one_input_from_loop (none)",
     chain(kProducer, "block C(v = spatial(4) i) { C[v] = A[v] + 1.0 }\n"), "C", "p",
     "reverse_compute_at: no block under loop p writes a buffer that block C reads"},
    {"is_written_under_loop",
     chain("block B(v = spatial(4) p) {\n writes(B[v], E[v])\n E[v] = A[v]\n }\n",
           kConsumer),
     "C", "p", "reverse_compute_at: nothing under loop p stores to B"},
    {"loads_at_iteration_vars",
     chain(kProducer, "block C(v = spatial(4) i) { C[v] = B[3 - v] }\n"), "C", "p",
     "reverse_compute_at: block C reads B at indices that are not its iteration variables"},
    {"ranges_cover_domain",
     R"(func @f(A: f32[4], C: f32[4]) {
  alloc B: f32[4] {
    for p in 0..2 {
      block B(v = spatial(4) p) { B[v] = A[v] * 2.0 }
    }
    for i in 0..4 {
      block C(v = spatial(4) i) { C[v] = B[v] + 1.0 }
    }
  }
})",
     "C", "p",
     "reverse_compute_at: cannot prove that the regions of B written in the iterations of "
     "loop p cover every iteration of block C"},
};

// A row sum: S[vi] = sum over vk of X[vi, vk].
std::string row_sum(const std::string& loops_and_block) {
  return "func @f(X: f32[4,4], S: f32[4], T: f32[4]) {\n" + loops_and_block + "}\n";
}

const std::vector<RefusalCase> kDecomposeReductionRefusals = {
    {"has_init",
     row_sum("for i in 0..4 {\n block S(vi = spatial(4) i) { S[vi] = X[vi, 0] }\n}\n"),
     "S", "i", "decompose_reduction: block S has no init"},
    {"is_loop_around",
     row_sum("for i in 0..4 {\n for k in 0..4 {\n"
             "  block S(vi = spatial(4) i, vk = reduce(4) k) {\n"
             "   init { S[vi] = 0.0 }\n S[vi] = S[vi] + X[vi, vk]\n }\n }\n}\n"
             "for j in 0..4 {\n block T(v = spatial(4) j) { T[v] = S[v] }\n}\n"),
     "S", "j", "decompose_reduction: loop j is not a loop around block S"},
    {"init_runs_once (inside a reduction loop)",
     row_sum("for k in 0..4 {\n for i in 0..4 {\n"
             "  block S(vi = spatial(4) i, vk = reduce(4) k) {\n"
             "   init { S[vi] = 0.0 }\n S[vi] = S[vi] + X[vi, vk]\n }\n }\n}\n"),
     "S", "i",
     "decompose_reduction: loop i is inside the reduction loop k of block S; the init would "
     "run in each of its iterations"},
    {"init_runs_once (a loop of both kinds)",
     row_sum("for f in 0..16 {\n"
             "  block S(vi = spatial(4) floordiv(f, 4), vk = reduce(4) floormod(f, 4)) {\n"
             "   init { S[vi] = 0.0 }\n S[vi] = S[vi] + X[vi, vk]\n }\n}\n"),
     "S", "f", "decompose_reduction: loop f feeds both spatial and reduction variables of block S"},
    {"reduction_guards_only_domain",
     row_sum("for i in 0..4 {\n for k in 0..4 {\n"
             "  block S(vi = spatial(4) i, vk = reduce(4) k) where (k < 2) {\n"
             "   init { S[vi] = 0.0 }\n S[vi] = S[vi] + X[vi, vk]\n }\n }\n}\n"),
     "S", "i",
     "decompose_reduction: block S has the predicate k < 2 on its reduction loops, which is "
     "more than a guard of its domain"},
};

}  // namespace

TEST_CASE("compute_at: each named precondition refuses with its message", "[schedule_refusal]") {
  check_refusals(kComputeAtRefusals, [](loop::PrimFunc& func, const std::string& block,
                                        const loop::Expr& loop) { compute_at(func, block, loop); });
}

TEST_CASE("reverse_compute_at: each named precondition refuses with its message",
          "[schedule_refusal]") {
  check_refusals(kReverseComputeAtRefusals,
                 [](loop::PrimFunc& func, const std::string& block, const loop::Expr& loop) {
                   reverse_compute_at(func, block, loop);
                 });
}

TEST_CASE("decompose_reduction: each named precondition refuses with its message",
          "[schedule_refusal]") {
  check_refusals(kDecomposeReductionRefusals,
                 [](loop::PrimFunc& func, const std::string& block, const loop::Expr& loop) {
                   decompose_reduction(func, block, loop);
                 });
}

TEST_CASE("cache_write refuses a predicate that is more than a guard", "[schedule_refusal]") {
  std::vector<RefusalCase> cases = {
      {"guards_only_its_domain",
       row_sum("for i in 0..4 {\n"
               " block S(vi = spatial(4) i) where (i < 2) {\n"
               "  writes(S[vi])\n  S[vi] = X[vi, 0]\n }\n"
               "}\n"),
       "S", "",
       "cache_write: block S has the predicate i < 2, which is more than a guard of its "
       "domain"}};
  check_refusals(cases, [](loop::PrimFunc& func, const std::string& block, const loop::Expr&) {
    cache_write(func, block, 0, loop::MemoryScope::local);
  });
}
