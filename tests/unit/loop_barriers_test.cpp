// Differential tests of the insert-barriers pass (course module 6): kernels written
// without their barriers race on the loop interpreter; after the pass they run without a
// race and give the results of the same kernels with barriers written by hand, on the
// same random inputs.
#include "gpu_test_kernels.h"
#include "loop_test_util.h"
#include "minic/ir/loop/interpreter.h"
#include "minic/ir/loop/printer.h"
#include "minic/passes/loop/insert_barriers.h"

#include <catch2/catch.hpp>

using namespace minic;
using namespace minic::loop;
using namespace minic::loop::test;

namespace {

// How many barriers `func` holds.
size_t count_barriers(const PrimFunc& func) {
  std::string text = print_func(func);
  size_t count = 0;
  for (size_t at = text.find("barrier()"); at != std::string::npos;
       at = text.find("barrier()", at + 1)) {
    ++count;
  }
  return count;
}

}  // namespace

TEST_CASE("insert-barriers: a stage through shared memory", "[loop_pass][gpu]") {
  std::mt19937 rng(7);
  Tensor a = small_int_tensor({32}, rng);
  Tensor expected(DType::f32, {32}), b(DType::f32, {32});
  run_func(reverse_blocks(true), {&a, &expected});

  PrimFunc bare = reverse_blocks(false);
  REQUIRE_THROWS_WITH(run_func(bare, {&a, &b}), Catch::Contains("data race on shared buffer S"));
  PrimFunc fixed = insert_barriers(bare);
  REQUIRE(count_barriers(fixed) == 1);
  run_func(fixed, {&a, &b});
  REQUIRE(b.identical(expected));
}

TEST_CASE("insert-barriers: the k-tile loop of a tiled GEMM", "[loop_pass][gpu]") {
  std::mt19937 rng(11);
  Tensor a = small_int_tensor({16, 16}, rng), b = small_int_tensor({16, 16}, rng);
  Tensor expected(DType::f32, {16, 16}), c(DType::f32, {16, 16});
  run_func(tiled_gemm(true, true), {&a, &b, &expected});

  // Without either barrier the interpreter finds a race; the pass puts back two per
  // k tile (one before the fetch, one before the use), wherever one was missing.
  for (auto [first, second] : {std::pair{false, false}, {true, false}, {false, true}}) {
    PrimFunc bare = tiled_gemm(first, second);
    REQUIRE_THROWS_WITH(run_func(bare, {&a, &b, &c}), Catch::Contains("data race on shared"));
    PrimFunc fixed = insert_barriers(bare);
    INFO(print_func(fixed));
    REQUIRE(count_barriers(fixed) == 2);
    c = Tensor(DType::f32, {16, 16});
    run_func(fixed, {&a, &b, &c});
    REQUIRE(c.identical(expected));
  }
  // With both, it adds none.
  REQUIRE(count_barriers(insert_barriers(tiled_gemm(true, true))) == 2);
}
