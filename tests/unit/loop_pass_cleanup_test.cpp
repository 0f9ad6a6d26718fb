// Unit tests for the cleanup loop passes, remove-no-ops and storage-rewrite, and for every
// loop pass of the tree run one after another, each against the interpreter on the test
// kernels. Course module 3.
#include "loop_pass_kernels.h"
#include "pass_sources.h"
#include "minic/passes/loop/flatten_buffers.h"
#include "minic/passes/loop/remove_no_ops.h"
#include "minic/passes/loop/storage_rewrite.h"
#include "minic/passes/pass_manager.h"

#include <catch2/catch.hpp>

using namespace minic;
using namespace minic::loop;
using namespace minic::loop::test;

TEST_CASE("remove-no-ops: statements that do nothing", "[loop_pass]") {
  SECTION("empty loops, self-copies, empty ifs, pure evaluates, unused allocations") {
    PrimFunc func = parse_func(R"(
func @f(A: f32[4], B: f32[4]) {
  for i in 0..0 {
    A[i] = 1.0
  }
  for i in 0..4 {
    A[i] = A[i]
    evaluate i * 2
  }
  for i in 0..4 {
    if (i < 2) {
      evaluate 0
    } else {
      B[i] = A[i]
    }
  }
  alloc T: f32[4] local {
    B[0] = 1.0
  }
}
)");
    PrimFunc result = remove_no_ops(func);
    CHECK(print_stmt(result.body) ==
          "for i in 0..4 {\n"
          "  if (!(i < 2)) {\n"
          "    B[i] = A[i]\n"
          "  }\n"
          "}\n"
          "B[0] = 1.0\n");
    require_same_results(func, result);
  }
  SECTION("barriers stay; a body of nothing is `evaluate 0`") {
    PrimFunc gpu = parse_func(R"(
func @f(A: f32[32]) {
  for tx in 0..32 bind(threadIdx.x) {
    barrier()
  }
}
)");
    CHECK(print_func(remove_no_ops(gpu)) == print_func(gpu));
    PrimFunc empty = parse_func("func @f(A: f32[4]) {\n  A[1] = A[1]\n}\n");
    CHECK(print_stmt(remove_no_ops(empty).body) == "evaluate 0\n");
  }
  SECTION("every kernel, before and after lower-blocks") {
    for (const auto& [name, text] : all_pass_kernels()) {
      INFO("kernel " << name);
      PrimFunc func = parse_func(text);
      PrimFunc result = remove_no_ops(func);
      CHECK(print_func(result) == print_func(func));  // the kernels have no no-ops
      require_same_results(func, result, 13);
    }
    check_after_lowering(remove_no_ops);
  }
}

TEST_CASE("storage-rewrite: disjoint lifetimes share memory", "[loop_pass]") {
  SECTION("allocations one after another share one, of the largest size") {
    PrimFunc func = parse_func(kLocals);
    PrimFunc result = storage_rewrite(func);
    std::string text = print_func(result);
    CHECK(census(result).stmts[StmtKind::Allocate] == 1);
    CHECK(text.find("alloc T: f32[4] local {") != std::string::npos);
    CHECK(text.find("U[") == std::string::npos);
    CHECK(text.find("V[") == std::string::npos);
    require_same_results(func, result);
  }
  SECTION("buffers around a sequence share when their first and last uses allow") {
    PrimFunc func = parse_func(R"(
func @f(A: f32[8], B: f32[8]) {
  alloc P: f32[8] {
    alloc Q: f32[6] {
      alloc R: f32[8] local {
        for i in 0..8 {
          P[i] = A[i] * 2.0
        }
        for i in 0..6 {
          Q[i] = P[i] + P[i + 2]
        }
        for i in 0..6 {
          B[i] = Q[i] * Q[i]
        }
        for i in 0..8 {
          R[i] = B[i]
        }
        for i in 0..8 {
          B[i] = R[i] + 1.0
        }
      }
    }
  }
}
)");
    PrimFunc result = storage_rewrite(func);
    std::string text = print_func(result);
    // P (statements 0-1) and Q (1-2) overlap, and R is local while they are global:
    // nothing shares.
    CHECK(census(result).stmts[StmtKind::Allocate] == 3);
    require_same_results(func, result);
    PrimFunc later = parse_func(R"(
func @f(A: f32[8], B: f32[8]) {
  alloc P: f32[8] {
    alloc Q: f32[6] {
      for i in 0..8 {
        P[i] = A[i] * 2.0
      }
      for i in 0..8 {
        B[i] = P[i] - 1.0
      }
      for i in 0..6 {
        Q[i] = B[i] + B[i + 2]
      }
      for i in 0..6 {
        B[i] = Q[i] * Q[i]
      }
    }
  }
}
)");
    PrimFunc shared = storage_rewrite(later);
    CHECK(census(shared).stmts[StmtKind::Allocate] == 1);
    CHECK(print_func(shared).find("alloc P: f32[8] {") != std::string::npos);
    require_same_results(later, shared);
  }
  SECTION("every kernel, after lower-blocks and flatten-buffers") {
    check_after_lowering([](PrimFunc func) { return storage_rewrite(flatten_buffers(func)); });
  }
}

TEST_CASE("storage-rewrite: a GPU thread block's memory is not shared; a thread's local memory is",
          "[loop_pass]") {
  PrimFunc func = parse_func(R"(
func @f(A: f32[64], B: f32[64]) {
  for bx in 0..2 bind(blockIdx.x) {
    for tx in 0..32 bind(threadIdx.x) {
      alloc S: f32[32] shared {
        S[tx] = A[bx * 32 + tx]
      }
      alloc G: f32[32] {
        G[tx] = A[bx * 32 + tx]
      }
      alloc L1: f32[1] local {
        L1[0] = A[bx * 32 + tx]
        B[bx * 32 + tx] = L1[0]
      }
      alloc L2: f32[1] local {
        L2[0] = B[bx * 32 + tx] * 2.0
        B[bx * 32 + tx] = L2[0]
      }
    }
  }
}
)");
  PrimFunc result = storage_rewrite(func);
  CHECK(census(result).stmts[StmtKind::Allocate] == 3);
  CHECK(print_func(result).find("L2") == std::string::npos);
  require_same_results(func, result);
}

TEST_CASE("every loop pass of the tree, one after another, keeps every kernel's results",
          "[loop_pass]") {
  // The passes in an order each of them accepts (blocks first, buffers flattened before
  // storage is shared), then any other pass the sources register, by name.
  // vectorize-loops is tested by its owner.
  std::vector<std::string> names = {"lower-blocks",  "compact-buffers", "partition-loops",
                                    "unroll-loops",  "simplify",        "flatten-buffers",
                                    "storage-rewrite", "remove-no-ops"};
  std::vector<std::string> in_sources = minic::test::passes_in_sources(PassKind::loop);
  for (const std::string& name : names) {
    CHECK(std::count(in_sources.begin(), in_sources.end(), name) == 1);
  }
  for (const std::string& name : in_sources) {
    if (name != "vectorize-loops" && std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
    }
  }
  for (const auto& [name, text] : all_pass_kernels()) {
    INFO("kernel " << name);
    LoopModule module = parse_loop_module(text, "<test>");
    PrimFunc before = module.functions[0];
    run_passes(module, names);
    PrimFunc after = module.functions[0];
    CHECK(census(after).stmts[StmtKind::Block] == 0);
    CHECK(census(after).ranks == std::set<int64_t>{1});
    require_same_results(before, after, 17);
    // The text of the result reads back as the same function.
    CHECK(print_func(parse_func(print_func(after))) == print_func(after));
  }
}
