// Unit tests for the vectorize-loops pass: which loops become ramps and which stay loops,
// and that the interpreter computes the same before and after on random inputs. Course
// module 3.
#include "loop_test_util.h"
#include "minic/ir/loop/interpreter.h"
#include "minic/ir/loop/parser.h"
#include "minic/ir/loop/printer.h"
#include "minic/ir/loop/visitor.h"
#include "minic/passes/loop/vectorize_loops.h"
#include "minic/passes/pass_registry.h"
#include "minic/runtime/compare.h"

#include <catch2/catch.hpp>

using namespace minic;
using namespace minic::loop;
using namespace minic::loop::test;

namespace {

int count_vectorized_loops(const PrimFunc& func) {
  struct Counter : IRVisitor {
    int loops = 0;
    void visit_For(const For* node) override {
      loops += node->for_kind == ForKind::vectorized ? 1 : 0;
      IRVisitor::visit_For(node);
    }
  } counter;
  counter.visit(func.body);
  return counter.loops;
}

// The pass on the one function of `text`; the interpreter must agree before and after on
// random inputs (small integers: exact in any order), and `vectorized_left` loops stay.
PrimFunc check_pass(const std::string& text, int vectorized_left) {
  PrimFunc before = parse_loop_module(text, "test.mloop").functions.at(0);
  PrimFunc after = vectorize_loops(before);
  INFO(print_func(after));
  CHECK(count_vectorized_loops(after) == vectorized_left);
  std::mt19937 rng(31);
  std::vector<Tensor> expected;
  for (const Buffer& param : before.params) {
    expected.push_back(small_int_tensor(param->shape, rng).cast(param->dtype));
  }
  std::vector<Tensor> actual = expected;
  std::vector<Tensor*> expected_pointers, actual_pointers;
  for (size_t i = 0; i < expected.size(); ++i) {
    expected_pointers.push_back(&expected[i]);
    actual_pointers.push_back(&actual[i]);
  }
  run_func(before, expected_pointers);
  run_func(after, actual_pointers);
  for (size_t i = 0; i < expected.size(); ++i) {
    TensorComparison comparison = compare_tensors(actual[i], expected[i], {0, 0});
    INFO(before.params[i]->name << ": " << describe(comparison));
    CHECK(comparison.ok());
  }
  return after;
}

}  // namespace

TEST_CASE("vectorize-loops turns a vectorized block into ramps and broadcasts",
          "[llvm][vectorize_loops]") {
  PrimFunc after = check_pass(R"(
func @add_relu(X: f32[1024], Y: f32[1024], Z: f32[1024]) {
  parallel for i.0 in 0..128 {
    vectorized for i.1 in 0..8 {
      block Z(v = spatial(1024) i.0 * 8 + i.1) {
        reads(X[v], Y[v]) writes(Z[v])
        Z[v] = max(X[v] + Y[v], 0.0)
      }
    }
  }
})", 0);
  CHECK(print_func(after) ==
        "func @add_relu(X: f32[1024], Y: f32[1024], Z: f32[1024]) {\n"
        "  parallel for i.0 in 0..128 {\n"
        "    Z[ramp(i.0 * 8, 1, 8)] = max(X[ramp(i.0 * 8, 1, 8)] + Y[ramp(i.0 * 8, 1, 8)], "
        "broadcast(0.0, 8))\n"
        "  }\n"
        "}\n");
}

TEST_CASE("vectorize-loops keeps strides, 2-d indices, init and scalar conditions",
          "[llvm][vectorize_loops]") {
  // A transposed read (stride 16 across lanes), a row-major 2-d write, a min of the loop
  // variable: the first two affine, the last a general vector.
  check_pass(R"(
func @transpose(A: f32[16,16], B: f32[16,16], C: i64[16,16]) {
  for i in 0..16 {
    vectorized for j in 4..+12 {
      B[i, j] = A[j, i] * 2.0 + cast<f32>(i)
      C[i, j] = min(j, 9) + floordiv(j, 3)
    }
  }
})", 0);
  // A matmul with j vectorized: the init's condition depends on k only, so it stays an if.
  PrimFunc matmul = check_pass(R"(
func @matmul(A: f32[8,4], B: f32[4,32], C: f32[8,32]) {
  for i in 0..8 {
    for k in 0..4 {
      for j.0 in 0..2 {
        vectorized for j.1 in 0..16 {
          block C(vi = spatial(8) i, vj = spatial(32) j.0 * 16 + j.1, vk = reduce(4) k) {
            init { C[vi, vj] = 0.0 }
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
          }
        }
      }
    }
  }
})", 0);
  CHECK_THAT(print_func(matmul), Catch::Contains("if (k == 0) {"));
  CHECK_THAT(print_func(matmul), Catch::Contains("broadcast(A[i, k], 16)"));
}

TEST_CASE("vectorize-loops leaves loops whose lanes are not independent or not affine",
          "[llvm][vectorize_loops]") {
  // A reduction over the vector loop: every lane stores to the same element.
  check_pass(R"(
func @sum(A: f32[4,8], S: f32[4]) {
  for i in 0..4 {
    vectorized for k in 0..8 {
      S[i] = S[i] + A[i, k]
    }
  }
})", 1);
  // Lane k reads what lane k - 1 wrote.
  check_pass(R"(
func @scan(A: f32[9]) {
  vectorized for k in 0..8 {
    A[k + 1] = A[k + 1] + A[k]
  }
})", 1);
  // An index that is not affine in the loop (a gather: the LLVM vectoriser's business).
  check_pass(R"(
func @halve(A: f32[16], B: f32[16]) {
  vectorized for k in 0..16 {
    B[k] = A[floordiv(k, 2)]
  }
})", 1);
  // A guarded tail: the predicate depends on the loop.
  check_pass(R"(
func @tail(A: f32[10], B: f32[10]) {
  for i in 0..2 {
    vectorized for j in 0..8 {
      block B(v = spatial(10) i * 8 + j) where (i * 8 + j < 10) {
        B[v] = A[v]
      }
    }
  }
})", 1);
  // A select guarding a load on a vector condition.
  check_pass(R"(
func @shift(A: f32[8], B: f32[8]) {
  vectorized for j in 0..8 {
    B[j] = select(j < 7, A[j + 1], 0.0)
  }
})", 1);
}

TEST_CASE("vectorize-loops leaves a loop whose refused select sits inside a call, a cast or "
          "another select", "[llvm][vectorize_loops]") {
  // The select reads memory on a vector condition, so it stays scalar, and so must the
  // call, the cast and the select around it (not a vector node with an operand missing).
  check_pass(R"(
func @abs_sqrt(N: f32[16], Q: f32[16]) {
  vectorized for j in 0..16 {
    Q[j] = sqrt(select(N[j] < 0.0, 0.0 - N[j], N[j]))
  }
})", 1);
  check_pass(R"(
func @abs_cast(N: f32[16], Q: i32[16]) {
  vectorized for j in 0..16 {
    Q[j] = cast<i32>(select(N[j] < 0.0, 0.0 - N[j], N[j]))
  }
})", 1);
  check_pass(R"(
func @nested(N: f32[16], Q: f32[16]) {
  vectorized for j in 0..16 {
    Q[j] = select(j < 8, select(N[j] < 0.0, 0.0 - N[j], N[j]), 1.0)
  }
})", 1);
}

TEST_CASE("vectorize-loops is registered as a loop pass", "[llvm][vectorize_loops]") {
  CHECK(PassRegistry::find(PassKind::loop, "vectorize-loops") != nullptr);
}
