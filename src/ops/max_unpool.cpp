// MaxUnpool: the partial inverse of MaxPool. Puts each pooled value back where MaxPool
// found it and zeros everything else. Course module 2.
//
// X (N, C, d1, ..., dr) holds pooled values and I (same shape) the flat row-major index of
// each one in MaxPool's input, as MaxPool's second output gives it. With the attributes
// kernel_shape, strides (default 1) and pads (default 0, begin pads then end pads), that
// input had the shape
//   unpooled = (N, C, ..., (d - 1) * stride + kernel - pad_begin - pad_end, ...)
// and the output starts as zeros of that shape with
//   output.flat[I[i]] = X.flat[i]          (for every element i; a later i wins a tie)
// The optional input output_shape gives a larger output: the unpooled tensor then sits in
// its leading corner (the rest stays zero), as in ONNX's reference.
// Fusion kind: opaque. The kernel is a scatter to positions that are data.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "broadcast.h"
#include "movement.h"

namespace minic {

namespace {

// The shape MaxPool's input had, from X's shape and the attributes.
Shape unpooled_shape(const NodeContext& ctx, const TensorType& x) {
  if (x.rank() < 3) ctx.fail("input X must be (N, C, d1, ...), not {}", type_string(x));
  const size_t rank = static_cast<size_t>(x.rank() - 2);
  const Shape kernel = ctx.get_ints("kernel_shape");
  const Shape strides = ctx.get_ints("strides", Shape(rank, 1));
  const Shape pads = ctx.get_ints("pads", Shape(2 * rank, 0));
  if (kernel.size() != rank || strides.size() != rank || pads.size() != 2 * rank) {
    ctx.fail("X {} has {} spatial axes: kernel_shape and strides need {} values and pads {}, "
             "not {}, {} and {}", type_string(x), rank, rank, 2 * rank, kernel.size(),
             strides.size(), pads.size());
  }
  Shape shape = {x.shape[0], x.shape[1]};
  for (size_t d = 0; d < rank; ++d) {
    if (kernel[d] < 1 || strides[d] < 1 || pads[d] < 0 || pads[rank + d] < 0) {
      ctx.fail("kernel_shape and strides must be positive and pads non-negative");
    }
    const int64_t size = (x.shape[2 + d] - 1) * strides[d] + kernel[d] - pads[d] - pads[rank + d];
    if (size < 0) ctx.fail("the pads leave spatial axis {} a negative size {}", d, size);
    shape.push_back(size);
  }
  return shape;
}

std::vector<TensorType> max_unpool_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  const TensorType& indices = ctx.input_type(1);
  if (indices.dtype != DType::i64 || indices.shape != x.shape) {
    ctx.fail("I must be i64 of X's shape {}, not {}", shape_string(x.shape),
             type_string(indices));
  }
  Shape shape = unpooled_shape(ctx, x);
  if (ctx.has_input(2)) {
    Shape requested = int_list(ctx, ctx.input_value(2), "output_shape");
    bool fits = requested.size() == shape.size() && requested[0] == shape[0] &&
                requested[1] == shape[1];
    for (size_t d = 2; fits && d < shape.size(); ++d) fits = requested[d] >= shape[d];
    if (!fits) {
      ctx.fail("output_shape {} must keep N and C and be at least the unpooled shape {}",
               shape_string(requested), shape_string(shape));
    }
    shape = requested;
  }
  return {{x.dtype, shape}};
}

std::vector<Tensor> max_unpool_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<int64_t> indices = ctx.input(1).to_int64_vector();
  const Shape unpooled = unpooled_shape(ctx, x.type());
  Tensor output = ctx.make_output(0);
  // Unpooled element k is output element offset_of(its multi-index, output strides).
  const Shape strides = row_major_strides(output.shape());
  const int64_t unpooled_size = num_elements(unpooled);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    int64_t k = indices[i];
    if (k < 0 || k >= unpooled_size) {
      ctx.fail("I[{}] = {} is outside the unpooled tensor {} ({} elements)", i, k,
               shape_string(unpooled), unpooled_size);
    }
    int64_t offset = 0;
    for (int64_t d = static_cast<int64_t>(unpooled.size()) - 1; d >= 0; --d) {
      offset += (k % unpooled[d]) * strides[d];
      k /= unpooled[d];
    }
    copy_element(x, i, output, offset);
  }
  return single_output(std::move(output));
}

}  // namespace

void register_max_unpool_ops(OpRegistry& registry) {
  registry.add({.name = "MaxUnpool",
                .min_opset = 11,
                .min_inputs = 2,
                .max_inputs = 3,
                .fusion = FusionKind::opaque,
                .shape_rule = max_unpool_shape,
                .kernel = max_unpool_kernel});
}

}  // namespace minic
