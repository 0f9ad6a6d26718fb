// Unit tests for MaxUnpool (src/ops/max_unpool.cpp), worked out by hand in the comments.
// Course module 2.
#include "ops_test_util.h"

using namespace minic;
using namespace minic::test;

namespace {

const std::vector<TensorType> kInputs = {{DType::f32, {1, 1, 2}}, {DType::i64, {1, 1, 2}}};
const Attributes kPool2 = {{"kernel_shape", Shape{2}}, {"strides", Shape{2}}};

}  // namespace

TEST_CASE("MaxUnpool puts each value back at its index", "[ops][maxunpool]") {
  // Kernel 2, stride 2 over 2 pooled values: MaxPool's input had (2 - 1) * 2 + 2 = 4
  // elements. Values 5 and 7 came from positions 1 and 2: [0, 5, 7, 0].
  OneNode g(11, "MaxUnpool", kInputs, kPool2);
  Tensor y = g.run({floats({1, 1, 2}, {5, 7}), int64s({1, 1, 2}, {1, 2})});
  require_values(y, {1, 1, 4}, {0, 5, 7, 0});
}

TEST_CASE("MaxUnpool with output_shape keeps the unpooled tensor in the leading corner",
          "[ops][maxunpool]") {
  // output_shape (1, 1, 5): the 4 unpooled elements, then one more zero.
  OneNode g(11, "MaxUnpool", kInputs, kPool2, {int64s({3}, {1, 1, 5})});
  Tensor y = g.run({floats({1, 1, 2}, {5, 7}), int64s({1, 1, 2}, {1, 2})});
  require_values(y, {1, 1, 5}, {0, 5, 7, 0, 0});
}

TEST_CASE("MaxUnpool rejects bad indices, a small output_shape and bad attributes",
          "[ops][maxunpool]") {
  OneNode index(11, "MaxUnpool", kInputs, kPool2);
  REQUIRE_THROWS_WITH(index.run({floats({1, 1, 2}, {5, 7}), int64s({1, 1, 2}, {1, 4})}),
                      Catch::Contains("I[1] = 4 is outside the unpooled tensor"));
  OneNode small(11, "MaxUnpool", kInputs, kPool2, {int64s({3}, {1, 1, 3})});
  REQUIRE_THROWS_WITH(small.infer(), Catch::Contains("at least the unpooled shape"));
  OneNode kernel(11, "MaxUnpool", kInputs, {{"kernel_shape", Shape{2, 2}}});
  REQUIRE_THROWS_WITH(kernel.infer(), Catch::Contains("kernel_shape and strides need 1"));
  OneNode missing(11, "MaxUnpool", kInputs);
  REQUIRE_THROWS_WITH(missing.infer(), Catch::Contains("kernel_shape"));
  OneNode types(11, "MaxUnpool", {{DType::f32, {1, 1, 2}}, {DType::i32, {1, 1, 2}}}, kPool2);
  REQUIRE_THROWS_WITH(types.infer(), Catch::Contains("I must be i64"));
}
