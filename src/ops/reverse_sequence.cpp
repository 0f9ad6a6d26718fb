// ReverseSequence: reverse the first sequence_lens[b] steps of each sequence in a batch.
// Course module 2.
//
// The input has a batch axis and a time axis (attributes batch_axis, default 1, and
// time_axis, default 0: one is 0 and the other 1). For batch entry b with length
// L = sequence_lens[b] (0 <= L <= the time size; 0 and 1 change nothing):
//   y[.., b, t, ..] = x[.., b, L - 1 - t, ..]   for t < L
//   y[.., b, t, ..] = x[.., b, t, ..]           for t >= L
// (written with the batch axis first; the time axis may come first as well). The kernel
// copies bytes, so it serves every element type.
//
// Fusion kind: opaque. Where an output element comes from depends on the values of
// sequence_lens, not on its position alone.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/op.h"
#include "movement.h"

namespace minic {

namespace {

struct SequenceAxes {
  int64_t batch = 1;
  int64_t time = 0;

  static SequenceAxes read(const NodeContext& ctx) {
    SequenceAxes axes{ctx.get_int("batch_axis", 1), ctx.get_int("time_axis", 0)};
    const bool valid = (axes.batch == 0 && axes.time == 1) || (axes.batch == 1 && axes.time == 0);
    if (!valid) {
      ctx.fail("batch_axis and time_axis must be 0 and 1 in either order, not {} and {}",
               axes.batch, axes.time);
    }
    return axes;
  }
};

std::vector<TensorType> reverse_sequence_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  const TensorType& lens = ctx.input_type(1);
  const SequenceAxes axes = SequenceAxes::read(ctx);
  if (x.rank() < 2) ctx.fail("input must have rank 2 or more, not {}", type_string(x));
  const int64_t batch = x.shape[axes.batch];
  if (lens.dtype != DType::i64 || lens.rank() != 1 || lens.shape[0] != batch) {
    ctx.fail("sequence_lens must be i64[{}], one length per batch entry, not {}", batch,
             type_string(lens));
  }
  return {x};
}

std::vector<Tensor> reverse_sequence_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<int64_t> lens = ctx.input(1).to_int64_vector();
  const SequenceAxes axes = SequenceAxes::read(ctx);
  const int64_t time_size = x.shape()[axes.time];
  for (size_t b = 0; b < lens.size(); ++b) {
    if (lens[b] < 0 || lens[b] > time_size) {
      ctx.fail("sequence_lens[{}] = {} is outside [0, {}], the size of the time axis", b,
               lens[b], time_size);
    }
  }
  const Shape strides = row_major_strides(x.shape());
  Tensor y = ctx.make_output(0);
  int64_t flat = 0;
  for_each_index(x.shape(), [&](const Shape& index) {
    Shape source = index;
    const int64_t length = lens[index[axes.batch]];
    const int64_t t = index[axes.time];
    if (t < length) source[axes.time] = length - 1 - t;
    copy_element(x, offset_of(source, strides), y, flat++);
  });
  return single_output(std::move(y));
}

}  // namespace

void register_reverse_sequence_ops(OpRegistry& registry) {
  registry.add({.name = "ReverseSequence",
                .min_opset = 10,
                .min_inputs = 2,
                .max_inputs = 2,
                .fusion = FusionKind::opaque,
                .shape_rule = reverse_sequence_shape,
                .kernel = reverse_sequence_kernel});
}

}  // namespace minic
