// minic.MatMulPanels: a matrix product whose B is stored in panels of columns
// (include/minic/ops/matmul_panels.h), and the packing of B into them. Course module 4.
//
// The reference unpacks B and multiplies as MatMul does (the same products, added in the
// same order k = 0, 1, ...), so the pass that makes this op keeps results bit for bit.
// The compute rule is MatMul's reduction with B read at [j / P, k, j % P]: once the GEMM
// rule splits j by P, the index simplifies to [jo, k, ji], and each step of the reduction
// reads P consecutive elements of one contiguous panel.
//
// Chapter: docs/module4-schedules.md#4-the-default-cpu-schedule
#include "minic/ops/matmul_panels.h"

#include "matmul.h"
#include "minic/ops/compute.h"
#include "minic/ops/op.h"
#include "minic/support/error.h"

#include <algorithm>
#include <cstring>

namespace minic {

namespace {

// For each row p of each panel q of a [K, N] matrix in panels of `width` columns, the run
// of elements both layouts hold in order: `copy(panel_offset, matrix_offset, count)`, in
// elements. Row p of panel q is columns q * width ... of the matrix's row p.
template <typename Copy>
void for_each_panel_row(int64_t k, int64_t n, int64_t width, Copy copy) {
  for (int64_t q = 0; q * width < n; ++q) {
    const int64_t count = std::min(width, n - q * width);
    for (int64_t p = 0; p < k; ++p) copy((q * k + p) * width, p * n + q * width, count);
  }
}

}  // namespace

Tensor pack_panels(const Tensor& b, int64_t width) {
  MINIC_CHECK(b.rank() == 2 && width > 0);
  const int64_t k = b.shape()[0];
  const int64_t n = b.shape()[1];
  const size_t size = static_cast<size_t>(dtype_size(b.dtype()));
  Tensor result(b.dtype(), {(n + width - 1) / width, k, width});  // zero past column N
  const std::byte* from = b.bytes().data();
  std::byte* to = result.bytes().data();
  for_each_panel_row(k, n, width, [&](int64_t panel, int64_t matrix, int64_t count) {
    std::memcpy(to + panel * size, from + matrix * size, static_cast<size_t>(count) * size);
  });
  return result;
}

Tensor unpack_panels(const Tensor& panels, int64_t columns) {
  MINIC_CHECK(panels.rank() == 3);
  const int64_t k = panels.shape()[1];
  const int64_t width = panels.shape()[2];
  MINIC_CHECK(columns > (panels.shape()[0] - 1) * width && columns <= panels.shape()[0] * width);
  const size_t size = static_cast<size_t>(dtype_size(panels.dtype()));
  Tensor result(panels.dtype(), {k, columns});
  const std::byte* from = panels.bytes().data();
  std::byte* to = result.bytes().data();
  for_each_panel_row(k, columns, width, [&](int64_t panel, int64_t matrix, int64_t count) {
    std::memcpy(to + matrix * size, from + panel * size, static_cast<size_t>(count) * size);
  });
  return result;
}

namespace {

// B as MatMul reads it: [K, N], N the `columns` attribute. An error where the panels do
// not fit A or the attribute.
Shape logical_b_shape(const NodeContext& ctx, const TensorType& a, const TensorType& panels) {
  if (a.rank() < 2) ctx.fail("A is {}; it must have rows and columns", type_string(a));
  if (panels.dtype != a.dtype) {
    ctx.fail("B_panels is {} but A is {}; they must have the same element type",
             type_string(panels), type_string(a));
  }
  const int64_t k = a.shape.back();
  if (panels.rank() != 3 || panels.shape[1] != k || panels.shape[2] < 1) {
    ctx.fail("B_panels is {}; for A {} it must be [panels, {}, width]", type_string(panels),
             type_string(a), k);
  }
  const int64_t columns = ctx.get_int("columns");
  const int64_t width = panels.shape[2];
  if (columns <= (panels.shape[0] - 1) * width || columns > panels.shape[0] * width) {
    ctx.fail("columns = {} does not fit B_panels {}: {} panels of {} hold {} to {} columns",
             columns, type_string(panels), panels.shape[0], width,
             (panels.shape[0] - 1) * width + 1, panels.shape[0] * width);
  }
  return {k, columns};
}

std::vector<TensorType> matmul_panels_shape(const ShapeContext& ctx) {
  const TensorType& a = ctx.input_type(0);
  const Shape b = logical_b_shape(ctx, a, ctx.input_type(1));
  return {{a.dtype, matmul_shapes(ctx, a.shape, b).output}};
}

std::vector<Tensor> matmul_panels_kernel(const KernelContext& ctx) {
  const Tensor b = unpack_panels(ctx.input(1), ctx.get_int("columns"));
  return single_output(matmul_reference(ctx, ctx.input(0), b));
}

// MatMul's reduction (matmul.cpp), B's element (k, j) read from its panel.
std::vector<ComputeTensor> matmul_panels_compute(const ComputeContext& ctx) {
  const ComputeTensor& a = ctx.input(0);
  const ComputeTensor& panels = ctx.input(1);
  const Shape b_shape = {panels.dim(1), ctx.get_int("columns")};
  const loop::Expr width = index(panels.dim(2));
  MatMulShapes s = matmul_shapes(ctx, a.shape(), b_shape);
  const TensorType& type = ctx.output_type(0);
  const DType acc = accumulation_dtype(type.dtype);
  ComputeTensor sum = ctx.reduce("matmul", {acc, type.shape}, {s.k}, Reducer::sum,
                                 [&](const Indices& i, const Indices& k) {
    MatMulOperandIndices at = matmul_operand_indices(s, a.rank(), 2, i, k[0]);
    const loop::Expr& j = at.b.back();
    loop::Expr b = panels({loop::FloorDiv::make(j, width), k[0], loop::FloorMod::make(j, width)});
    return cast(acc, a(at.a)) * cast(acc, b);
  });
  return {to_output_type(ctx, sum)};
}

}  // namespace

void register_matmul_panels_ops(OpRegistry& registry) {
  registry.add({.name = kMatMulPanelsOp,
                .min_inputs = 2,
                .max_inputs = 2,
                .fusion = FusionKind::out_fusable,
                .shape_rule = matmul_panels_shape,
                .kernel = matmul_panels_kernel,
                .compute = matmul_panels_compute});
}

}  // namespace minic
