// Concat and Split: join tensors along an axis, and cut one into pieces along an axis.
// Course module 2.
//
// Both kernels see a tensor as `outer` blocks (the dimensions before the axis), each a
// contiguous run of bytes: in Concat, block o of the output is block o of every input
// laid end to end; Split does the reverse. The kernels copy those runs with memcpy, so
// they serve every element type. Fusion kind: injective (each output element reads one
// input element).
//
// Split's piece sizes come from, by opset: the `split` attribute (before 13), the
// optional `split` input (13 on), or the `num_outputs` attribute (18 on), which cuts
// pieces of ceil(size / num_outputs) with a smaller last one. With none of them the axis
// is cut into as many equal pieces as the node has outputs.
//
// Compute rules (course module 3): Concat reads, for output position p along the axis, the
// input whose range holds p, through a chain of selects (which evaluate only the side they
// pick, so no input is read outside its shape); Split's piece k reads the input shifted
// by the sizes of the pieces before it.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/compute.h"
#include "minic/ops/op.h"
#include "movement.h"

#include <cstring>
#include <limits>

namespace minic {

namespace {

// The product of the dimensions of `shape` before `axis`.
int64_t outer_size(const Shape& shape, int64_t axis) {
  int64_t size = 1;
  for (int64_t d = 0; d < axis; ++d) size *= shape[d];
  return size;
}

// The bytes in one step along `axis` of a tensor: the product of the later dimensions
// times the element size.
int64_t inner_bytes(const TensorType& type, int64_t axis) {
  int64_t size = dtype_size(type.dtype);
  for (int64_t d = axis + 1; d < type.rank(); ++d) size *= type.shape[d];
  return size;
}

// --- Concat -----------------------------------------------------------------------------------

int64_t concat_axis(const NodeContext& ctx, int64_t rank) {
  const int64_t axis = ctx.opset() < 4 ? ctx.get_int("axis", 1) : ctx.get_int("axis");
  return ctx.normalize_axis(axis, rank);
}

std::vector<TensorType> concat_shape(const ShapeContext& ctx) {
  const TensorType& first = ctx.input_type(0);
  const int64_t axis = concat_axis(ctx, first.rank());
  TensorType result = first;
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    const TensorType& input = ctx.input_type(i);
    bool fits = input.dtype == first.dtype && input.rank() == first.rank();
    for (int64_t d = 0; fits && d < first.rank(); ++d) {
      fits = d == axis || input.shape[d] == first.shape[d];
    }
    if (!fits) {
      ctx.fail("input {} is {}, which cannot be joined to input 0, {}, along axis {}", i,
               type_string(input), type_string(first), axis);
    }
    result.shape[axis] += input.shape[axis];
  }
  return {result};
}

std::vector<Tensor> concat_kernel(const KernelContext& ctx) {
  Tensor output = ctx.make_output(0);
  if (output.num_elements() == 0) return single_output(std::move(output));
  const int64_t axis = concat_axis(ctx, output.rank());
  const int64_t outer = outer_size(output.shape(), axis);
  std::byte* out = output.bytes().data();
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& input = ctx.input(i);
      const int64_t block = input.shape()[axis] * inner_bytes(input.type(), axis);
      if (block == 0) continue;  // an empty input (memcpy must not see null pointers)
      std::memcpy(out, input.bytes().data() + o * block, static_cast<size_t>(block));
      out += block;
    }
  }
  return single_output(std::move(output));
}

// --- Split ------------------------------------------------------------------------------------

// The sizes of the pieces, one per output, checked to add up to `size`.
std::vector<int64_t> split_sizes(const ShapeContext& ctx, int64_t size) {
  const int64_t pieces = static_cast<int64_t>(ctx.num_outputs());
  std::vector<int64_t> sizes;
  if (ctx.opset() < 13 && ctx.has_attr("split")) {
    sizes = ctx.get_ints("split");
  } else if (ctx.opset() >= 13 && ctx.has_input(1)) {
    sizes = int_list(ctx, ctx.input_value(1), "split");
  } else if (ctx.opset() >= 18 && ctx.has_attr("num_outputs")) {
    const int64_t count = ctx.get_int("num_outputs");
    if (count != pieces) ctx.fail("num_outputs is {} but the node has {} outputs", count, pieces);
    const int64_t chunk = (size + pieces - 1) / pieces;
    const int64_t last = size - chunk * (pieces - 1);
    if (last < 0) ctx.fail("cannot cut a dimension of {} into {} pieces", size, pieces);
    sizes.assign(static_cast<size_t>(pieces), chunk);
    sizes.back() = last;
  } else {
    if (size % pieces != 0) {
      ctx.fail("cannot cut a dimension of {} into {} equal pieces", size, pieces);
    }
    sizes.assign(static_cast<size_t>(pieces), size / pieces);
  }
  if (static_cast<int64_t>(sizes.size()) != pieces) {
    ctx.fail("split gives {} sizes but the node has {} outputs", sizes.size(), pieces);
  }
  int64_t total = 0;
  for (int64_t piece : sizes) {
    if (piece < 0 || piece > size) ctx.fail("split has the invalid size {}", piece);
    total += piece;
  }
  if (total != size) {
    ctx.fail("split sizes [{}] add up to {}, not the dimension's {}", fmt::join(sizes, ","), total,
             size);
  }
  return sizes;
}

std::vector<TensorType> split_shape(const ShapeContext& ctx) {
  const TensorType& input = ctx.input_type(0);
  const int64_t axis = ctx.normalize_axis(ctx.get_int("axis", 0), input.rank());
  std::vector<TensorType> types;
  for (int64_t size : split_sizes(ctx, input.shape[axis])) {
    TensorType piece = input;
    piece.shape[axis] = size;
    types.push_back(piece);
  }
  return types;
}

// The piece sizes are read back from the output types the shape rule set.
std::vector<Tensor> split_kernel(const KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  const int64_t axis = ctx.normalize_axis(ctx.get_int("axis", 0), input.rank());
  const int64_t outer = outer_size(input.shape(), axis);
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < ctx.num_outputs(); ++i) outputs.push_back(ctx.make_output(i));
  if (input.num_elements() == 0) return outputs;
  const std::byte* in = input.bytes().data();
  for (int64_t o = 0; o < outer; ++o) {
    for (Tensor& output : outputs) {
      const int64_t block = output.shape()[axis] * inner_bytes(output.type(), axis);
      if (block == 0) continue;  // an empty piece (memcpy must not see null pointers)
      std::memcpy(output.bytes().data() + o * block, in, static_cast<size_t>(block));
      in += block;
    }
  }
  return outputs;
}

// --- compute rules ----------------------------------------------------------------------------

std::vector<ComputeTensor> concat_compute(const ComputeContext& ctx) {
  const TensorType& type = ctx.output_type(0);
  const int64_t axis = concat_axis(ctx, type.rank());
  return {ctx.compute("concat", type, [&](const Indices& i) {
    // Built from the last input back: select(p < end of input k, input k, later inputs).
    loop::Expr result;
    int64_t end = type.shape[axis];
    for (size_t k = ctx.num_inputs(); k-- > 0;) {
      const ComputeTensor& input = ctx.input(k);
      const int64_t begin = end - input.dim(axis);
      if (input.dim(axis) > 0) {
        Indices shifted = i;
        if (begin != 0) shifted[axis] = i[axis] - begin;
        loop::Expr value = input(shifted);
        result = result ? select(loop::LT::make(i[axis], index(end)), value, result) : value;
      }
      end = begin;
    }
    return result ? result : constant(type.dtype, 0);
  })};
}

std::vector<ComputeTensor> split_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const int64_t axis = ctx.normalize_axis(ctx.get_int("axis", 0), x.rank());
  std::vector<ComputeTensor> pieces;
  int64_t begin = 0;
  for (size_t k = 0; k < ctx.num_outputs(); ++k) {
    const TensorType& type = ctx.output_type(k);
    pieces.push_back(ctx.compute("split", type, [&](const Indices& i) {
      Indices shifted = i;
      if (begin != 0) shifted[axis] = i[axis] + begin;
      return x(shifted);
    }));
    begin += type.shape[axis];
  }
  return pieces;
}

}  // namespace

void register_concat_split_ops(OpRegistry& registry) {
  registry.add({.name = "Concat",
                .min_opset = 1,
                .max_inputs = std::numeric_limits<int>::max(),
                .fusion = FusionKind::injective,
                .shape_rule = concat_shape,
                .kernel = concat_kernel,
                .compute = concat_compute});
  registry.add({.name = "Split",
                .min_opset = 2,
                .max_inputs = 2,
                .max_outputs = std::numeric_limits<int>::max(),
                .fusion = FusionKind::injective,
                .shape_rule = split_shape,
                .kernel = split_kernel,
                .compute = split_compute});
}

}  // namespace minic
