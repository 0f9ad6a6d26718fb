// Unit tests for ReverseSequence: both axis orders worked out by hand, and the errors.
// Course module 2.
#include "ops_test_util.h"

using namespace minic;
using namespace minic::test;

TEST_CASE("ReverseSequence with the batch on axis 0 reverses each row's prefix",
          "[ops][reversesequence]") {
  // Rows [0 1 2], [3 4 5], [6 7 8] with lengths 1, 2, 3:
  //   row 0 keeps [0 1 2]; row 1 reverses 2 -> [4 3 5]; row 2 reverses all -> [8 7 6].
  OneNode g(10, "ReverseSequence", {{DType::f32, {3, 3}}},
            {{"batch_axis", int64_t{0}}, {"time_axis", int64_t{1}}}, {int64s({3}, {1, 2, 3})});
  require_values(g.run({floats({3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8})}), {3, 3},
                 {0, 1, 2, 4, 3, 5, 8, 7, 6});
}

TEST_CASE("ReverseSequence with the time on axis 0 reverses each column's prefix",
          "[ops][reversesequence]") {
  // Columns of [[0 1], [2 3], [4 5]] are [0 2 4] and [1 3 5]; lengths 3 and 0:
  //   column 0 -> [4 2 0]; column 1 unchanged.
  OneNode g(10, "ReverseSequence", {{DType::i64, {3, 2}}}, {}, {int64s({2}, {3, 0})});
  require_values(g.run({int64s({3, 2}, {0, 1, 2, 3, 4, 5})}), {3, 2}, {4, 1, 2, 3, 0, 5});
}

TEST_CASE("ReverseSequence errors: axes, lengths, rank", "[ops][reversesequence]") {
  OneNode same_axis(10, "ReverseSequence", {{DType::f32, {2, 2}}},
                    {{"batch_axis", int64_t{0}}, {"time_axis", int64_t{0}}},
                    {int64s({2}, {1, 1})});
  REQUIRE_THROWS_WITH(same_axis.infer(), Catch::Contains("0 and 1 in either order"));
  OneNode wrong_count(10, "ReverseSequence", {{DType::f32, {2, 3}}}, {}, {int64s({2}, {1, 1})});
  REQUIRE_THROWS_WITH(wrong_count.infer(), Catch::Contains("one length per batch entry"));
  OneNode vector(10, "ReverseSequence", {{DType::f32, {4}}}, {}, {int64s({1}, {1})});
  REQUIRE_THROWS_WITH(vector.infer(), Catch::Contains("rank 2 or more"));
  OneNode too_long(10, "ReverseSequence", {{DType::f32, {2, 2}}}, {}, {int64s({2}, {3, 1})});
  REQUIRE_THROWS_WITH(too_long.run({floats({2, 2}, {1, 2, 3, 4})}),
                      Catch::Contains("sequence_lens[0] = 3 is outside [0, 2]"));
}
