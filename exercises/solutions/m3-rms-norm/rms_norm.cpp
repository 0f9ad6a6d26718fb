// Exercise m3-rms-norm, solved: the compute rule of RMSNormalization. Course module 3.
//
//   Y = X / sqrt(mean over the axes from `axis` on of X^2 + epsilon) * Scale
//
// Two stages besides the output: the sum of squares of each row (a reduction, so a buffer
// of its own) and its inverse square root, which is inlined into the output's formula.
// Computed in f32 (f16 and bf16 inputs too, as accumulation_dtype says).
//
// Chapter: docs/module3-loop-ir.md#5-lowering-compute-rules
#include "minic/ops/compute.h"

namespace minic {
namespace {

std::vector<ComputeTensor> rms_norm_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const ComputeTensor& scale = ctx.input(1);
  const auto axis = static_cast<size_t>(ctx.normalize_axis(ctx.get_int("axis", -1), x.rank()));
  const double epsilon = ctx.get_float("epsilon", 1e-5f);
  const DType acc = accumulation_dtype(x.dtype());

  // A row is X's elements that share the indices before `axis`; its statistics live at
  // those indices, with 0 along the normalised axes (extent 1).
  Shape row_shape = x.shape();
  Shape normalized(row_shape.begin() + static_cast<int64_t>(axis), row_shape.end());
  std::fill(row_shape.begin() + static_cast<int64_t>(axis), row_shape.end(), 1);
  const TensorType rows{acc, row_shape};
  const double n = static_cast<double>(num_elements(normalized));
  auto row_of = [&](const Indices& i) {
    Indices at(i.begin(), i.begin() + static_cast<int64_t>(axis));
    at.resize(i.size(), index(0));
    return at;
  };

  ComputeTensor squares = ctx.reduce("rms_squares", rows, normalized, Reducer::sum,
                                     [&](const Indices& i, const Indices& r) {
    Indices at(i.begin(), i.begin() + static_cast<int64_t>(axis));
    at.insert(at.end(), r.begin(), r.end());
    loop::Expr value = cast(acc, x(at));
    return value * value;
  });
  ComputeTensor inv_rms = ctx.compute("rms_inv", rows, [&](const Indices& i) {
    loop::Expr mean_square = loop::Div::make(squares(i), constant(acc, n));
    return loop::Div::make(constant(acc, 1), call("sqrt", {mean_square + constant(acc, epsilon)}));
  });
  const TensorType& type = ctx.output_type(0);
  return {ctx.compute("rmsnorm", type, [&](const Indices& i) {
    loop::Expr y = cast(acc, x(i)) * inv_rms(row_of(i));
    return cast(type.dtype, y * cast(acc, scale(broadcast_indices(i, scale.shape()))));
  })};
}

}  // namespace

MINIC_REGISTER_COMPUTE_RULE("RMSNormalization", rms_norm_compute);

}  // namespace minic
