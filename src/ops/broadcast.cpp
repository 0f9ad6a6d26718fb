// numpy broadcasting: the shape inputs broadcast to, and the strides that read an input
// at that shape (broadcast.h). Course module 2.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "broadcast.h"

#include <algorithm>

namespace minic {

Shape broadcast_shapes(const NodeContext& ctx, const std::vector<Shape>& shapes) {
  size_t rank = 0;
  for (const Shape& shape : shapes) rank = std::max(rank, shape.size());
  Shape result(rank, 1);
  for (const Shape& shape : shapes) {
    size_t offset = rank - shape.size();
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t dim = shape[i];
      int64_t& out = result[offset + i];
      if (dim == out || dim == 1) continue;
      if (out == 1) {
        out = dim;
        continue;
      }
      std::vector<std::string> printed;
      for (const Shape& s : shapes) printed.push_back(shape_string(s));
      ctx.fail("input shapes {} do not broadcast", fmt::join(printed, " and "));
    }
  }
  return result;
}

Shape broadcast_strides(const Shape& input, const Shape& output) {
  Shape strides(output.size(), 0);
  Shape dense = row_major_strides(input);
  size_t offset = output.size() - input.size();
  for (size_t i = 0; i < input.size(); ++i) {
    strides[offset + i] = input[i] == 1 ? 0 : dense[i];
  }
  return strides;
}

}  // namespace minic
