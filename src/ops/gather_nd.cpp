// GatherND: read slices of `data` at coordinate tuples given by an index tensor.
// Course module 2.
//
// `indices` has shape [b..., j..., k]: its last dimension holds tuples of k coordinates.
// The first `batch_dims` dimensions (attribute, opset 12; default 0) are shared with data
// and index it one to one; each tuple then names a slice of the batch entry:
//   out[b..., j..., rest...] = data[b..., indices[b..., j..., 0], ..., indices[b..., j..., k-1],
//                                   rest...]
// so the output shape is indices.shape[:-1] followed by data.shape[batch_dims + k:].
// Indices may be negative (counting from the end); one outside [-n, n) is an error naming
// the node, never an out-of-bounds read. The kernel copies bytes, so it serves every
// element type.
//
// Fusion kind: opaque. Where an output element comes from depends on the *values* of the
// indices.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/op.h"
#include "movement.h"

#include <algorithm>
#include <cstring>

namespace minic {

namespace {

struct GatherNDLayout {
  int64_t batch_dims = 0;
  int64_t k = 0;  // coordinates in one index tuple
};

GatherNDLayout read_layout(const NodeContext& ctx, const TensorType& data,
                           const TensorType& indices) {
  GatherNDLayout layout;
  layout.batch_dims = ctx.get_int("batch_dims", 0);
  if (layout.batch_dims != 0 && ctx.opset() < 12) {
    ctx.fail("batch_dims needs opset 12 or later; the model's opset is {}", ctx.opset());
  }
  if (data.rank() == 0) ctx.fail("cannot gather from a scalar");
  if (indices.rank() == 0) ctx.fail("indices must have rank 1 or more, not a scalar");
  if (layout.batch_dims < 0 || layout.batch_dims >= std::min(data.rank(), indices.rank())) {
    ctx.fail("batch_dims {} must be in [0, {}), below the ranks of data {} and indices {}",
             layout.batch_dims, std::min(data.rank(), indices.rank()), type_string(data),
             type_string(indices));
  }
  layout.k = indices.shape.back();
  if (layout.k < 1 || layout.k > data.rank() - layout.batch_dims) {
    ctx.fail("indices {} name {} coordinates; with batch_dims {} data {} takes 1 to {}",
             type_string(indices), layout.k, layout.batch_dims, type_string(data),
             data.rank() - layout.batch_dims);
  }
  return layout;
}

std::vector<TensorType> gather_nd_shape(const ShapeContext& ctx) {
  const TensorType& data = ctx.input_type(0);
  const TensorType& indices = ctx.input_type(1);
  if (indices.dtype != DType::i32 && indices.dtype != DType::i64) {
    ctx.fail("indices must be i32 or i64, not {}", type_string(indices));
  }
  const GatherNDLayout layout = read_layout(ctx, data, indices);
  for (int64_t d = 0; d < layout.batch_dims; ++d) {
    if (data.shape[d] != indices.shape[d]) {
      ctx.fail("batch dimension {} differs: data {} but indices {}", d, type_string(data),
               type_string(indices));
    }
  }
  Shape shape(indices.shape.begin(), indices.shape.end() - 1);
  shape.insert(shape.end(), data.shape.begin() + layout.batch_dims + layout.k, data.shape.end());
  return {{data.dtype, shape}};
}

std::vector<Tensor> gather_nd_kernel(const KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const GatherNDLayout layout = read_layout(ctx, data.type(), indices.type());
  const int64_t b = layout.batch_dims;
  const int64_t k = layout.k;
  // data read as [batches, entry...]: one entry per batch index, of shape data.shape[b:].
  const Shape entry_shape(data.shape().begin() + b, data.shape().end());
  const Shape strides = row_major_strides(entry_shape);
  const int64_t entry = num_elements(entry_shape);
  int64_t slice = 1;  // elements of the slice one tuple names
  for (int64_t d = b + k; d < data.rank(); ++d) slice *= data.shape()[d];
  const int64_t batches = num_elements(Shape(data.shape().begin(), data.shape().begin() + b));
  const int64_t tuples_per_batch =
      num_elements(Shape(indices.shape().begin() + b, indices.shape().end() - 1));

  Tensor output = ctx.make_output(0);
  const int64_t element = dtype_size(data.dtype());
  for (int64_t n = 0; n < batches; ++n) {
    for (int64_t t = 0; t < tuples_per_batch; ++t) {
      const int64_t tuple = n * tuples_per_batch + t;
      int64_t source = n * entry;
      for (int64_t d = 0; d < k; ++d) {
        const int64_t size = entry_shape[d];
        const int64_t index = indices.as_int64(tuple * k + d);
        if (index < -size || index >= size) {
          ctx.fail("index {} is out of range for axis {} of size {}", index, b + d, size);
        }
        source += (index < 0 ? index + size : index) * strides[d];
      }
      if (slice == 0) continue;
      std::memcpy(output.bytes().data() + tuple * slice * element,
                  data.bytes().data() + source * element, static_cast<size_t>(slice * element));
    }
  }
  return single_output(std::move(output));
}

}  // namespace

void register_gather_nd_ops(OpRegistry& registry) {
  registry.add({.name = "GatherND",
                .min_opset = 11,
                .min_inputs = 2,
                .max_inputs = 2,
                .fusion = FusionKind::opaque,
                .shape_rule = gather_nd_shape,
                .kernel = gather_nd_kernel});
}

}  // namespace minic
