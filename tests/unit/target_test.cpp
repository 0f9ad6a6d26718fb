// Tests of the Target value: its text form read and printed back, the errors that name the
// word that is wrong, the CUDA table, CPU targets as LLVM knows them and the host's.
// Course module 6.
#include "minic/target/target.h"

#include "minic/codegen/llvm.h"
#include "minic/driver/target.h"
#include "minic/schedule/block_roles.h"
#include "target_test_util.h"

#include <catch2/catch.hpp>

#include <algorithm>

namespace minic {
namespace {

using Catch::Matchers::Contains;

TEST_CASE("a target's text is read word by word", "[target]") {
  TargetSpec host = parse_target_spec("llvm");
  CHECK(host.kind == TargetKind::llvm);
  CHECK_FALSE(host.cpu);
  TargetSpec named = parse_target_spec("  llvm -mcpu=znver4   -mattr=-avx512f,+avx2 ");
  CHECK(named.cpu == "znver4");
  CHECK(named.mattr == std::vector<std::string>{"+avx2", "-avx512f"});  // sorted
  TargetSpec gpu = parse_target_spec("cuda -arch=sm_90a");
  CHECK(gpu.kind == TargetKind::cuda);
  CHECK(gpu.arch == "sm_90a");
}

TEST_CASE("a bad target text is an error naming the word that is wrong", "[target]") {
  CHECK_THROWS_WITH(parse_target_spec(""), Contains("the target is empty"));
  CHECK_THROWS_WITH(parse_target_spec("gpu -arch=sm_90"),
                    Contains("target 'gpu -arch=sm_90'") && Contains("'gpu' is not a kind"));
  CHECK_THROWS_WITH(parse_target_spec("llvm -march=x86-64"),
                    Contains("'-march=x86-64' is not an option of a llvm target"));
  CHECK_THROWS_WITH(parse_target_spec("cuda -mcpu=znver4"),
                    Contains("'-mcpu=znver4' is not an option of a cuda target"));
  CHECK_THROWS_WITH(parse_target_spec("llvm -mcpu"), Contains("'-mcpu' needs a value"));
  CHECK_THROWS_WITH(parse_target_spec("llvm -mcpu=a -mcpu=b"), Contains("'-mcpu' is given twice"));
  CHECK_THROWS_WITH(parse_target_spec("llvm -mattr=avx2"),
                    Contains("'avx2' in -mattr is not +FEATURE or -FEATURE"));
  CHECK(parse_target_spec("cuda").arch == "sm_90");
  CHECK_THROWS_WITH(cuda_target("sm_75"), Contains("no architecture 'sm_75'") &&
                                              Contains("sm_80, sm_86, sm_89, sm_90, sm_90a"));
  CHECK_THROWS_WITH(parse_target("llvm -mcpu=no-such-cpu"),
                    Contains("LLVM knows no CPU 'no-such-cpu'"));
  CHECK_THROWS_WITH(parse_target("llvm -mcpu=x86-64-v3 -mattr=+no-such-feature"),
                    Contains("LLVM knows no CPU feature 'no-such-feature'"));
}

TEST_CASE("CUDA targets come from the table of architectures", "[target]") {
  Target hopper = cuda_target("sm_90a");
  REQUIRE(hopper.is_cuda());
  CHECK(hopper.cuda().sm_count == 132);
  CHECK(hopper.cuda().shared_memory_per_sm == 228 * 1024);
  CHECK(hopper.cuda().shared_memory_per_block == 227 * 1024);
  CHECK(hopper.cuda().registers_per_sm == 65536);
  CHECK(cuda_target("sm_80").cuda().shared_memory_per_sm == 164 * 1024);
  CHECK(hopper.str() == "cuda -arch=sm_90a");
  CHECK(parse_target(hopper.str()) == hopper);
  CHECK_THAT(hopper.describe(), Contains("132 SMs"));
  CHECK_THROWS_WITH(hopper.vector_lanes(DType::f32), Contains("no CPU vector registers"));
}

TEST_CASE("a CPU by name has LLVM's features for it and their vector registers", "[target]") {
  const Target& avx512 = testing::avx512();
  REQUIRE(avx512.is_cpu());
  CHECK(avx512.cpu().vector_bytes == 64);
  CHECK(avx512.cpu().vector_registers == 32);
  CHECK(avx512.vector_lanes(DType::f32) == 16);
  CHECK(avx512.vector_lanes(DType::f64) == 8);
  CHECK(avx512.has_feature("avx512f"));
  CHECK(std::is_sorted(avx512.cpu().features.begin(), avx512.cpu().features.end()));

  const Target& avx2 = testing::avx2();
  CHECK(avx2.cpu().vector_bytes == 32);
  CHECK(avx2.cpu().vector_registers == 16);
  CHECK(avx2.vector_lanes(DType::f32) == 8);
  CHECK(avx2.has_feature("avx2"));
  CHECK_FALSE(avx2.has_feature("avx512f"));

  // Removing AVX-512 from an AVX-512 CPU leaves AVX2's registers.
  Target no_avx512 = parse_target("llvm -mcpu=skylake-avx512 -mattr=-avx512f");
  CHECK_FALSE(no_avx512.has_feature("avx512f"));
  CHECK(no_avx512.cpu().vector_bytes == 32);
  CHECK(no_avx512.str() == "llvm -mcpu=skylake-avx512 -mattr=-avx512f");
}

TEST_CASE("a target's text parses back to the same target", "[target]") {
  for (const char* text : {"llvm -mcpu=x86-64-v3", "llvm -mcpu=znver4",
                           "llvm -mcpu=skylake-avx512 -mattr=-avx512f", "cuda -arch=sm_86"}) {
    Target target = parse_target(text);
    CHECK(target.str() == text);
    CHECK(parse_target(target.str()) == target);
  }
  Target host = codegen::host_target();
  CHECK(parse_target("llvm") == host);
  CHECK(parse_target(host.str()) == host);
}

TEST_CASE("the host target has this machine's caches and cores", "[target]") {
  Target host = codegen::host_target();
  REQUIRE(host.is_cpu());
  CHECK_FALSE(host.cpu().cpu.empty());
  CHECK(host.cpu().cores >= 1);
  CHECK(host.cpu().cores == host_resources().cores);
  CHECK(host.cpu().caches == host_resources().caches);
  CHECK(host.cpu().vector_bytes >= 16);
  CHECK_THAT(host.describe(), Contains(host.str()) && Contains("vector registers"));
  // The host runs its own code; a named CPU gets the host's caches and cores too.
  CHECK_NOTHROW(codegen::check_runs_here(host));
  CHECK(testing::avx2().cpu().cores == host.cpu().cores);
}

TEST_CASE("the schedule rules' sizes come from the target", "[target]") {
  CHECK(schedule::vector_lanes(testing::avx512()) == 16);
  CHECK(schedule::vector_lanes(testing::avx2()) == 8);
  CHECK(accumulator_registers(testing::avx512()) == 24);
  CHECK(accumulator_registers(testing::avx2()) == 12);
  // Column tiles of one or two vectors (one with a shorter last tile where the width is
  // not whole vectors), else, below a vector, a divisor of the width from 7.
  CHECK(column_tile(256, 16) == 32);
  CHECK(column_tile(256, 8) == 16);
  CHECK(column_tile(56, 16) == 16);
  CHECK(column_tile(56, 8) == 8);
  CHECK(column_tile(14, 16) == 14);
  CHECK(column_tile(5, 8) == 0);
  // Rows of the register tile: 8 x two zmm fit AVX-512's 24 accumulators; with AVX2's 12,
  // two ymm of columns leave room for 4 rows, one ymm for 8.
  CHECK(row_tile(64, 32, testing::avx512()) == 8);
  CHECK(row_tile(64, 16, testing::avx2()) == 4);
  CHECK(row_tile(64, 8, testing::avx2()) == 8);
  CHECK(row_tile(12, 16, testing::avx512()) == 4);
  CHECK(row_tile(7, 16, testing::avx512()) == 1);
}

TEST_CASE("the GEMM tile: column tiles to share, a panel in L1, multiply-adds per load",
          "[target]") {
  auto tile = [](int64_t rows, int64_t columns, int64_t reduction, const Target& target) {
    GemmTile t = gemm_tile(rows, columns, reduction, target);
    return std::pair{t.rows, t.columns};
  };
  const Target avx512 = testing::avx512();
  const Target avx2 = testing::avx2();
  // 1024^3: 16 column tiles of four vectors to share, no panel fits L1 (1024 x 64 floats),
  // so the most multiply-adds per load: 6 x 4 vectors (24 for 10 loads; the 1024 rows end
  // in a shorter tile).
  CHECK(tile(1024, 1024, 1024, avx512) == std::pair<int64_t, int64_t>{6, 64});
  // BERT's first feed-forward GEMM, 128 x 1024 summed over 256: two vectors keep the
  // panel (256 x 32 floats, 32 KB) in L1, and 8 rows of them fill 16 registers.
  CHECK(tile(128, 1024, 256, avx512) == std::pair<int64_t, int64_t>{8, 32});
  // Its second, 128 x 256 over 1024: four vectors would leave 4 column tiles to share.
  CHECK(tile(128, 256, 1024, avx512) == std::pair<int64_t, int64_t>{8, 32});
  // BERT-base's, 128 x 3072 over 768 (the panels pack-matmul-weights stores): 48 tiles
  // of four vectors to share, no panel in L1, so 6 x 4 vectors.
  CHECK(tile(128, 3072, 768, avx512) == std::pair<int64_t, int64_t>{6, 64});
  // AVX2's 12 accumulators: 3 rows of 4 vectors (12 for 7 loads) against 6 x 2 (12 for 8).
  CHECK(tile(1024, 1024, 1024, avx2) == std::pair<int64_t, int64_t>{3, 32});
  // One row: no register tile (the reduction rule takes the product).
  CHECK(tile(1, 128, 256, avx512).first == 1);
  // 96 columns: four vectors and a last tile of two, never three (a 48-lane vector
  // compiles badly): 176 columns, which would leave three, take two vectors.
  CHECK(tile(1024, 96, 1024, avx512) == std::pair<int64_t, int64_t>{6, 64});
  CHECK(tile(1024, 176, 1024, avx512) == std::pair<int64_t, int64_t>{8, 32});
  // A grouped 1 x 1 convolution over 28 x 28 = 784 positions: 12 tiles of four vectors
  // and one of one.
  CHECK(tile(112, 784, 28, avx512) == std::pair<int64_t, int64_t>{6, 64});
  // Columns that are not whole vectors: tiles of two or four vectors where the last tile
  // is under one vector (14 x 14 = 196 positions: three of 64 and one of 4; 100: three of
  // 32 and one of 4), else column_tile and row_tile (56: three of 16 and one of 8).
  CHECK(tile(68, 196, 68, avx512) == std::pair<int64_t, int64_t>{6, 64});
  CHECK(tile(64, 100, 64, avx512) == std::pair<int64_t, int64_t>{8, 32});
  CHECK(tile(64, 56, 64, avx512) == std::pair<int64_t, int64_t>{8, 16});
}

}  // namespace
}  // namespace minic
