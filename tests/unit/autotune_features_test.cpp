// Features of scheduled kernels (src/autotune/features.cpp). Course module 5.
//
//   - the vector has one value per name, in a fixed order, every value finite;
//   - values worked out by hand for a scaling loop and an unscheduled GEMM;
//   - schedules that differ (vectorised or not, tiled or not) give different vectors, and
//     the same kernel the same vector every time.
#include "minic/autotune/features.h"

#include "schedule_kernels.h"
#include "schedule_test_util.h"
#include "target_test_util.h"
#include "minic/autotune/search_space.h"
#include "minic/schedule/rules.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <set>

using namespace minic;
using namespace minic::autotune;
using schedule::test::parse_func;

namespace {

// Y = 2 X over 1024 elements.
const char* const kScale = R"(func @scale(X: f32[1024], Y: f32[1024]) {
  for i in 0..1024 {
    block Y(v = spatial(1024) i) {
      reads(X[v]) writes(Y[v])
      Y[v] = X[v] * 2.0
    }
  }
}
)";


// The feature called `name` of `features`.
float feature(const std::vector<float>& features, const std::string& name) {
  const std::vector<std::string>& names = feature_names();
  for (size_t f = 0; f < names.size(); ++f) {
    if (names[f] == name) return features.at(f);
  }
  FAIL("no feature " << name);
  return 0;
}

float log_scale(double x) { return static_cast<float>(std::log2(1.0 + x)); }

void check_well_formed(const std::vector<float>& features) {
  REQUIRE(features.size() == feature_names().size());
  for (size_t f = 0; f < features.size(); ++f) {
    INFO(feature_names()[f]);
    CHECK(std::isfinite(features[f]));
    CHECK(features[f] >= 0);
  }
}

// The scaling loop with the point's vector tile (1: not vectorised).
loop::PrimFunc scale_with_vector(int64_t lanes) {
  SearchSpace space(parse_func(kScale), testing::avx512());
  Decisions point = space.default_point();
  point.at("Y.vector") = {lanes};
  return space.apply(point);
}

}  // namespace

TEST_CASE("features have fixed names, one value each", "[autotune_features]") {
  const std::vector<std::string>& names = feature_names();
  CHECK(names.size() >= 30);
  CHECK(names.size() <= 50);
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());
  for (const schedule::test::ScheduleKernel& kernel : schedule::test::kScheduleKernels) {
    INFO(kernel.name);
    loop::PrimFunc func = parse_func(kernel.text);
    check_well_formed(features_of_scheduled(func));
    check_well_formed(
        features_of_scheduled(schedule::default_cpu_schedule(func, testing::avx512())));
  }
  check_well_formed(extract_features(loop::PrimFunc{"empty", {}, {}}));
}

TEST_CASE("features of a scaling loop, by hand", "[autotune_features]") {
  std::vector<float> plain = features_of_scheduled(parse_func(kScale));
  // 1024 multiplies, loads and stores; 2 x 4 KiB of parameters, all touched by the one
  // loop (its footprint at every level); one load and one store, both at unit stride.
  CHECK(feature(plain, "float_ops") == log_scale(1024));
  CHECK(feature(plain, "loaded_elements") == log_scale(1024));
  CHECK(feature(plain, "stored_elements") == log_scale(1024));
  CHECK(feature(plain, "param_bytes") == log_scale(8192));
  CHECK(feature(plain, "footprint_0") == log_scale(8192));
  CHECK(feature(plain, "footprint_7") == log_scale(8192));
  CHECK(feature(plain, "main_innermost_extent") == log_scale(1024));
  CHECK(feature(plain, "main_unit_stride_fraction") == 1.0f);
  CHECK(feature(plain, "main_lanes") == log_scale(1));
  CHECK(feature(plain, "vector_float_fraction") == 0.0f);
  CHECK(feature(plain, "alloc_bytes") == 0.0f);

  // Vectorised by 16: the same work, in 64 iterations of 16 lanes.
  std::vector<float> vector = features_of_scheduled(scale_with_vector(16));
  CHECK(feature(vector, "float_ops") == log_scale(1024));
  CHECK(feature(vector, "main_lanes") == log_scale(16));
  CHECK(feature(vector, "widest_vector") == log_scale(16));
  CHECK(feature(vector, "main_innermost_extent") == log_scale(64));
  CHECK(feature(vector, "vector_float_fraction") == 1.0f);
  CHECK(feature(vector, "vector_load_fraction") == 1.0f);
  CHECK(feature(vector, "footprint_0") == log_scale(8192));
}

TEST_CASE("features of an unscheduled GEMM, by hand", "[autotune_features]") {
  std::vector<float> f = features_of_scheduled(parse_func(schedule::test::kGemm64Kernel));
  // A multiply and an add per iteration of 64^3.
  CHECK(feature(f, "float_ops") == log_scale(2.0 * 64 * 64 * 64));
  CHECK(feature(f, "main_iterations") == log_scale(64.0 * 64 * 64));
  CHECK(feature(f, "main_depth") == log_scale(3));
  // Over k: C[i, j] one element, A's row of 64, B's column of 64 (stride 64).
  CHECK(feature(f, "footprint_0") == log_scale((1 + 64 + 64) * 4));
  // Over j and k: C's row, A's row, all of B.
  CHECK(feature(f, "footprint_1") == log_scale((64 + 64 + 4096) * 4));
  // Over the nest: the three matrices (and so at every level above).
  CHECK(feature(f, "footprint_2") == log_scale(3 * 4096 * 4));
  CHECK(feature(f, "footprint_7") == log_scale(3 * 4096 * 4));
  CHECK(feature(f, "main_max_stride") == log_scale(64));
  // C's load and store stay put as k moves; A's load moves by one.
  CHECK(feature(f, "main_invariant_fraction") == 0.5f);
  CHECK(feature(f, "main_unit_stride_fraction") == 0.25f);
  CHECK(feature(f, "main_buffers") == log_scale(3));
  CHECK(feature(f, "parallel_loops") == 0.0f);
}

TEST_CASE("different schedules give different features", "[autotune_features]") {
  // Vectorised or not.
  std::vector<float> scalar = features_of_scheduled(scale_with_vector(1));
  std::vector<float> vector = features_of_scheduled(scale_with_vector(16));
  std::vector<float> wide = features_of_scheduled(scale_with_vector(64));
  CHECK(scalar != vector);
  CHECK(vector != wide);

  // Tiled (the default GEMM schedule: a local accumulator, a packed panel, threads) or not.
  loop::PrimFunc gemm = parse_func(schedule::test::kGemm64Kernel);
  std::vector<float> plain = features_of_scheduled(gemm);
  std::vector<float> tiled =
      features_of_scheduled(schedule::default_cpu_schedule(gemm, testing::avx512()));
  CHECK(plain != tiled);
  CHECK(feature(plain, "local_alloc_bytes") == 0.0f);
  CHECK(feature(tiled, "local_alloc_bytes") > 0.0f);
  CHECK(feature(tiled, "parallel_loops") > 0.0f);
  CHECK(feature(tiled, "main_lanes") > feature(plain, "main_lanes"));
  // The 6 x 64 tile: its 6 unrolled rows are the main body, and do every float operation
  // but the last tile's, of the 4 rows left (60 of 64 rows; the init stores zeros, the
  // copy-out copies).
  CHECK(feature(tiled, "main_stores_in_innermost") == log_scale(6));
  CHECK(feature(tiled, "main_float_fraction") == 60.0f / 64.0f);
  CHECK(feature(tiled, "main_lanes") == log_scale(64));

  // Two tilings of the space differ too.
  SearchSpace space(gemm, testing::avx512());
  Decisions other = space.default_point();
  other.at("C.tile_i") = {16, 1, 4};
  other.at("C.pack") = {0};
  CHECK(features_of_scheduled(space.apply(other)) != tiled);
}

TEST_CASE("features are deterministic", "[autotune_features]") {
  loop::PrimFunc first =
      schedule::default_cpu_schedule(parse_func(schedule::test::kGemm64Kernel), testing::avx512());
  loop::PrimFunc second =
      schedule::default_cpu_schedule(parse_func(schedule::test::kGemm64Kernel), testing::avx512());
  std::vector<float> features = features_of_scheduled(first);
  CHECK(features == features_of_scheduled(first));
  CHECK(features == features_of_scheduled(second));
}
