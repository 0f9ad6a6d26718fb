// Kernels for the loop pass tests, as loop IR text, and the differential check every pass
// test uses: run a function before and after a pass on the same random inputs, and every
// buffer must come out identical. Also a census of a function's statements. Course module 3.
#pragma once

#include "loop_test_util.h"
#include "minic/ir/loop/interpreter.h"
#include "minic/ir/loop/parser.h"
#include "minic/ir/loop/printer.h"
#include "minic/ir/loop/verifier.h"
#include "minic/ir/loop/visitor.h"
#include "minic/passes/loop/lower_blocks.h"

#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace minic::loop::test {

// C = A x B, the course's matmul, small.
inline const char* const kMatmul = R"(
func @matmul(A: f32[6,5], B: f32[5,7], C: f32[6,7]) {
  for i in 0..6 {
    for j in 0..7 {
      for k in 0..5 {
        block C(vi = spatial(6) i, vj = spatial(7) j, vk = reduce(5) k) {
          reads(A[vi, vk], B[vk, vj], C[vi, vj]) writes(C[vi, vj])
          init { C[vi, vj] = 0.0 }
          C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        }
      }
    }
  }
}
)";

// B = A * 2 over 100 elements, split by 32 with a guard: the tail of a split.
inline const char* const kGuardedTail = R"(
func @scale(A: f32[100], B: f32[100]) {
  for io in 0..4 {
    for ii in 0..32 {
      block B(v = spatial(100) io * 32 + ii) where (io * 32 + ii < 100) {
        reads(A[v]) writes(B[v])
        B[v] = A[v] * 2.0
      }
    }
  }
}
)";

// The same tail after lower-blocks: an `if` in place of the predicate, over two dimensions.
inline const char* const kGuardedTail2d = R"(
func @add(A: f32[3,50], B: f32[3,50], C: f32[3,50]) {
  for r in 0..3 {
    for jo in 0..4 {
      for ji in 0..16 {
        if (jo * 16 + ji < 50) {
          C[r, jo * 16 + ji] = A[r, jo * 16 + ji] + B[r, jo * 16 + ji]
        }
      }
    }
  }
}
)";

// A 3x3 convolution with padding 1, the padding as a select that guards the load.
inline const char* const kConv = R"(
func @conv(X: f32[1,2,5,5], W: f32[3,2,3,3], Y: f32[1,3,5,5]) {
  for f in 0..3 {
    for y in 0..5 {
      for x in 0..5 {
        for c in 0..2 {
          for ky in 0..3 {
            for kx in 0..3 {
              block Y(vf = spatial(3) f, vy = spatial(5) y, vx = spatial(5) x,
                      vc = reduce(2) c, vky = reduce(3) ky, vkx = reduce(3) kx) {
                init { Y[0, vf, vy, vx] = 0.0 }
                Y[0, vf, vy, vx] = Y[0, vf, vy, vx] +
                    select(vy + vky >= 1 && vy + vky < 6 && vx + vkx >= 1 && vx + vkx < 6,
                           X[0, vc, vy + vky - 1, vx + vkx - 1], 0.0) * W[vf, vc, vky, vkx]
              }
            }
          }
        }
      }
    }
  }
}
)";

// Softmax of each row: a root block that allocates the row maxima and sums, then three
// blocks (max, sum of exp, divide).
inline const char* const kSoftmax = R"(
func @softmax(X: f32[4,8], Y: f32[4,8]) {
  block root() {
    alloc_buffer M: f32[4]
    alloc_buffer S: f32[4]
    for i in 0..4 {
      for k in 0..8 {
        block row_max(vi = spatial(4) i, vk = reduce(8) k) {
          init { M[vi] = X[vi, 0] }
          M[vi] = max(M[vi], X[vi, vk])
        }
      }
    }
    for i in 0..4 {
      for k in 0..8 {
        block row_sum(vi = spatial(4) i, vk = reduce(8) k) {
          init { S[vi] = 0.0 }
          S[vi] = S[vi] + exp(X[vi, vk] - M[vi])
        }
      }
    }
    for i in 0..4 {
      for j in 0..8 {
        block normalise(vi = spatial(4) i, vj = spatial(8) j) {
          Y[vi, vj] = exp(X[vi, vj] - M[vi]) / S[vi]
        }
      }
    }
  }
}
)";

// Unrolled loops, one inside another, one of them around a block.
inline const char* const kUnrolled = R"(
func @transpose_add(A: f32[4,4], B: f32[4,4]) {
  for i in 0..4 {
    unrolled for j in 0..4 {
      B[i, j] = A[i, j] + A[j, i]
    }
  }
  unrolled for i in 0..2 {
    unrolled for j in 0..3 {
      block B(vi = spatial(4) i * 2 + 1, vj = spatial(3) j) {
        B[vi, vj] = B[vi, vj] * 2.0
      }
    }
  }
}
)";

// Local allocations one after another in a loop body: storage-rewrite shares them.
inline const char* const kLocals = R"(
func @locals(A: f32[8,4], B: f32[8,4]) {
  for i in 0..8 {
    alloc T: f32[4] local {
      for j in 0..4 {
        T[j] = A[i, j] * 2.0
      }
      for j in 0..4 {
        B[i, j] = T[j] + 1.0
      }
    }
    alloc U: f32[2] local {
      for j in 0..2 {
        U[j] = A[i, j + 2] - 1.0
      }
      for j in 0..2 {
        B[i, j] = B[i, j] + U[j]
      }
    }
    alloc V: f32[3] local {
      for j in 0..3 {
        V[j] = B[i, j] * B[i, j]
      }
      B[i, 3] = V[0] + V[1] + V[2]
    }
  }
}
)";

// Every kernel above, by name, for tests that run a pass on all of them.
inline std::vector<std::pair<std::string, const char*>> all_pass_kernels() {
  return {{"matmul", kMatmul},   {"guarded tail", kGuardedTail},
          {"guarded tail 2d", kGuardedTail2d}, {"conv", kConv},
          {"softmax", kSoftmax}, {"unrolled", kUnrolled},
          {"locals", kLocals}};
}

// The first function of `text`.
inline PrimFunc parse_func(const std::string& text) {
  return parse_loop_module(text, "<test>").functions.at(0);
}

// Runs `before` and `after` on the same random small-integer inputs (exact in f32 whatever
// the order of operations), a parameter of `after` taking the same elements viewed in its
// own shape (flatten-buffers makes them 1-D), and requires identical buffers afterwards.
inline void require_same_results(const PrimFunc& before, const PrimFunc& after,
                                 uint32_t seed = 1) {
  verify_func(after);
  REQUIRE(before.params.size() == after.params.size());
  std::mt19937 rng(seed);
  std::vector<Tensor> expected;
  std::vector<Tensor> actual;
  for (size_t p = 0; p < before.params.size(); ++p) {
    Tensor tensor = small_int_tensor(before.params[p]->shape, rng);
    expected.push_back(tensor);
    actual.push_back(tensor.reshaped(after.params[p]->shape));
  }
  std::vector<Tensor*> expected_args;
  std::vector<Tensor*> actual_args;
  for (size_t p = 0; p < expected.size(); ++p) {
    expected_args.push_back(&expected[p]);
    actual_args.push_back(&actual[p]);
  }
  run_func(before, expected_args);
  run_func(after, actual_args);
  for (size_t p = 0; p < expected.size(); ++p) {
    INFO("parameter " << before.params[p]->name << " of @" << before.name << " after:\n"
                      << print_func(after));
    REQUIRE(expected[p].reshaped(after.params[p]->shape).identical(actual[p]));
  }
}

// How many nodes of each statement kind a function has, and the ranks of the buffers its
// loads, stores and allocations name.
class Census : public IRVisitor {
 public:
  std::map<StmtKind, int> stmts;
  std::map<ForKind, int> loops;
  std::set<int64_t> ranks;

  void visit_For(const For* node) override {
    ++stmts[StmtKind::For];
    ++loops[node->for_kind];
    IRVisitor::visit_For(node);
  }
  void visit_Allocate(const Allocate* node) override {
    ++stmts[StmtKind::Allocate];
    ranks.insert(node->buffer->rank());
    IRVisitor::visit_Allocate(node);
  }
#define MINIC_COUNT_STMT(Node)                  \
  void visit_##Node(const Node* node) override { \
    ++stmts[StmtKind::Node];                     \
    IRVisitor::visit_##Node(node);               \
  }
  MINIC_COUNT_STMT(Block)
  MINIC_COUNT_STMT(Seq)
  MINIC_COUNT_STMT(IfThenElse)
  MINIC_COUNT_STMT(Evaluate)
#undef MINIC_COUNT_STMT
  void visit_Load(const Load* node) override {
    ranks.insert(node->buffer->rank());
    IRVisitor::visit_Load(node);
  }
  void visit_Store(const Store* node) override {
    ++stmts[StmtKind::Store];
    ranks.insert(node->buffer->rank());
    IRVisitor::visit_Store(node);
  }
};

inline Census census(const PrimFunc& func) {
  Census counter;
  counter.visit(func.body);
  return counter;
}

// lower-blocks, then `pass`, on every test kernel: the same results as the kernel itself.
template <typename Pass>
void check_after_lowering(Pass pass) {
  for (const auto& [name, text] : all_pass_kernels()) {
    INFO("kernel " << name);
    PrimFunc func = parse_func(text);
    PrimFunc result = pass(lower_blocks(func));
    require_same_results(func, result, 11);
  }
}

}  // namespace minic::loop::test
