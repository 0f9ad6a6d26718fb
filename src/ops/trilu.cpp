// Trilu: keeps the upper or lower triangle of the matrices in the last two dimensions.
// Course module 2.
//
// For element (row i, column j) of each matrix, with the diagonal offset k (optional
// input 1, default 0):
//   upper = 1 (default): keep where j - i >= k      lower (upper = 0): keep where j - i <= k
// and the rest become zero. Zero is all-zero bytes in every element type minic has, so the
// kernel copies the input and clears the dropped elements, whatever the type.
// Fusion kind: elementwise. Each output element reads the input element at the same
// position; whether it keeps it depends only on that position.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/compute.h"
#include "minic/ops/op.h"
#include "movement.h"

#include <cstring>

namespace minic {

namespace {

std::vector<TensorType> trilu_shape(const ShapeContext& ctx) {
  const TensorType& input = ctx.input_type(0);
  if (input.rank() < 2) ctx.fail("input must have rank 2 or more, not {}", type_string(input));
  if (ctx.has_input(1)) {
    const TensorType& k = ctx.input_type(1);
    if (!is_int(k.dtype) || k.num_elements() != 1) {
      ctx.fail("k must be one integer, not {}", type_string(k));
    }
  }
  return {input};
}

std::vector<Tensor> trilu_kernel(const KernelContext& ctx) {
  Tensor output = ctx.input(0);
  const bool upper = ctx.get_int("upper", 1) != 0;
  const int64_t k = ctx.has_input(1) ? ctx.input(1).as_int64(0) : 0;
  const int64_t rows = output.shape()[output.rank() - 2];
  const int64_t columns = output.shape()[output.rank() - 1];
  const size_t element = static_cast<size_t>(dtype_size(output.dtype()));
  std::byte* data = output.bytes().data();
  for (int64_t flat = 0; flat < output.num_elements(); ++flat) {
    const int64_t j = flat % columns;
    const int64_t i = (flat / columns) % rows;
    const bool keep = upper ? j - i >= k : j - i <= k;
    if (!keep) std::memset(data + flat * element, 0, element);
  }
  return single_output(std::move(output));
}

// Compute rule (course module 3): a select on the position, with k loaded from its input.
std::vector<ComputeTensor> trilu_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const bool upper = ctx.get_int("upper", 1) != 0;
  const TensorType& type = ctx.output_type(0);
  return {ctx.compute("trilu", type, [&](const Indices& i) {
    loop::Expr k = index(0);
    if (ctx.has_input(1)) {
      const ComputeTensor& offset_input = ctx.input(1);
      k = cast(DType::i64, offset_input(Indices(offset_input.rank(), index(0))));
    }
    loop::Expr offset = i[i.size() - 1] - i[i.size() - 2];
    loop::Expr keep = upper ? loop::GE::make(offset, k) : loop::LE::make(offset, k);
    return select(keep, x(i), constant(type.dtype, 0));
  })};
}

}  // namespace

void register_trilu_ops(OpRegistry& registry) {
  registry.add({.name = "Trilu",
                .min_opset = 14,
                .max_inputs = 2,
                .fusion = FusionKind::elementwise,
                .shape_rule = trilu_shape,
                .kernel = trilu_kernel,
                .compute = trilu_compute});
}

}  // namespace minic
