// Every refusal of compute_inline and reverse_compute_inline: one small kernel per named
// precondition, and the exact message. Course module 4.
#include "schedule_refusal_util.h"

using namespace minic;
using namespace minic::schedule;
using namespace minic::schedule::test;

namespace {

// The shape of most kernels below: producer B, consumer C, B allocated.
//   alloc B { for p { block B { B[v] = A[v] * 2.0 } }  for i { block C { C[v] = B[v] + 1.0 } } }
std::string chain(const std::string& producer, const std::string& consumer) {
  return "func @f(A: f32[4], C: f32[4]) {\n"
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

const std::vector<RefusalCase> kComputeInlineRefusals = {
    {"is_one_store",
     chain("block B(v = spatial(4) p) {\n B[v] = A[v]\n B[v] = B[v] * 2.0\n }\n",
           kConsumer),
     "B", "", "compute_inline: block B is not one store of an expression (buffer[...] = expr)"},
    {"is_not_reduction (variable)",
     R"(func @f(A: f32[4], C: f32[4]) {
  alloc B: f32[4] {
    for p in 0..4 {
      for k in 0..4 {
        block B(v = spatial(4) p, r = reduce(4) k) {
          init { B[v] = 0.0 }
          B[v] = B[v] + A[r]
        }
      }
    }
    for i in 0..4 {
      block C(v = spatial(4) i) { C[v] = B[v] + 1.0 }
    }
  }
})",
     "B", "", "compute_inline: block B is a reduction (variable r)"},
    {"is_not_reduction (init)",
     chain("block B(v = spatial(4) p) {\n init { B[v] = 0.0 }\n B[v] = A[v]\n }\n",
           kConsumer),
     "B", "", "compute_inline: block B is a reduction (it has an init)"},
    {"stores_whole_buffer (indices)",
     chain("block B(v = spatial(4) p) { B[3 - v] = A[v] }\n", kConsumer), "B", "",
     "compute_inline: block B stores to B at indices that are not its iteration variables, "
     "each once"},
    {"stores_whole_buffer (part)",
     R"(func @f(A: f32[4], C: f32[4]) {
  alloc B: f32[4] {
    for p in 0..2 {
      block B(v = spatial(2) p) { B[v] = A[v] }
    }
    for i in 0..4 {
      block C(v = spatial(4) i) { C[v] = B[v] + 1.0 }
    }
  }
})",
     "B", "", "compute_inline: block B writes only part of B (dimension 0)"},
    {"is_not_parameter",
     R"(func @f(A: f32[4], B: f32[4], C: f32[4]) {
  for p in 0..4 {
    block B(v = spatial(4) p) { B[v] = A[v] * 2.0 }
  }
  for i in 0..4 {
    block C(v = spatial(4) i) { C[v] = B[v] + 1.0 }
  }
})",
     "B", "", "compute_inline: block B writes B, a parameter of @f; the function's outputs stay"},
    {"reads_no_output",
     chain("block B(v = spatial(4) p) { B[v] = B[v] + A[v] }\n", kConsumer), "B", "",
     "compute_inline: block B reads B, the buffer it writes"},
    {"allocates_nothing",
     chain("block B(v = spatial(4) p) {\n alloc_buffer T: f32[1]\n B[v] = A[v]\n }\n",
           kConsumer),
     "B", "", "compute_inline: block B allocates buffers of its own"},
    {"guards_only_its_domain",
     chain("block B(v = spatial(4) p) where (p < 2) { B[v] = A[v] }\n", kConsumer),
     "B", "",
     "compute_inline: block B has the predicate p < 2, which is more than a guard of its "
     "domain"},
    {"is_only_writer",
     chain(kProducer, "block C(v = spatial(4) i) { C[v] = B[v] + 1.0 }\n"
                           "block B2(w = spatial(4) i) { B[w] = 0.0 }\n"),
     "B", "", "compute_inline: block B is not the only writer of B: block B2 writes it too"},
    {"inputs_are_final",
     chain(kProducer, "block C(v = spatial(4) i) { C[v] = B[v] + 1.0 }\n"
                           "block W(w = spatial(4) i) { A[w] = 0.0 }\n"),
     "B", "",
     "compute_inline: block W writes A, which block B reads; its value could change before "
     "the uses of B"},
    {"nest_is_in_sequence",
     R"(func @f(A: f32[4]) {
  alloc B: f32[4] {
    for p in 0..4 {
      block B(v = spatial(4) p) { B[v] = A[v] }
    }
  }
})",
     "B", "",
     "compute_inline: the loops of block B are not in a sequence with other statements"},
    {"is_gone",
     R"(func @f(A: f32[4], C: f32[4]) {
  alloc B: f32[4] {
    for p in 0..4 {
      block B(v = spatial(4) p) { B[v] = A[v] * 2.0 }
    }
    for i in 0..4 {
      block C(v = spatial(4) i) { C[v] = B[v] + 1.0 }
    }
    B[0] = 1.0
  }
})",
     "B", "", "compute_inline: B is still used outside blocks after inlining block B"},
};

const std::vector<RefusalCase> kReverseComputeInlineRefusals = {
    {"is_one_store",
     chain(kProducer,
           "block C(v = spatial(4) i) {\n C[v] = B[v]\n C[v] = C[v] + 1.0\n}\n"),
     "C", "",
     "reverse_compute_inline: block C is not one store of an expression (buffer[...] = expr)"},
    {"is_not_reduction",
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
     "C", "", "reverse_compute_inline: block C is a reduction (variable r)"},
    {"guards_only_its_domain",
     chain(kProducer, "block C(v = spatial(4) i) where (i < 2) { C[v] = B[v] }\n"),
     "C", "",
     "reverse_compute_inline: block C has the predicate i < 2, which is more than a guard of "
     "its domain"},
    {"reads_no_output",
     chain(kProducer, "block C(v = spatial(4) i) { C[v] = C[v] + B[v] }\n"), "C", "",
     "reverse_compute_inline: block C reads C, the buffer it writes"},
    {"has_one_producer (two)",
     chain("block B(v = spatial(4) p) { B[v] = A[v] }\n"
           "block E(w = spatial(4) p) { E[w] = A[w] }\n",
           "block C(v = spatial(4) i) { C[v] = B[v] + E[v] }\n"),
     "C", "", "reverse_compute_inline: block C reads what two blocks write: B and E"},
    {"has_one_producer (none)",
     chain(kProducer, "block C(v = spatial(4) i) { C[v] = A[v] + 1.0 }\n"), "C", "",
     "reverse_compute_inline: no block writes what block C reads"},
    {"producer_is_final",
     R"(func @f(A: f32[4], C: f32[4]) {
  alloc B: f32[4] {
    for p in 0..4 {
      for k in 0..4 {
        block B(v = spatial(4) p, r = reduce(4) k) {
          init { B[v] = 0.0 }
          B[v] = B[v] + A[r]
        }
      }
    }
    for i in 0..4 {
      block C(v = spatial(4) i) { C[v] = B[v] + 1.0 }
    }
  }
})",
     "C", "",
     "reverse_compute_inline: the producer B of block C is a reduction; its output is final "
     "only after its last step"},
    {"is_one_store (producer)",
     chain("block B(v = spatial(4) p) {\n B[v] = A[v]\n B[v] = B[v] * 2.0\n }\n",
           kConsumer),
     "C", "",
     "reverse_compute_inline: block B is not one store of an expression (buffer[...] = expr)"},
    {"stores_whole_buffer (producer)",
     chain("block B(v = spatial(4) p) { B[3 - v] = A[v] }\n", kConsumer), "C", "",
     "reverse_compute_inline: block B stores to B at indices that are not its iteration "
     "variables, each once"},
    {"writes_one_buffer (producer)",
     chain("block B(v = spatial(4) p) {\n writes(B[v], E[v])\n B[v] = A[v]\n }\n",
           kConsumer),
     "C", "", "reverse_compute_inline: block B writes more than one buffer"},
    {"is_not_parameter",
     R"(func @f(A: f32[4], B: f32[4], C: f32[4]) {
  for p in 0..4 {
    block B(v = spatial(4) p) { B[v] = A[v] * 2.0 }
  }
  for i in 0..4 {
    block C(v = spatial(4) i) { C[v] = B[v] + 1.0 }
  }
})",
     "C", "",
     "reverse_compute_inline: block B writes B, a parameter of @f; the function's outputs "
     "stay"},
    {"loads_whole_buffer (different indices)",
     chain(kProducer, "block C(v = spatial(4) i) { C[v] = B[v] + B[3 - v] }\n"), "C",
     "", "reverse_compute_inline: block C reads B at different indices"},
    {"loads_whole_buffer (indices)",
     chain(kProducer, "block C(v = spatial(4) i) { C[v] = B[3 - v] }\n"), "C", "",
     "reverse_compute_inline: block C reads B at indices that are not its iteration "
     "variables (or row-major combinations of them), each once"},
    {"loads_whole_buffer (a variable left out)",
     R"(func @f(A: f32[4], C: f32[4,2]) {
  alloc B: f32[4] {
    for p in 0..4 {
      block B(v = spatial(4) p) { B[v] = A[v] * 2.0 }
    }
    for i in 0..4 {
      for j in 0..2 {
        block C(v = spatial(4) i, u = spatial(2) j) { C[v, u] = B[v] }
      }
    }
  }
})",
     "C", "", "reverse_compute_inline: block C reads B at indices that leave out one of its "
     "iteration variables"},
    {"loads_whole_buffer (part)",
     R"(func @f(A: f32[4], C: f32[4]) {
  alloc B: f32[4] {
    for p in 0..4 {
      block B(v = spatial(4) p) { B[v] = A[v] * 2.0 }
    }
    for i in 0..2 {
      block C(v = spatial(2) i) { C[v] = B[v] }
    }
  }
})",
     "C", "", "reverse_compute_inline: block C reads only part of B (dimension 0)"},
    {"writes_one_buffer (consumer)",
     chain(kProducer,
           "block C(v = spatial(4) i) {\n writes(C[v], E[v])\n C[v] = B[v]\n}\n"),
     "C", "", "reverse_compute_inline: block C writes more than one buffer"},
    {"nothing_between (order)",
     R"(func @f(A: f32[4], C: f32[4]) {
  alloc B: f32[4] {
    for i in 0..4 {
      block C(v = spatial(4) i) { C[v] = B[v] + 1.0 }
    }
    for p in 0..4 {
      block B(v = spatial(4) p) { B[v] = A[v] * 2.0 }
    }
  }
})",
     "C", "", "reverse_compute_inline: block C comes before its producer B"},
    {"nothing_between (another reader)",
     chain(kProducer, "block C(v = spatial(4) i) { C[v] = B[v] + 1.0 }\n"
                           "block D(w = spatial(4) i) { E[w] = B[w] }\n"),
     "C", "", "reverse_compute_inline: block D also reads B"},
    {"nothing_between (a use between)",
     chain("block B(v = spatial(4) p) { B[v] = A[v] * 2.0 }\n"
           "block W(w = spatial(4) p) { E[w] = C[w] }\n",
           kConsumer),
     "C", "",
     "reverse_compute_inline: block W uses C or what block C reads between the blocks B and "
     "C"},
    {"is_gone",
     R"(func @f(A: f32[4], C: f32[4]) {
  alloc B: f32[4] {
    for p in 0..4 {
      block B(v = spatial(4) p) { B[v] = A[v] * 2.0 }
    }
    for i in 0..4 {
      block C(v = spatial(4) i) { C[v] = B[v] + 1.0 }
    }
    C[0] = B[0]
  }
})",
     "C", "", "reverse_compute_inline: B is still used outside blocks after folding block C"},
};

}  // namespace

TEST_CASE("compute_inline: each named precondition refuses with its message",
          "[schedule_refusal]") {
  check_refusals(kComputeInlineRefusals, [](loop::PrimFunc& func, const std::string& block,
                                            const loop::Expr&) { compute_inline(func, block); });
}

TEST_CASE("reverse_compute_inline: each named precondition refuses with its message",
          "[schedule_refusal]") {
  check_refusals(kReverseComputeInlineRefusals,
                 [](loop::PrimFunc& func, const std::string& block, const loop::Expr&) {
                   reverse_compute_inline(func, block);
                 });
}
