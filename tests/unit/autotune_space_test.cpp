// The autotuner's search space (src/autotune/search_space.cpp, space_rules.cpp). Course
// module 5.
//
//   - factorizations against a brute-force enumeration;
//   - the knobs of a GEMM, a convolution lowered from a Conv node (and a grouped one), a
//     softmax and an elementwise chain: their values keep the rules' bounds, and the
//     default schedule is a point whose trace is default_cpu_trace's;
//   - 30 random points of each kernel (fixed seed): the trace replays to the same
//     function, the scheduled kernel computes what the unscheduled one does (loop
//     interpreter, same random inputs), mutation and crossover stay in the space;
//   - decisions naming knobs the space lacks are refused, naming the knob.
#include "minic/autotune/search_space.h"

#include "schedule_kernels.h"
#include "schedule_test_util.h"
#include "target_test_util.h"
#include "minic/ir/graph/text.h"
#include "minic/lower/lower.h"
#include "minic/ops/shape_inference.h"
#include "minic/passes/pass_manager.h"
#include "minic/schedule/primitives.h"
#include "minic/schedule/rules.h"
#include "minic/schedule/schedule.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <set>

using namespace minic;
using namespace minic::autotune;
using schedule::test::parse_func;

namespace {

constexpr int kPointsPerKernel = 30;


// A GEMM whose extents have many divisors: its tile lists must be thinned.
const char* const kGemm5040 = R"(func @wide(A: f32[5040,64], B: f32[64,960], C: f32[5040,960]) {
  for i in 0..5040 {
    for j in 0..960 {
      for k in 0..64 {
        block C(vi = spatial(5040) i, vj = spatial(960) j, vk = reduce(64) k) {
          reads(A[vi, vk], B[vk, vj], C[vi, vj]) writes(C[vi, vj])
          init { C[vi, vj] = 0.0 }
          C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        }
      }
    }
  }
}
)";

// The kernel of the first node of `graph_text` that lowers, after the graph passes
// (winograd left out: the convolutions below are the blocked convolution rule's).
// With `name_part`, the first whose kernel's name holds it.
loop::PrimFunc lowered(const std::string& graph_text, const std::string& name_part = "") {
  Graph graph = parse_graph(graph_text);
  infer_shapes(graph);
  std::vector<std::string> passes = default_pipeline();
  std::erase(passes, "winograd");
  run_passes(graph, passes, testing::avx512());
  for (const Node* node : graph.nodes()) {
    if (!can_lower(*node)) continue;
    loop::PrimFunc func = lower_node(*node, graph.opset, testing::avx512());
    if (func.name.find(name_part) != std::string::npos) return func;
  }
  FAIL("nothing in the graph lowers");
  return {};
}

// A 3x3 convolution with padding 1 and a Relu: the padding stage, the implicit GEMM over
// (channel, kh, kw) and the bias + Relu epilogue (src/ops/conv_compute.cpp).
loop::PrimFunc conv_relu_kernel() {
  return lowered(R"(
graph block(%x: f32[1,4,8,8], %w: f32[8,4,3,3], %b: f32[8]) -> (%y: f32[1,8,8,8]) opset 17 {
  %c = Conv(%x, %w, %b) {kernel_shape=[3,3], pads=[1,1,1,1]}
  %y = Relu(%c)
  return %y
}
)");
}

// A convolution of 32 channels with constant weights on an AVX-512 target: in the blocked
// layout (blocks of 16), tiled by the blocked convolution rule, its Relu folded into the
// tile's copy-out.
loop::PrimFunc blocked_conv_kernel() {
  return lowered(R"(
graph block(%x: f32[1,32,14,14]) -> (%y: f32[1,32,14,14]) opset 17 {
  %w = const f32[32,32,3,3] splat<0.01>
  %b = const f32[32] splat<0.5>
  %c = Conv(%x, %w, %b) {kernel_shape=[3,3], pads=[1,1,1,1]}
  %y = Relu(%c)
  return %y
}
)",
                 "nchwcconv");
}

// A 1 x 1 convolution of 128 to 256 channels on a 7 x 7 plane, in the blocked layout: the
// blocked convolution rule takes the plane form.
loop::PrimFunc plane_conv_kernel() {
  return lowered(R"(
graph plane(%x: f32[1,128,7,7]) -> (%y: f32[1,256,7,7]) opset 17 {
  %w = const f32[256,128,1,1] splat<0.01>
  %b = const f32[256] splat<0.5>
  %c = Conv(%x, %w, %b)
  %y = Relu(%c)
  return %y
}
)",
                 "nchwcconv");
}

// Softmax of 32 rows of 512: enough work for parallel rows.
loop::PrimFunc softmax_kernel() {
  return lowered(R"(
graph probabilities(%x: f32[32,512]) -> (%y: f32[32,512]) opset 17 {
  %y = Softmax(%x) {axis=-1}
  return %y
}
)");
}

loop::PrimFunc from_blocks_kernel() { return parse_func(schedule::test::kFromBlocksKernel); }
loop::PrimFunc grouped_kernel() { return parse_func(schedule::test::kGroupedConvKernel); }

// minic.MatMulPanels's kernel: C [m, n] = A [m, k] x B, B stored in panels of `width`
// columns, Bp [ceil(n / width), k, width].
loop::PrimFunc panels_kernel(int64_t m, int64_t k, int64_t n, int64_t width) {
  const int64_t panels = (n + width - 1) / width;
  const std::string b = fmt::format("Bp[floordiv(vj, {0}), vk, floormod(vj, {0})]", width);
  return parse_func(fmt::format(R"(func @panels(A: f32[{0},{1}], Bp: f32[{3},{1},{4}], C: f32[{0},{2}]) {{
  for i in 0..{0} {{
    for j in 0..{2} {{
      for k in 0..{1} {{
        block C(vi = spatial({0}) i, vj = spatial({2}) j, vk = reduce({1}) k) {{
          reads(A[vi, vk], {5}, C[vi, vj]) writes(C[vi, vj])
          init {{ C[vi, vj] = 0.0 }}
          C[vi, vj] = C[vi, vj] + A[vi, vk] * {5}
        }}
      }}
    }}
  }}
}}
)", m, k, n, panels, width, b));
}

// A fused elementwise chain over 128 x 128.
loop::PrimFunc chain_kernel() {
  return lowered(R"(
graph chain(%x: f32[128,128], %bias: f32[128]) -> (%y: f32[128,128]) opset 17 {
  %two = const f32[] dense<[2.0]>
  %s = Add(%x, %bias)
  %t = Mul(%s, %two)
  %y = Relu(%t)
  return %y
}
)");
}

const Knob& knob_named(const SearchSpace& space, const std::string& name) {
  for (const Knob& knob : space.knobs()) {
    if (knob.name == name) return knob;
  }
  FAIL("no knob " << name);
  return space.knobs().front();
}

std::set<std::string> knob_names(const SearchSpace& space) {
  std::set<std::string> names;
  for (const Knob& knob : space.knobs()) names.insert(knob.name);
  return names;
}

// The product of a list of factors.
int64_t product_of(const std::vector<int64_t>& factors) {
  int64_t total = 1;
  for (int64_t factor : factors) total *= factor;
  return total;
}

// Every `parts`-tuple of 1..extent whose product is extent, in lexicographic order: the
// obvious enumeration.
std::vector<std::vector<int64_t>> brute_force_factorizations(int64_t extent, int parts) {
  std::vector<std::vector<int64_t>> result;
  std::vector<int64_t> tuple(parts, 1);
  while (true) {
    if (product_of(tuple) == extent) result.push_back(tuple);
    int position = parts - 1;
    while (position >= 0 && tuple[position] == extent) tuple[position--] = 1;
    if (position < 0) return result;
    ++tuple[position];
  }
}

// The default point's trace is the default rules' trace, and both compute the same.
void check_default_point(const loop::PrimFunc& func, bool exact) {
  SearchSpace space(func, testing::avx512());
  REQUIRE(space.contains(space.default_point()));
  schedule::Trace trace = space.trace_of(space.default_point());
  CHECK(schedule::print_trace(trace) ==
        schedule::print_trace(schedule::default_cpu_trace(func, testing::avx512())));
  CHECK(loop::print_func(space.apply(space.default_point())) ==
        loop::print_func(schedule::default_cpu_schedule(func, testing::avx512())));
  schedule::test::check_same_outputs(func, space.apply(space.default_point()), 11, exact);
}

// 30 random points: each in the space, its trace replays to apply's function, the same
// text twice, the outputs of the unscheduled kernel, a kernel the loop pipeline accepts;
// mutants and children in the space. `in_every_trace` (if not empty) must be in every
// trace: the gemm rule's cache_write, so that no point had its rule refused. Returns how
// many points changed the kernel.
int check_random_points(const loop::PrimFunc& func, bool exact,
                        const std::string& in_every_trace = "") {
  SearchSpace space(func, testing::avx512());
  std::mt19937_64 rng(2024);
  std::string unscheduled = loop::print_func(func);
  int changed = 0;
  Decisions previous = space.default_point();
  for (int p = 0; p < kPointsPerKernel; ++p) {
    Decisions point = space.sample(rng);
    INFO("point " << p);
    REQUIRE(space.contains(point));
    schedule::Trace trace = space.trace_of(point);
    INFO("trace:\n" << schedule::print_trace(trace));
    CHECK(schedule::print_trace(space.trace_of(point)) == schedule::print_trace(trace));
    loop::PrimFunc scheduled = space.apply(point);
    schedule::Schedule replayed(func);
    replayed.replay(trace);
    CHECK(loop::print_func(replayed.func()) == loop::print_func(scheduled));
    if (loop::print_func(scheduled) != unscheduled) ++changed;
    CHECK_THAT(schedule::print_trace(trace), Catch::Contains(in_every_trace));
    loop::LoopModule module{{scheduled}};
    CHECK_NOTHROW(run_passes(module, loop::default_loop_pipeline()));
    schedule::test::check_same_outputs(func, scheduled, static_cast<uint32_t>(p), exact);
    CHECK(space.contains(space.mutate(point, rng)));
    CHECK(space.contains(space.crossover(point, previous, rng)));
    previous = point;
  }
  return changed;
}

}  // namespace

TEST_CASE("factorizations are every ordered split of an extent", "[autotune_space]") {
  for (int64_t extent = 1; extent <= 48; ++extent) {
    for (int parts = 1; parts <= 3; ++parts) {
      INFO(extent << " into " << parts);
      std::vector<std::vector<int64_t>> found = factorizations(extent, parts);
      CHECK(found == brute_force_factorizations(extent, parts));
      for (const std::vector<int64_t>& factors : found) CHECK(product_of(factors) == extent);
    }
  }
  // 12 = 2^2 * 3: (2+1)(1+1) = 6 divisors; into 3 ordered parts: C(4,2) * C(3,2) = 18.
  CHECK(factorizations(12, 2).size() == 6);
  CHECK(factorizations(12, 3).size() == 18);
  CHECK_THROWS_AS(factorizations(0, 2), Error);
  CHECK_THROWS_AS(factorizations(8, 0), Error);
}

TEST_CASE("a product reading B in panels tiles its columns within one panel",
          "[autotune_space]") {
  // minic.MatMulPanels's kernel: B [64, 96] stored in panels of 64 columns, the default
  // tile's (gemm_tile: four vectors, then a last tile of two), the last panel half zeros.
  SearchSpace space(panels_kernel(64, 64, 96, 64), testing::avx512());
  std::set<int64_t> lasts;
  for (const std::vector<int64_t>& tile : knob_named(space, "C.tile_j").choices) {
    lasts.insert(tile.back());
  }
  // 16 and 32 divide the panel's 64 columns, and 64 is the default's; 48, which divides
  // the 96 columns, would read across two panels.
  CHECK(lasts == std::set<int64_t>{16, 32, 64});
  CHECK(space.default_point().at("C.tile_j") == std::vector<int64_t>{2, 1, 64});
}

TEST_CASE("a GEMM's knobs keep the register tile's bounds", "[autotune_space]") {
  SearchSpace space(parse_func(schedule::test::kGemm64Kernel), testing::avx512());
  CHECK(knob_names(space) == std::set<std::string>{"C.order", "C.pack", "C.parallel",
                                                    "C.tile_i", "C.tile_j", "C.tile_k"});
  for (const std::vector<int64_t>& tile : knob_named(space, "C.tile_j").choices) {
    CHECK(product_of(tile) == 64);
    CHECK(tile.back() % 16 == 0);
    CHECK(tile.back() <= 64);
  }
  // Every row tiling covers the 64 rows exactly, but the default's 11 tiles of 6 (the
  // last one cut short: gemm_tile).
  for (const std::vector<int64_t>& tile : knob_named(space, "C.tile_i").choices) {
    if (tile != std::vector<int64_t>{11, 1, 6}) CHECK(product_of(tile) == 64);
    CHECK(tile.back() <= 8);
  }
  // Last factors 16, 32, 64 with the rest (4, 2, 1) split in two: 3 + 2 + 1 values.
  CHECK(knob_named(space, "C.tile_j").choices.size() == 6);
  // Last factors 1, 2, 4, 8 of 64, the rest (64, 32, 16, 8) split in two: 7+6+5+4, and
  // the default's.
  CHECK(knob_named(space, "C.tile_i").choices.size() == 23);
  CHECK(knob_named(space, "C.tile_k").choices.size() == 7);
  CHECK(space.size() == 6.0 * 23 * 7 * 2 * 2 * knob_named(space, "C.parallel").choices.size());

  // The default rule's choice, worked out by hand (gemm_tile): no column tile leaves 8 to
  // share, and every panel fits L1, so the most multiply-adds per load: 64 columns (four
  // vectors) by 6 rows, 24 accumulators. k whole, B packed, the row tiles (11 of them, the
  // first outer loop of kMinParallelExtent iterations) in parallel, as 64^3 iterations are
  // enough work.
  Decisions expected = {{"C.tile_j", {1, 1, 64}}, {"C.tile_i", {11, 1, 6}},
                        {"C.tile_k", {64, 1}},    {"C.order", {0}},
                        {"C.pack", {1}},          {"C.parallel", {1}}};
  CHECK(space.default_point() == expected);

  // Sampled points keep 24 accumulator registers: rows x vectors of 16 lanes.
  std::mt19937_64 rng(5);
  for (int p = 0; p < 200; ++p) {
    Decisions point = space.sample(rng);
    int64_t vectors = (point["C.tile_j"].back() + 15) / 16;
    CHECK(point["C.tile_i"].back() * vectors <= 24);
  }
  Decisions too_many_registers = expected;
  too_many_registers["C.tile_j"] = {1, 1, 64};
  too_many_registers["C.tile_i"] = {8, 1, 8};
  CHECK_FALSE(space.contains(too_many_registers));

  // Rows outermost and in parallel: every thread would write the panel packed under the
  // column tile loop. Without packing, the rows may run in parallel.
  Decisions rows_parallel = expected;
  rows_parallel["C.order"] = {1};
  rows_parallel["C.parallel"] = {0};
  CHECK_FALSE(space.contains(rows_parallel));
  rows_parallel["C.pack"] = {0};
  REQUIRE(space.contains(rows_parallel));
  CHECK_THAT(schedule::print_trace(space.trace_of(rows_parallel)), Catch::Contains("parallel("));
}

TEST_CASE("long lists of tile sizes are thinned the same way every time", "[autotune_space]") {
  SearchSpace space(parse_func(kGemm5040), testing::avx512());
  SearchSpace again(parse_func(kGemm5040), testing::avx512());
  for (const Knob& knob : space.knobs()) {
    INFO(knob.name);
    CHECK(knob.choices.size() <= 200);
    CHECK(std::set<std::vector<int64_t>>(knob.choices.begin(), knob.choices.end()).size() ==
          knob.choices.size());
  }
  // 5040 = 7!: every row tile 1..8 divides it, which gives far more than 200 splits.
  CHECK(knob_named(space, "C.tile_i").choices.size() == 200);
  CHECK(knob_named(space, "C.tile_i").choices == knob_named(again, "C.tile_i").choices);
  CHECK(space.contains(space.default_point()));
  CHECK(schedule::print_trace(space.trace_of(space.default_point())) ==
        schedule::print_trace(schedule::default_cpu_trace(space.func(), testing::avx512())));
}

TEST_CASE("the default schedule is a point of the space", "[autotune_space]") {
  SECTION("gemm") { check_default_point(parse_func(schedule::test::kGemm64Kernel), true); }
  SECTION("gemm of the schedule tests") {
    check_default_point(parse_func(schedule::test::kGemmKernel), true);
  }
  SECTION("conv") { check_default_point(conv_relu_kernel(), true); }
  SECTION("blocked conv") { check_default_point(blocked_conv_kernel(), true); }
  SECTION("blocked conv in the plane form") { check_default_point(plane_conv_kernel(), true); }
  SECTION("softmax") { check_default_point(softmax_kernel(), false); }
  SECTION("softmax of the schedule tests") {
    check_default_point(parse_func(schedule::test::kSoftmaxKernel), false);
  }
  SECTION("elementwise chain") { check_default_point(chain_kernel(), true); }
  SECTION("elementwise blocks of the schedule tests") {
    check_default_point(parse_func(schedule::test::kElementwiseKernel), true);
  }
  SECTION("a transposed copy") { check_default_point(from_blocks_kernel(), true); }
  SECTION("a grouped convolution") { check_default_point(grouped_kernel(), true); }
  SECTION("a product whose panels are prefetched") {
    // B [128, 2048] in panels of 64 columns: 1 MB, so the reduction loop gets
    // prefetch_ahead (block_roles.h), in the default rule and the default point alike.
    loop::PrimFunc panels = panels_kernel(8, 128, 2048, 64);
    CHECK(schedule::print_trace(schedule::default_cpu_trace(panels, testing::avx512()))
              .find("\"prefetch_ahead\", 8192)") != std::string::npos);
    check_default_point(panels, true);
  }
}

TEST_CASE("each block of a kernel gets the knobs of its kind", "[autotune_space]") {
  // The convolution's reduction is gemm-like; the padding and the epilogue elementwise.
  loop::PrimFunc conv = conv_relu_kernel();
  std::vector<std::string> blocks = schedule::get_block_names(conv);
  REQUIRE(blocks.size() == 3);
  std::set<std::string> conv_knobs = knob_names(SearchSpace(conv, testing::avx512()));
  CHECK(conv_knobs.count(blocks[0] + ".vector"));
  CHECK(conv_knobs.count(blocks[1] + ".tile_j"));
  CHECK(conv_knobs.count(blocks[1] + ".tile_k"));
  CHECK(conv_knobs.count(blocks[2] + ".vector"));
  // A convolution's input is not packed (only a matrix is).
  CHECK(knob_named(SearchSpace(conv, testing::avx512()), blocks[1] + ".pack").choices.size() == 1);

  // The blocked convolution: the register tile (T positions by U channel vectors, every
  // one that fits the 28 accumulators of AVX-512, T balanced for the 14 positions: 5 is
  // three tiles of 5, 5 and 4, and 6 would be three as well), in the tile form (chunk 0:
  // its 2 channel blocks make too few groups for the plane form), its Relu folded away.
  loop::PrimFunc blocked = blocked_conv_kernel();
  SearchSpace blocked_space(blocked, testing::avx512());
  CHECK(knob_names(blocked_space) == std::set<std::string>{"pad.vector", "pad.parallel",
                                                           "conv.conv_tile"});
  std::vector<std::vector<int64_t>> tiles;
  for (int64_t u : {1, 2}) {
    for (int64_t t : {1, 2, 3, 4, 5, 7, 14}) {
      tiles.push_back({t, u, 0});
    }
  }
  CHECK(knob_named(blocked_space, "conv.conv_tile").choices == tiles);
  // A 7 x 7 plane of 256 channels: each tile in both forms where its groups allow the
  // plane form (passes of 4 input channel blocks: 16 KB of 1 x 1 weights for U = 4), the
  // plane form's 7 x 4 tile by default; the Relu taken into the plane's loop nest.
  SearchSpace plane_space(plane_conv_kernel(), testing::avx512());
  CHECK(knob_names(plane_space) == std::set<std::string>{"conv.conv_tile"});
  const Knob& plane_tile = knob_named(plane_space, "conv.conv_tile");
  CHECK(std::count(plane_tile.choices.begin(), plane_tile.choices.end(),
                   std::vector<int64_t>{7, 4, 0}) == 1);
  CHECK(std::count(plane_tile.choices.begin(), plane_tile.choices.end(),
                   std::vector<int64_t>{7, 4, 4}) == 1);
  CHECK(plane_space.default_point().at("conv.conv_tile") == std::vector<int64_t>{7, 4, 4});

  // Rows reduced along memory order: the row reduction rule, or not.
  SearchSpace softmax(parse_func(schedule::test::kSoftmaxKernel), testing::avx512());
  CHECK(knob_names(softmax) ==
        std::set<std::string>{"row_max.rows", "row_max.inner", "row_max.parallel",
                              "row_sum.rows", "row_sum.inner", "row_sum.parallel",
                              "normalize.vector", "normalize.parallel"});
  CHECK(knob_named(softmax, "row_max.rows").choices == std::vector<std::vector<int64_t>>{{0}, {1}});
  // 8 x 16: too little work for threads.
  CHECK(knob_named(softmax, "row_max.parallel").choices.size() == 1);
  // 128 columns: vectors of 16, 32 and 64 lanes, or none.
  SearchSpace chain(chain_kernel(), testing::avx512());
  bool found_vector_knob = false;
  for (const Knob& knob : chain.knobs()) {
    if (!knob.name.ends_with(".vector")) continue;
    found_vector_knob = true;
    CHECK(knob.choices == std::vector<std::vector<int64_t>>{{1}, {16}, {32}, {64}});
  }
  CHECK(found_vector_knob);
  // A copy that reads across its nest: the transposed copy rule (the default) or not.
  SearchSpace from_blocks(from_blocks_kernel(), testing::avx512());
  CHECK(knob_named(from_blocks, "Y.transposed").choices ==
        std::vector<std::vector<int64_t>>{{0}, {1}});
  CHECK(from_blocks.default_point().at("Y.transposed") == std::vector<int64_t>{1});
}

TEST_CASE("random points replay, compute the same and stay in the space", "[autotune_space]") {
  SECTION("gemm") {
    CHECK(check_random_points(parse_func(schedule::test::kGemm64Kernel), true, "cache_write(") == kPointsPerKernel);
  }
  SECTION("conv") {
    CHECK(check_random_points(conv_relu_kernel(), true, "cache_write(") == kPointsPerKernel);
  }
  SECTION("softmax") { CHECK(check_random_points(softmax_kernel(), false) > 0); }
  SECTION("elementwise chain") { CHECK(check_random_points(chain_kernel(), true) > 0); }
  SECTION("a transposed copy") { CHECK(check_random_points(from_blocks_kernel(), true) > 0); }
  SECTION("a grouped convolution") {
    CHECK(check_random_points(grouped_kernel(), true, "cache_write(") == kPointsPerKernel);
  }
}

TEST_CASE("every knob value of a GEMM gives a tiled kernel", "[autotune_space]") {
  // Each value of each knob, the others at the default: the gemm rule must accept it
  // (the trace caches C's tile), so no value of the space is dead.
  loop::PrimFunc gemm = parse_func(schedule::test::kGemm64Kernel);
  SearchSpace space(gemm, testing::avx512());
  for (const Knob& knob : space.knobs()) {
    for (const std::vector<int64_t>& value : knob.choices) {
      Decisions point = space.default_point();
      point[knob.name] = value;
      if (!space.contains(point)) continue;  // breaks the register budget
      INFO(knob.name << " = " << value.size() << " factors, last " << value.back());
      CHECK_THAT(schedule::print_trace(space.trace_of(point)),
                 Catch::Contains("cache_write("));
    }
  }
}

TEST_CASE("decisions outside the space are refused, naming the knob", "[autotune_space]") {
  SearchSpace space(parse_func(schedule::test::kGemm64Kernel), testing::avx512());
  Decisions unknown = space.default_point();
  unknown["C.tile_q"] = {4};
  CHECK_FALSE(space.contains(unknown));
  CHECK_THROWS_WITH(space.trace_of(unknown), Catch::Contains("C.tile_q"));

  Decisions missing = space.default_point();
  missing.erase("C.order");
  CHECK_FALSE(space.contains(missing));
  CHECK_THROWS_WITH(space.apply(missing), Catch::Contains("C.order"));

  Decisions bad_value = space.default_point();
  bad_value["C.tile_j"] = {1, 1, 48};  // 48 does not divide 64
  CHECK_FALSE(space.contains(bad_value));
  CHECK_THROWS_WITH(space.trace_of(bad_value), Catch::Contains("C.tile_j"));

  std::mt19937_64 rng(1);
  CHECK_THROWS_AS(space.mutate(unknown, rng), Error);
}
