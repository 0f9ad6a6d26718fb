// Det: the determinant of each square matrix in the last two dimensions. Course module 2.
//
// X has shape (*, M, M); the output has shape (*) and holds det(X[b]) for each batch index
// b. The kernel factors each matrix as P * A = L * U by Gaussian elimination with partial
// pivoting (the largest remaining entry of a column becomes the pivot), in double:
//   det = (-1)^(row swaps) * prod over i of U[i][i]
// When a column has no nonzero pivot left, the matrix is singular: det = 0. An empty (0 x 0)
// matrix has determinant 1.
// Fusion kind: opaque. Each output combines a whole matrix, not elementwise.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "float_compute.h"

#include <cmath>
#include <utility>

namespace minic {

namespace {

std::vector<TensorType> det_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  visit_float_dtype(ctx, x.dtype, "input X", []<typename T>() {});
  if (x.rank() < 2 || x.shape[x.rank() - 1] != x.shape[x.rank() - 2]) {
    ctx.fail("input X must be square matrices (*, M, M), not {}", type_string(x));
  }
  return {{x.dtype, Shape(x.shape.begin(), x.shape.end() - 2)}};
}

// The determinant of the m x m row-major matrix `a`, which it overwrites with U.
double determinant(double* a, int64_t m) {
  double det = 1;
  for (int64_t column = 0; column < m; ++column) {
    int64_t pivot = column;
    for (int64_t row = column + 1; row < m; ++row) {
      if (std::abs(a[row * m + column]) > std::abs(a[pivot * m + column])) pivot = row;
    }
    if (a[pivot * m + column] == 0) return 0;
    if (pivot != column) {
      for (int64_t k = 0; k < m; ++k) std::swap(a[pivot * m + k], a[column * m + k]);
      det = -det;
    }
    const double diagonal = a[column * m + column];
    det *= diagonal;
    for (int64_t row = column + 1; row < m; ++row) {
      const double factor = a[row * m + column] / diagonal;
      for (int64_t k = column; k < m; ++k) a[row * m + k] -= factor * a[column * m + k];
    }
  }
  return det;
}

std::vector<Tensor> det_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t m = x.shape()[x.rank() - 1];
  std::vector<double> values = x.to_double_vector();
  const TensorType& out_type = ctx.output_type(0);
  std::vector<double> out;
  for (int64_t b = 0; b < out_type.num_elements(); ++b) {
    out.push_back(determinant(values.data() + b * m * m, m));
  }
  return single_output(Tensor::from_vector<double>(out_type.shape, out).cast(out_type.dtype));
}

}  // namespace

void register_det_ops(OpRegistry& registry) {
  registry.add({.name = "Det",
                .min_opset = 11,
                .fusion = FusionKind::opaque,
                .shape_rule = det_shape,
                .kernel = det_kernel});
}

}  // namespace minic
