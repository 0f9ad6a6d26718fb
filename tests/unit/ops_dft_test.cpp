// Unit tests for DFT and STFT (src/ops/dft.cpp). Small transforms worked out by hand in the
// comments, and the errors for bad axes, shapes and attributes. Course module 2.
#include "ops_test_util.h"

using namespace minic;
using namespace minic::test;

namespace {

// The real signal [1, 2, 3, 4] as one batch of four points: [1, 4, 1].
const Tensor kSignal = floats({1, 4, 1}, {1, 2, 3, 4});

}  // namespace

// --- DFT --------------------------------------------------------------------------------------

TEST_CASE("DFT of a real signal of four points", "[ops][dft]") {
  // y[k] = sum_m x[m] * (-i)^(k m):
  //   y0 = 1 + 2 + 3 + 4 = 10            y1 = 1 - 2i - 3 + 4i = -2 + 2i
  //   y2 = 1 - 2 + 3 - 4 = -2            y3 = 1 + 2i - 3 - 4i = -2 - 2i
  OneNode g(17, "DFT", {{DType::f32, {1, 4, 1}}});
  require_values(g.run({kSignal}), {1, 4, 2}, {10, 0, -2, 2, -2, 0, -2, -2});
}

TEST_CASE("DFT with onesided = 1 keeps bins 0 to n / 2", "[ops][dft]") {
  // The spectrum above without y3, the conjugate of y1.
  OneNode g(17, "DFT", {{DType::f32, {1, 4, 1}}}, {{"onesided", int64_t{1}}});
  require_values(g.run({kSignal}), {1, 3, 2}, {10, 0, -2, 2, -2, 0});
}

TEST_CASE("inverse DFT of the spectrum gives the signal back", "[ops][dft]") {
  // x[m] = (1/4) sum_k y[k] * i^(k m); m = 0: (10 - 2 + 2i - 2 - 2 - 2i) / 4 = 1, and so on.
  Tensor spectrum = floats({1, 4, 2}, {10, 0, -2, 2, -2, 0, -2, -2});
  OneNode g(17, "DFT", {{DType::f32, {1, 4, 2}}}, {{"inverse", int64_t{1}}});
  require_values(g.run({spectrum}), {1, 4, 2}, {1, 0, 2, 0, 3, 0, 4, 0});
}

TEST_CASE("inverse one-sided DFT rebuilds the real signal from n / 2 + 1 bins",
          "[ops][dft]") {
  // Bins y0..y2 of the spectrum above; y3 = conj(y1) = -2 - 2i; n = 2 * (3 - 1) = 4.
  Tensor half = floats({1, 3, 2}, {10, 0, -2, 2, -2, 0});
  OneNode g(17, "DFT", {{DType::f32, {1, 3, 2}}},
            {{"inverse", int64_t{1}}, {"onesided", int64_t{1}}});
  require_values(g.run({half}), {1, 4, 1}, {1, 2, 3, 4});
}

TEST_CASE("DFT zero-pads the signal to dft_length", "[ops][dft]") {
  // x = [1, 1, 0, 0]: y[k] = 1 + (-i)^k = 2, 1 - i, 0, 1 + i.
  OneNode g(17, "DFT", {{DType::f32, {1, 2, 1}}}, {}, {int64s({}, {4})});
  require_values(g.run({floats({1, 2, 1}, {1, 1})}), {1, 4, 2}, {2, 0, 1, -1, 0, 0, 1, 1});
}

TEST_CASE("DFT at opset 20 takes the axis as an input, in double", "[ops][dft]") {
  // x[a][b] = [[1, 2], [3, 4]] transformed along axis 0, two points a column:
  //   y[0][b] = x[0][b] + x[1][b] = 4, 6      y[1][b] = x[0][b] - x[1][b] = -2, -2
  OneNode g(20, "DFT", {{DType::f64, {2, 2, 1}}});
  g.graph.set_input(g.node, 2, g.graph.add_constant("axis", int64s({}, {0})));
  Tensor x = floats({2, 2, 1}, {1, 2, 3, 4}).cast(DType::f64);
  Tensor y = g.run({x});
  REQUIRE(y.dtype() == DType::f64);
  require_values(y, {2, 2, 2}, {4, 0, 6, 0, -2, 0, -2, 0});
}

TEST_CASE("DFT rejects bad axes, shapes and attributes", "[ops][dft]") {
  SECTION("the last axis holds the complex parts") {
    OneNode g(17, "DFT", {{DType::f32, {1, 4, 1}}}, {{"axis", int64_t{2}}});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("axis 2 is out of range"));
  }
  SECTION("the last axis must be 1 or 2") {
    OneNode g(17, "DFT", {{DType::f32, {1, 4, 3}}});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("end in 1 (real) or 2 (complex)"));
  }
  SECTION("a one-sided forward DFT takes real input") {
    OneNode g(17, "DFT", {{DType::f32, {1, 4, 2}}}, {{"onesided", int64_t{1}}});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("takes a real signal"));
  }
  SECTION("a one-sided inverse DFT takes complex input") {
    OneNode g(17, "DFT", {{DType::f32, {1, 4, 1}}},
              {{"onesided", int64_t{1}}, {"inverse", int64_t{1}}});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("takes a complex spectrum"));
  }
  SECTION("inverse is 0 or 1") {
    OneNode g(17, "DFT", {{DType::f32, {1, 4, 1}}}, {{"inverse", int64_t{2}}});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("inverse is 2; it must be 0 or 1"));
  }
  SECTION("from opset 20 the axis is not an attribute") {
    OneNode g(20, "DFT", {{DType::f32, {1, 4, 1}}}, {{"axis", int64_t{1}}});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("axis is an input from opset 20"));
  }
  SECTION("dft_length is positive") {
    OneNode g(17, "DFT", {{DType::f32, {1, 4, 1}}}, {}, {int64s({}, {0})});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("it must be at least 1"));
  }
  SECTION("integer signals are refused") {
    OneNode g(17, "DFT", {{DType::i32, {1, 4, 1}}});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("takes floating-point tensors"));
  }
}

// --- STFT -------------------------------------------------------------------------------------

TEST_CASE("STFT cuts frames of frame_length every frame_step points", "[ops][stft]") {
  // Frames [1, 2] and [3, 4]; a two-point DFT is (a + b, a - b): 3, -1 and 7, -1.
  // frames = 1 + (4 - 2) / 2 = 2; onesided keeps 2 / 2 + 1 = 2 bins.
  OneNode g(17, "STFT", {{DType::f32, {1, 4, 1}}}, {},
            {int64s({}, {2}), floats({2}, {1, 1}), int64s({}, {2})});
  require_values(g.run({kSignal}), {1, 2, 2, 2}, {3, 0, -1, 0, 7, 0, -1, 0});
}

TEST_CASE("STFT multiplies each frame by the window", "[ops][stft]") {
  // The window [1, 0] keeps the first point of each frame: 1 and 3, whose DFT is flat.
  // frame_length is the window's length.
  OneNode g(17, "STFT", {{DType::f32, {1, 4, 1}}}, {}, {int64s({}, {2}), floats({2}, {1, 0})});
  require_values(g.run({kSignal}), {1, 2, 2, 2}, {1, 0, 1, 0, 3, 0, 3, 0});
}

TEST_CASE("STFT without window or frame_length transforms the whole signal",
          "[ops][stft]") {
  // One frame of four points: the one-sided spectrum 10, -2 + 2i, -2 of the DFT tests.
  OneNode g(17, "STFT", {{DType::f32, {1, 4, 1}}}, {}, {int64s({}, {1})});
  require_values(g.run({kSignal}), {1, 1, 3, 2}, {10, 0, -2, 2, -2, 0});
}

TEST_CASE("STFT rejects bad frames, windows and signals", "[ops][stft]") {
  SECTION("the window and frame_length disagree") {
    OneNode g(17, "STFT", {{DType::f32, {1, 4, 1}}}, {},
              {int64s({}, {1}), floats({2}, {1, 1}), int64s({}, {3})});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("they must be equal"));
  }
  SECTION("frame_step is positive") {
    OneNode g(17, "STFT", {{DType::f32, {1, 4, 1}}}, {}, {int64s({}, {0})});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("frame_step is 0"));
  }
  SECTION("a frame longer than the signal") {
    OneNode g(17, "STFT", {{DType::f32, {1, 4, 1}}}, {},
              {int64s({}, {1}), floats({8}, std::vector<float>(8, 1))});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("longer than the signal"));
  }
  SECTION("onesided with a complex signal") {
    OneNode g(17, "STFT", {{DType::f32, {1, 4, 2}}}, {}, {int64s({}, {1})});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("onesided = 1 needs a real signal"));
  }
  SECTION("the signal is [batch, length, parts]") {
    OneNode g(17, "STFT", {{DType::f32, {4, 1}}}, {}, {int64s({}, {1})});
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("[batch, length, 1 or 2]"));
  }
}
