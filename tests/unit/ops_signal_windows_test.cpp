// Unit tests for HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix
// (src/ops/signal_windows.cpp), worked out by hand in the comments. Course module 2.
#include "ops_test_util.h"

#include <cmath>

using namespace minic;
using namespace minic::test;

// --- the windows ------------------------------------------------------------------------------

TEST_CASE("HannWindow of four points, periodic and symmetric", "[ops][hannwindow]") {
  // Periodic, N = 4: 0.5 - 0.5 cos(pi n / 2) = 0, 0.5, 1, 0.5.
  OneNode periodic(17, "HannWindow", {}, {}, {int64s({}, {4})});
  require_values(periodic.run({}), {4}, {0, 0.5, 1, 0.5});
  // Symmetric, N = 3: 0.5 - 0.5 cos(2 pi n / 3) = 0, 0.75, 0.75, 0.
  OneNode symmetric(17, "HannWindow", {}, {{"periodic", int64_t{0}}}, {int64s({}, {4})});
  require_values(symmetric.run({}), {4}, {0, 0.75, 0.75, 0});
}

TEST_CASE("HammingWindow of four points in double", "[ops][hammingwindow]") {
  // 25/46 - 21/46 cos(pi n / 2) = 4/46, 25/46, 46/46, 25/46.
  OneNode g(17, "HammingWindow", {}, {{"output_datatype", int64_t{11}}}, {int64s({}, {4})});
  Tensor w = g.run({});
  REQUIRE(w.dtype() == DType::f64);
  require_values(w, {4}, {4.0 / 46, 25.0 / 46, 1, 25.0 / 46}, 1e-12);
}

TEST_CASE("BlackmanWindow of four points", "[ops][blackmanwindow]") {
  // 0.42 - 0.5 cos(pi n / 2) + 0.08 cos(pi n) = 0, 0.34, 1, 0.34.
  OneNode g(17, "BlackmanWindow", {}, {}, {Tensor::scalar<int32_t>(4)});
  require_values(g.run({}), {4}, {0, 0.34, 1, 0.34});
}

TEST_CASE("the windows reject bad sizes and attributes", "[ops][hannwindow]") {
  SECTION("a negative size") {
    OneNode g(17, "HannWindow", {}, {}, {int64s({}, {-1})});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("negative length"));
  }
  SECTION("a float size") {
    OneNode g(17, "HammingWindow", {}, {}, {floats({}, {4})});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("size must be one integer"));
  }
  SECTION("periodic is 0 or 1") {
    OneNode g(17, "BlackmanWindow", {}, {{"periodic", int64_t{3}}}, {int64s({}, {4})});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("periodic is 3"));
  }
  SECTION("output_datatype must be numeric") {
    OneNode g(17, "HannWindow", {}, {{"output_datatype", int64_t{9}}}, {int64s({}, {4})});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("output_datatype 9 is not one of"));
  }
}

// --- MelWeightMatrix --------------------------------------------------------------------------

namespace {

// The inputs num_mel_bins, dft_length, sample_rate, lower and upper edge in hertz.
std::vector<Tensor> mel_inputs(int64_t bins, int64_t dft_length, int64_t rate, float lower,
                               float upper) {
  return {int64s({}, {bins}), int64s({}, {dft_length}), int64s({}, {rate}), floats({}, {lower}),
          floats({}, {upper})};
}

}  // namespace

TEST_CASE("MelWeightMatrix of two bands over a 16-point DFT", "[ops][melweightmatrix]") {
  // 0 to 8 Hz is almost linear on the mel scale: the 4 edges lie just below 0, 2, 4, 6 Hz,
  // and floor(17 * f / 16) puts them in bins 0, 2, 4, 6. Band 0 rises over bins 0..2 and
  // falls over 2..4; band 1 the same two bins up. 16 / 2 + 1 = 9 rows.
  OneNode g(17, "MelWeightMatrix", {}, {}, mel_inputs(2, 16, 16, 0, 8));
  require_values(g.run({}), {9, 2},
                 {0, 0, 0.5, 0, 1, 0, 0.5, 0.5, 0, 1, 0, 0.5, 0, 0, 0, 0, 0, 0});
}

TEST_CASE("MelWeightMatrix rejects bad inputs", "[ops][melweightmatrix]") {
  SECTION("no bands") {
    OneNode g(17, "MelWeightMatrix", {}, {}, mel_inputs(0, 16, 16, 0, 8));
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("num_mel_bins is 0"));
  }
  SECTION("edges in the wrong order") {
    OneNode g(17, "MelWeightMatrix", {}, {}, mel_inputs(2, 16, 16, 8, 0));
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("lower_edge_hertz <= upper_edge_hertz"));
  }
  SECTION("an infinite upper edge") {
    OneNode g(17, "MelWeightMatrix", {}, {}, mel_inputs(2, 16, 16, 0, INFINITY));
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("must be finite"));
  }
  SECTION("a band past the last spectrum bin") {
    OneNode g(17, "MelWeightMatrix", {}, {}, mel_inputs(2, 16, 16, 0, 100));
    REQUIRE_THROWS_WITH(g.run({}), Catch::Contains("is too high for sample_rate"));
  }
  SECTION("output_datatype must be a float type") {
    OneNode g(17, "MelWeightMatrix", {}, {{"output_datatype", int64_t{7}}},
              mel_inputs(2, 16, 16, 0, 8));
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("floating-point types"));
  }
}
