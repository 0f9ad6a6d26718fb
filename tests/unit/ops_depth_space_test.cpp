// Unit tests for DepthToSpace and SpaceToDepth (src/ops/depth_space.cpp): where each
// element goes, worked out in the comments, and the errors for bad shapes, block sizes and
// modes. Course module 2.
#include "lower_test_util.h"
#include "ops_test_util.h"

#include "minic/ir/graph/text.h"

#include <numeric>

using namespace minic;
using namespace minic::test;

namespace {

// 0, 1, ..., n - 1 as floats of `shape`.
Tensor iota(Shape shape) {
  std::vector<float> values(static_cast<size_t>(num_elements(shape)));
  std::iota(values.begin(), values.end(), 0.0f);
  return floats(std::move(shape), values);
}

}  // namespace

TEST_CASE("DepthToSpace in DCR and CRD modes", "[ops][depthtospace]") {
  // X [1, 8, 1, 1] holds its channel number; blocksize 2 gives Y [1, 2, 2, 2]. Output
  // channel c at block offset (bh, bw) reads
  //   DCR: channel (bh * 2 + bw) * 2 + c  -> c = 0: 0, 2, 4, 6; c = 1: 1, 3, 5, 7
  //   CRD: channel c * 4 + bh * 2 + bw    -> c = 0: 0, 1, 2, 3; c = 1: 4, 5, 6, 7
  const TensorType x{DType::f32, {1, 8, 1, 1}};
  OneNode dcr(13, "DepthToSpace", {x}, {{"blocksize", int64_t{2}}});
  require_values(dcr.run({iota({1, 8, 1, 1})}), {1, 2, 2, 2}, {0, 2, 4, 6, 1, 3, 5, 7});
  OneNode crd(13, "DepthToSpace", {x}, {{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}});
  require_values(crd.run({iota({1, 8, 1, 1})}), {1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
}

TEST_CASE("SpaceToDepth stacks each block's pixels as channels", "[ops][spacetodepth]") {
  // X [1, 2, 2, 2] = c * 4 + h * 2 + w. Output channel (bh * 2 + bw) * 2 + c reads
  // x[c, bh, bw]: channels 0..7 are 0, 4, 1, 5, 2, 6, 3, 7.
  OneNode g(13, "SpaceToDepth", {{DType::f32, {1, 2, 2, 2}}}, {{"blocksize", int64_t{2}}});
  require_values(g.run({iota({1, 2, 2, 2})}), {1, 8, 1, 1}, {0, 4, 1, 5, 2, 6, 3, 7});
}

TEST_CASE("SpaceToDepth undoes DepthToSpace in DCR mode, for any element type",
          "[ops][depthtospace][spacetodepth]") {
  Tensor x = iota({2, 8, 3, 2}).cast(DType::i64);
  OneNode to_space(13, "DepthToSpace", {x.type()}, {{"blocksize", int64_t{2}}});
  Tensor space = to_space.run({x});
  REQUIRE(space.shape() == Shape{2, 2, 6, 4});
  OneNode to_depth(13, "SpaceToDepth", {space.type()}, {{"blocksize", int64_t{2}}});
  REQUIRE(to_depth.run({space}).identical(x));
}

TEST_CASE("DepthToSpace and SpaceToDepth reject bad ranks, block sizes and modes",
          "[ops][depthtospace][spacetodepth]") {
  const Attributes block2 = {{"blocksize", int64_t{2}}};
  OneNode rank3(13, "DepthToSpace", {{DType::f32, {4, 2, 2}}}, block2);
  REQUIRE_THROWS_WITH(rank3.infer(), Catch::Contains("takes N x C x H x W"));
  OneNode channels(13, "DepthToSpace", {{DType::f32, {1, 6, 2, 2}}}, block2);
  REQUIRE_THROWS_WITH(channels.infer(), Catch::Contains("6 channels do not divide"));
  OneNode mode(13, "DepthToSpace", {{DType::f32, {1, 4, 2, 2}}},
               {{"blocksize", int64_t{2}}, {"mode", std::string("RDC")}});
  REQUIRE_THROWS_WITH(mode.infer(), Catch::Contains("takes 'DCR' or 'CRD'"));
  OneNode zero(13, "DepthToSpace", {{DType::f32, {1, 4, 2, 2}}}, {{"blocksize", int64_t{0}}});
  REQUIRE_THROWS_WITH(zero.infer(), Catch::Contains("blocksize is 0"));
  OneNode missing(13, "SpaceToDepth", {{DType::f32, {1, 1, 2, 2}}});
  REQUIRE_THROWS_WITH(missing.infer(), Catch::Contains("missing required attribute 'blocksize'"));
  OneNode odd(13, "SpaceToDepth", {{DType::f32, {1, 1, 3, 2}}}, block2);
  REQUIRE_THROWS_WITH(odd.infer(), Catch::Contains("does not divide into blocks"));
}

TEST_CASE("the DepthToSpace and SpaceToDepth rules agree with their kernels",
          "[ops][depthtospace][spacetodepth]") {
  Graph graph = parse_graph(R"(
graph blocks(%x: f32[2,12,3,2], %h: f16[1,3,4,6]) -> (%d: f32[2,3,6,4], %c: f32[2,3,6,4],
             %s: f16[1,12,2,3], %t: f32[2,12,3,2]) opset 13 {
  %d = DepthToSpace(%x) {blocksize=2}
  %c = DepthToSpace(%x) {blocksize=2, mode="CRD"}
  %s = SpaceToDepth(%h) {blocksize=2}
  %t = SpaceToDepth(%c) {blocksize=2}
  return %d, %c, %s, %t
}
)");
  infer_shapes(graph);
  testing::require_kernels_agree(graph);
}
