// Tests of compact-buffers: staging buffers shrink to their tiles and move into the tile
// loop only where that keeps every result. Course module 4.
#include "loop_pass_kernels.h"
#include "minic/passes/loop/compact_buffers.h"
#include "minic/schedule/schedule.h"

#include <catch2/catch.hpp>

using namespace minic;
using namespace minic::loop;
using namespace minic::loop::test;

namespace {

// An accumulator tile per row block, a prefix sum whose buffer carries values across
// iterations, and a buffer read at a shifted index.
const char* const kCompactKernels = R"(
func @tiled(A: f32[32,16], C: f32[32,16]) {
  alloc acc: f32[32,16] local {
    for io in 0..4 {
      for ii in 0..8 {
        acc[io * 8 + ii, ramp(0, 1, 16)] = broadcast(0.0, 16)
      }
      for k in 0..3 {
        for ii in 0..8 {
          acc[io * 8 + ii, ramp(0, 1, 16)] = acc[io * 8 + ii, ramp(0, 1, 16)] + A[io * 8 + ii, ramp(0, 1, 16)]
        }
      }
      for ii in 0..8 {
        C[io * 8 + ii, ramp(0, 1, 16)] = acc[io * 8 + ii, ramp(0, 1, 16)]
      }
    }
  }
}

func @prefix(A: f32[8], C: f32[8]) {
  alloc T: f32[9] local {
    T[0] = 0.0
    for i in 0..8 {
      T[i + 1] = T[i] + A[i]
      C[i] = T[i + 1]
    }
  }
}

func @carried(A: f32[4], C: f32[4]) {
  alloc T: f32[4] local {
    for i in 0..4 {
      T[i] = A[i]
      C[i] = select(i > 0, T[max(i - 1, 0)], 0.0)
    }
  }
}
)";

// The shape of the first allocation of `func`.
std::vector<int64_t> allocated_shape(const PrimFunc& func) {
  struct Finder : IRVisitor {
    std::vector<int64_t> shape;
    void visit_Allocate(const Allocate* node) override {
      if (shape.empty()) shape = node->buffer->shape;
      IRVisitor::visit_Allocate(node);
    }
  } finder;
  finder.visit(func.body);
  return finder.shape;
}

}  // namespace

TEST_CASE("compact-buffers shrinks a tile buffer and keeps results", "[loop_pass]") {
  LoopModule module = parse_loop_module(kCompactKernels, "<compact>");
  const PrimFunc& tiled = module.functions[0];
  PrimFunc compacted = compact_buffers(tiled);
  CHECK(allocated_shape(compacted) == std::vector<int64_t>{8, 16});
  require_same_results(tiled, compacted);
  for (size_t f = 1; f < module.functions.size(); ++f) {
    const PrimFunc& func = module.functions[f];
    INFO("@" << func.name);
    PrimFunc after = compact_buffers(func);
    CHECK(print_func(after) == print_func(func));  // values cross iterations: unchanged
    require_same_results(func, after);
  }
}

TEST_CASE("compact-buffers enters a loop of one iteration", "[loop_pass]") {
  // A batch of 1 around the column tiles of a GEMM: the packed panel P shrinks to one
  // tile's panel, under jo.
  PrimFunc batch = parse_func(R"(
func @batch_of_one(B: f32[8,64], C: f32[1,64]) {
  alloc P: f32[1,8,64] {
    for b in 0..1 {
      for jo in 0..4 {
        for k in 0..8 {
          P[b, k, ramp(jo * 16, 1, 16)] = B[k, ramp(jo * 16, 1, 16)]
        }
        C[b, ramp(jo * 16, 1, 16)] = broadcast(0.0, 16)
        for k in 0..8 {
          C[b, ramp(jo * 16, 1, 16)] = C[b, ramp(jo * 16, 1, 16)] + P[b, k, ramp(jo * 16, 1, 16)]
        }
      }
    }
  }
})");
  PrimFunc compacted = compact_buffers(batch);
  CHECK(allocated_shape(compacted) == std::vector<int64_t>{1, 8, 16});
  require_same_results(batch, compacted);
}

TEST_CASE("compact-buffers keeps results on every pass-test kernel", "[loop_pass]") {
  for (const auto& [name, text] : all_pass_kernels()) {
    INFO(name);
    PrimFunc func = lower_blocks(parse_func(text));
    require_same_results(func, compact_buffers(func));
  }
}

TEST_CASE("a cache_write staging buffer becomes one tile after compact-buffers",
          "[loop_pass]") {
  PrimFunc matmul = parse_func(kMatmul);
  schedule::Schedule sch(matmul);
  schedule::BlockRef block = sch.get_block("C");
  schedule::BlockRef copy = sch.cache_write(block, 0, "local");
  std::vector<schedule::LoopRef> loops = sch.get_loops(block);
  std::vector<schedule::LoopRef> rows = sch.split(loops[0], {3, 2});
  sch.reorder({rows[0], loops[1], loops[2], rows[1]});
  sch.reverse_compute_at(copy, loops[1]);
  PrimFunc compacted = compact_buffers(lower_blocks(sch.func()));
  CHECK(allocated_shape(compacted) == std::vector<int64_t>{2, 1});
  require_same_results(matmul, compacted);
}
