// TopK: the k largest (or smallest) elements along one axis, and where they were.
// Course module 2.
//
// For each row along `axis` (default -1) of length n, with 0 <= k <= n:
//   Values[..., j, ...]  = the j-th largest element of the row   (j = 0 .. k-1)
//   Indices[..., j, ...] = its position in the row
// so both outputs have X's shape with dimension `axis` set to k. largest = 0 picks the
// smallest instead. Ties keep the lower index first. NaN counts as greater than every
// number (as ONNX's reference and ONNX Runtime order it): it comes first with largest = 1
// and last with largest = 0. sorted = 0 leaves the order unspecified; the kernel returns
// the sorted order for it too.
//
// Versions: opset 1 takes k as an attribute; from opset 10 it is input 1, a 1-element i64
// tensor, whose value must be known before running because the output shape depends on it;
// `largest` and `sorted` exist from opset 11 (before, always 1); opset 24 adds bfloat16.
//
// The kernel sorts the positions of each row with a stable sort, which is what keeps ties in
// index order, and copies the first k.
//
// Fusion kind: opaque. Which element lands in an output position depends on all the values
// of its row.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/op.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace minic {

namespace {

struct TopKAttributes {
  int64_t axis = 0;  // normalised into [0, rank)
  bool largest = true;

  static TopKAttributes read(const NodeContext& ctx, int64_t rank) {
    TopKAttributes a;
    a.axis = ctx.normalize_axis(ctx.get_int("axis", -1), rank);
    if (ctx.opset() >= 11) {
      const int64_t largest = ctx.get_int("largest", 1);
      const int64_t sorted = ctx.get_int("sorted", 1);
      if (largest != 0 && largest != 1) ctx.fail("largest must be 0 or 1, not {}", largest);
      if (sorted != 0 && sorted != 1) ctx.fail("sorted must be 0 or 1, not {}", sorted);
      a.largest = largest == 1;
    }
    return a;
  }
};

// k, from the attribute (opset 1) or the value of input 1, checked against the axis size.
int64_t read_k(const ShapeContext& ctx, int64_t n) {
  int64_t k = 0;
  if (ctx.opset() < 10) {
    k = ctx.get_int("k");
  } else {
    if (!ctx.has_input(1)) ctx.fail("input K is missing (from opset 10 k is an input)");
    const TensorType& type = ctx.input_type(1);
    if (type.dtype != DType::i64 || type.num_elements() != 1 || type.rank() > 1) {
      ctx.fail("K must be a 1-D i64 tensor of one element, not {}", type_string(type));
    }
    k = ctx.input_value(1).as_int64(0);
  }
  if (k < 0 || k > n) ctx.fail("k = {} is outside [0, {}], the size of the axis", k, n);
  return k;
}

std::vector<TensorType> topk_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  if (x.rank() == 0) ctx.fail("input X is a scalar; it needs an axis to pick along");
  if (is_storage_only(x.dtype) || x.dtype == DType::boolean) {
    ctx.fail("input X has element type {}; TopK takes numbers", dtype_name(x.dtype));
  }
  if (ctx.opset() < 10 && ctx.num_inputs() > 1) ctx.fail("opset {} takes one input", ctx.opset());
  const TopKAttributes a = TopKAttributes::read(ctx, x.rank());
  Shape shape = x.shape;
  shape[a.axis] = read_k(ctx, x.shape[a.axis]);
  return {{x.dtype, shape}, {DType::i64, shape}};
}

// a < b in the order where NaN is greater than every number (and NaNs are equal).
template <typename C>
bool less_nan_last(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

std::vector<Tensor> topk_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const TopKAttributes a = TopKAttributes::read(ctx, x.rank());
  Tensor values = ctx.make_output(0);
  Tensor indices = ctx.make_output(1);
  // x viewed as [outer, n, inner], the outputs as [outer, k, inner].
  const int64_t n = x.shape()[a.axis];
  const int64_t k = values.shape()[a.axis];
  int64_t outer = 1;
  for (int64_t d = 0; d < a.axis; ++d) outer *= x.shape()[d];
  int64_t inner = 1;
  for (int64_t d = a.axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];

  auto out_indices = indices.values<int64_t>();
  visit_dtype(x.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    auto in = x.values<T>();
    auto out_values = values.values<T>();
    std::vector<C> row(static_cast<size_t>(n));
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        for (int64_t j = 0; j < n; ++j) row[j] = static_cast<C>(in[(o * n + j) * inner + i]);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
          return a.largest ? less_nan_last(row[q], row[p]) : less_nan_last(row[p], row[q]);
        });
        for (int64_t j = 0; j < k; ++j) {
          const int64_t at = (o * k + j) * inner + i;
          out_values[at] = in[(o * n + order[j]) * inner + i];
          out_indices[at] = order[j];
        }
      }
    }
  });
  std::vector<Tensor> outputs;
  outputs.push_back(std::move(values));
  outputs.push_back(std::move(indices));
  return outputs;
}

}  // namespace

void register_topk_ops(OpRegistry& registry) {
  registry.add({.name = "TopK",
                .min_opset = 1,
                .max_inputs = 2,
                .min_outputs = 2,
                .max_outputs = 2,
                .fusion = FusionKind::opaque,
                .shape_rule = topk_shape,
                .kernel = topk_kernel});
}

}  // namespace minic
