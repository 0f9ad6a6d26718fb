// Col2Im: sums sliding blocks (columns) back into an image, the inverse layout of im2col.
// Course module 2.
//
// The input has shape (N, C * prod(block_shape), L): for each of the L block positions, a
// column holding one block of every channel. image_shape (input 1) and block_shape
// (input 2) have r elements each; with the attributes strides, dilations (default 1) and
// pads (default 0, the r begin pads then the r end pads) there are, along axis d,
//   blocks[d] = (image[d] + pad_begin[d] + pad_end[d] - dilation[d] * (block[d] - 1) - 1)
//               / stride[d] + 1
// block positions, and L must be their product. The output (N, C, image...) starts at zero
// and column element (n, c * prod(block) + k, l), with k and l read as multi-indices over
// block_shape and blocks, is added to pixel
//   pixel[d] = l[d] * stride[d] - pad_begin[d] + k[d] * dilation[d]
// when that lies inside the image (pads drop what falls outside). The kernel sums in double.
// Fusion kind: opaque. Several column elements add into one pixel.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "broadcast.h"
#include "float_compute.h"
#include "movement.h"

namespace minic {

namespace {

struct Col2ImGeometry {
  Shape image;
  Shape block;
  Shape strides;
  Shape dilations;
  Shape pad_begin;
  Shape blocks;  // block positions along each axis

  static Col2ImGeometry read(const NodeContext& ctx, const TensorType& input,
                             const Tensor& image_shape, const Tensor& block_shape) {
    Col2ImGeometry g;
    g.image = int_list(ctx, image_shape, "image_shape");
    g.block = int_list(ctx, block_shape, "block_shape");
    const size_t rank = g.image.size();
    if (rank == 0 || g.block.size() != rank) {
      ctx.fail("image_shape and block_shape must have the same number (>= 1) of elements, "
               "not {} and {}", g.image.size(), g.block.size());
    }
    g.strides = ctx.get_ints("strides", Shape(rank, 1));
    g.dilations = ctx.get_ints("dilations", Shape(rank, 1));
    Shape pads = ctx.get_ints("pads", Shape(2 * rank, 0));
    if (g.strides.size() != rank || g.dilations.size() != rank || pads.size() != 2 * rank) {
      ctx.fail("strides and dilations need {} values and pads {}, not {}, {} and {}", rank,
               2 * rank, g.strides.size(), g.dilations.size(), pads.size());
    }
    for (size_t d = 0; d < rank; ++d) {
      if (g.image[d] < 1 || g.block[d] < 1) {
        ctx.fail("image_shape [{}] and block_shape [{}] must be positive",
                 fmt::join(g.image, ","), fmt::join(g.block, ","));
      }
      if (g.strides[d] < 1 || g.dilations[d] < 1 || pads[d] < 0 || pads[rank + d] < 0) {
        ctx.fail("strides and dilations must be positive and pads non-negative");
      }
      int64_t span = g.image[d] + pads[d] + pads[rank + d] - g.dilations[d] * (g.block[d] - 1) - 1;
      if (span < 0) {
        ctx.fail("a block of {} dilated by {} does not fit image axis {} of {} with pads",
                 g.block[d], g.dilations[d], d, g.image[d]);
      }
      g.blocks.push_back(span / g.strides[d] + 1);
    }
    g.pad_begin.assign(pads.begin(), pads.begin() + static_cast<int64_t>(rank));

    if (input.rank() != 3) {
      ctx.fail("input must be 3-D (N, C * block size, L), not {}", type_string(input));
    }
    const int64_t block_size = num_elements(g.block);
    if (input.shape[1] % block_size != 0) {
      ctx.fail("input dimension 1 ({}) is not a multiple of the block size {}", input.shape[1],
               block_size);
    }
    if (input.shape[2] != num_elements(g.blocks)) {
      ctx.fail("input dimension 2 ({}) must be the number of block positions [{}] = {}",
               input.shape[2], fmt::join(g.blocks, ","), num_elements(g.blocks));
    }
    return g;
  }
};

std::vector<TensorType> col2im_shape(const ShapeContext& ctx) {
  const TensorType& input = ctx.input_type(0);
  visit_float_dtype(ctx, input.dtype, "input", []<typename T>() {});
  Col2ImGeometry g = Col2ImGeometry::read(ctx, input, ctx.input_value(1), ctx.input_value(2));
  Shape shape = {input.shape[0], input.shape[1] / num_elements(g.block)};
  shape.insert(shape.end(), g.image.begin(), g.image.end());
  return {{input.dtype, shape}};
}

std::vector<Tensor> col2im_kernel(const KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  const Col2ImGeometry g =
      Col2ImGeometry::read(ctx, input.type(), ctx.input(1), ctx.input(2));
  const TensorType& out_type = ctx.output_type(0);
  const int64_t planes = out_type.shape[0] * out_type.shape[1];  // N * C
  const int64_t block_size = num_elements(g.block);
  const int64_t positions = num_elements(g.blocks);
  const int64_t image_size = num_elements(g.image);
  const Shape image_strides = row_major_strides(g.image);
  const std::vector<double> columns = input.to_double_vector();
  std::vector<double> out(static_cast<size_t>(out_type.num_elements()), 0.0);

  // Where (k, l) lands in the image, the same for every plane; -1 where it falls outside.
  std::vector<int64_t> target;
  for_each_index(g.block, [&](const Shape& k) {
    for_each_index(g.blocks, [&](const Shape& l) {
      int64_t offset = 0;
      for (size_t d = 0; d < g.image.size() && offset >= 0; ++d) {
        const int64_t pixel = l[d] * g.strides[d] - g.pad_begin[d] + k[d] * g.dilations[d];
        offset = pixel < 0 || pixel >= g.image[d] ? -1 : offset + pixel * image_strides[d];
      }
      target.push_back(offset);
    });
  });
  for (int64_t plane = 0; plane < planes; ++plane) {
    const double* column = columns.data() + plane * block_size * positions;
    double* pixels = out.data() + plane * image_size;
    for (int64_t i = 0; i < block_size * positions; ++i) {
      if (target[i] >= 0) pixels[target[i]] += column[i];
    }
  }
  return single_output(Tensor::from_vector<double>(out_type.shape, out).cast(out_type.dtype));
}

}  // namespace

void register_col2im_ops(OpRegistry& registry) {
  registry.add({.name = "Col2Im",
                .min_opset = 18,
                .min_inputs = 3,
                .max_inputs = 3,
                .fusion = FusionKind::opaque,
                .shape_rule = col2im_shape,
                .kernel = col2im_kernel});
}

}  // namespace minic
