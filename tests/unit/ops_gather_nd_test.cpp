// Unit tests for GatherND. Small graphs whose results are worked out by hand in the comments.
// Course module 2.
#include "ops_test_util.h"

using namespace minic;
using namespace minic::test;

namespace {

const TensorType k2x2x2{DType::f32, {2, 2, 2}};
// data[i][j][k] = 100 i + 10 j + k
const Tensor kData = floats({2, 2, 2}, {0, 1, 10, 11, 100, 101, 110, 111});

}  // namespace

TEST_CASE("GatherND with tuples of two coordinates reads rows", "[ops][gathernd]") {
  // indices [[1, 0], [0, -1]] name data[1][0] = [100, 101] and data[0][1] = [10, 11].
  OneNode g(13, "GatherND", {k2x2x2}, {}, {int64s({2, 2}, {1, 0, 0, -1})});
  require_values(g.run({kData}), {2, 2}, {100, 101, 10, 11});
}

TEST_CASE("GatherND with tuples of all three coordinates reads elements", "[ops][gathernd]") {
  // indices of shape [1, 2, 3]: data[1][1][0] = 110 and data[0][1][1] = 11; the output
  // has the indices' leading shape [1, 2].
  OneNode g(11, "GatherND", {k2x2x2}, {}, {int64s({1, 2, 3}, {1, 1, 0, 0, 1, 1})});
  require_values(g.run({kData}), {1, 2}, {110, 11});
}

TEST_CASE("GatherND with batch_dims 1 indexes each batch entry by its own tuples",
          "[ops][gathernd]") {
  // Batch 0 reads its row 1: [10, 11]; batch 1 reads its row 0: [100, 101].
  OneNode g(12, "GatherND", {k2x2x2}, {{"batch_dims", int64_t{1}}}, {int64s({2, 1}, {1, 0})});
  require_values(g.run({kData}), {2, 2}, {10, 11, 100, 101});
  // With two coordinates per batch entry: batch 0 reads [0][1] = 1, batch 1 reads [1][0] = 110.
  OneNode elements(13, "GatherND", {k2x2x2}, {{"batch_dims", int64_t{1}}},
                   {int64s({2, 2}, {0, 1, 1, 0})});
  require_values(elements.run({kData}), {2}, {1, 110});
}

TEST_CASE("GatherND rejects bad indices, batch_dims and tuple lengths", "[ops][gathernd]") {
  OneNode out_of_range(13, "GatherND", {k2x2x2}, {}, {int64s({1, 2}, {0, 2})});
  REQUIRE_THROWS_WITH(out_of_range.run({kData}),
                      Catch::Contains("index 2 is out of range for axis 1 of size 2"));
  OneNode too_long(13, "GatherND", {k2x2x2}, {}, {int64s({1, 4}, {0, 0, 0, 0})});
  REQUIRE_THROWS_WITH(too_long.infer(), Catch::Contains("name 4 coordinates"));
  OneNode batch_too_big(13, "GatherND", {k2x2x2}, {{"batch_dims", int64_t{2}}},
                        {int64s({2, 1}, {0, 0})});
  REQUIRE_THROWS_WITH(batch_too_big.infer(), Catch::Contains("batch_dims 2 must be in [0, 2)"));
  OneNode batch_mismatch(13, "GatherND", {k2x2x2}, {{"batch_dims", int64_t{1}}},
                         {int64s({3, 1}, {0, 0, 0})});
  REQUIRE_THROWS_WITH(batch_mismatch.infer(), Catch::Contains("batch dimension 0 differs"));
  OneNode too_early(11, "GatherND", {k2x2x2}, {{"batch_dims", int64_t{1}}},
                    {int64s({2, 1}, {0, 0})});
  REQUIRE_THROWS_WITH(too_early.infer(), Catch::Contains("batch_dims needs opset 12"));
  OneNode float_indices(13, "GatherND", {k2x2x2}, {}, {floats({1, 1}, {0})});
  REQUIRE_THROWS_WITH(float_indices.infer(), Catch::Contains("indices must be i32 or i64"));
}
