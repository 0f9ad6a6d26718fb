// CenterCropPad: crops or zero-pads chosen axes to given sizes, keeping the centre.
// Course module 2.
//
// Input 1, shape, lists the new size s of each axis in the attribute axes (default: every
// axis, in order). Along such an axis of size d, the output keeps the centre:
//   s < d (crop):  output[i] = input[i + (d - s) / 2]
//   s > d (pad):   output[i] = input[i - (s - d) / 2], zero where that is outside the input
// (integer division: an odd difference puts the extra element at the end). Other axes are
// unchanged. The kernel moves bytes, so it serves every element type.
// Fusion kind: opaque (it has no compute rule; read as an op it is a Slice and a Pad).
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "broadcast.h"
#include "movement.h"

#include <numeric>

namespace minic {

namespace {

// The output shape, and for each axis the shift from an output index to an input index.
struct CropPad {
  Shape shape;
  Shape shift;

  static CropPad read(const NodeContext& ctx, const TensorType& input, const Tensor& sizes) {
    Shape shape = int_list(ctx, sizes, "shape");
    std::vector<int64_t> axes(static_cast<size_t>(input.rank()));
    std::iota(axes.begin(), axes.end(), 0);
    axes = normalize_axes(ctx, ctx.get_ints("axes", axes), input.rank());
    if (shape.size() != axes.size()) {
      ctx.fail("shape has {} elements but there are {} axes to crop or pad", shape.size(),
               axes.size());
    }
    CropPad c{input.shape, Shape(static_cast<size_t>(input.rank()), 0)};
    for (size_t k = 0; k < axes.size(); ++k) {
      const int64_t axis = axes[k];
      const int64_t from = input.shape[axis];
      const int64_t to = shape[k];
      if (to < 0) ctx.fail("shape [{}] has a negative size", fmt::join(shape, ","));
      c.shape[axis] = to;
      c.shift[axis] = to < from ? (from - to) / 2 : -((to - from) / 2);
    }
    return c;
  }
};

std::vector<TensorType> center_crop_pad_shape(const ShapeContext& ctx) {
  const TensorType& input = ctx.input_type(0);
  return {{input.dtype, CropPad::read(ctx, input, ctx.input_value(1)).shape}};
}

std::vector<Tensor> center_crop_pad_kernel(const KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  const CropPad c = CropPad::read(ctx, input.type(), ctx.input(1));
  const Shape strides = row_major_strides(input.shape());
  Tensor output = ctx.make_output(0);
  int64_t flat = 0;
  for_each_index(output.shape(), [&](const Shape& index) {
    int64_t offset = 0;
    bool inside = true;
    for (size_t d = 0; d < index.size() && inside; ++d) {
      const int64_t i = index[d] + c.shift[d];
      inside = i >= 0 && i < input.shape()[d];
      offset += i * strides[d];
    }
    if (inside) copy_element(input, offset, output, flat);  // else it stays zero
    ++flat;
  });
  return single_output(std::move(output));
}

}  // namespace

void register_center_crop_pad_ops(OpRegistry& registry) {
  registry.add({.name = "CenterCropPad",
                .min_opset = 18,
                .min_inputs = 2,
                .max_inputs = 2,
                .fusion = FusionKind::opaque,
                .shape_rule = center_crop_pad_shape,
                .kernel = center_crop_pad_kernel});
}

}  // namespace minic
