// Compress, NonZero and Unique: ops that keep the elements an input's values select.
// Course module 2.
//
//   Compress(input, condition, axis)  the slices input[.., j, ..] along `axis` where
//                                     condition[j] is true; with no axis, the elements of
//                                     the flattened input where condition[j] is true.
//                                     (numpy.compress: a condition shorter than the axis
//                                     drops the rest; one longer than it may only be false
//                                     past the end.)
//   NonZero(X)                        out[d][c] = coordinate d of the c-th nonzero element of
//                                     X in row-major order: an i64 [rank, count] tensor.
//   Unique(X, axis, sorted)           the distinct elements of the flattened X -- or, with
//                                     `axis`, the distinct slices along it -- in ascending
//                                     order (sorted = 1, the default; slices compare
//                                     lexicographically) or in order of first occurrence
//                                     (sorted = 0), and three optional i64 outputs: `indices`
//                                     (where each first occurs), `inverse_indices` (for each
//                                     element or slice of X, its position in Y) and `counts`.
//
// Why the shape rules read input values: how many elements these ops keep depends on the
// *values* of an input (the condition, the nonzero elements, the repeats), not only on its
// type. minic compiles for static shapes, so each shape rule calls ctx.input_value(), which
// is known when the input is a constant or given before running (`minic run --input`), and
// explains why it is needed when not; the rule computes the selection itself to count it.
// The kernels check that the values they run on give the shape inferred.
//
// NaN: NonZero counts NaN as nonzero (NaN != 0). Unique treats all NaNs as one value,
// greater than every number, as numpy.unique does.
//
// Fusion kind: opaque. Which input element an output element comes from depends on values.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/op.h"
#include "movement.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>

namespace minic {

namespace {

// A kernel's result shape must be the one shape inference found from the known values.
void check_output_shape(const KernelContext& ctx, size_t index, const Shape& shape) {
  if (shape != ctx.output_type(index).shape) {
    ctx.fail("output {} has shape {} on these input values, not the {} inferred before running",
             index, shape_string(shape), shape_string(ctx.output_type(index).shape));
  }
}

void check_computable(const NodeContext& ctx, DType type, std::string_view what) {
  if (is_storage_only(type)) {
    ctx.fail("{} has the storage-only element type {}, which {} does not compare", what,
             dtype_name(type), ctx.node().op);
  }
}

// A tensor viewed as [outer, n, inner] around `axis`.
struct AxisView {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;

  AxisView(const Shape& shape, int64_t axis) : n(shape[axis]) {
    for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
    for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  }
};

// --- Compress ---------------------------------------------------------------------------------

// The axis attribute normalised into [0, rank), or nullopt for "flatten".
std::optional<int64_t> compress_axis(const NodeContext& ctx, int64_t rank) {
  if (!ctx.has_attr("axis")) return std::nullopt;
  const int64_t axis = ctx.get_int("axis");
  if (ctx.opset() < 11 && axis < 0) ctx.fail("a negative axis needs opset 11, not {}", ctx.opset());
  return ctx.normalize_axis(axis, rank);
}

// The positions j < size where the condition is true; an error if it is true past the end.
std::vector<int64_t> selected_positions(const NodeContext& ctx, const Tensor& condition,
                                        int64_t size) {
  std::vector<int64_t> positions;
  auto flags = condition.values<bool>();
  for (size_t j = 0; j < flags.size(); ++j) {
    if (!flags[j]) continue;
    const int64_t position = static_cast<int64_t>(j);
    if (position >= size) {
      ctx.fail("condition[{}] is true but the selected axis has only {} entries", j, size);
    }
    positions.push_back(position);
  }
  return positions;
}

Shape compress_output_shape(const Shape& input, std::optional<int64_t> axis, int64_t kept) {
  if (!axis) return {kept};
  Shape shape = input;
  shape[*axis] = kept;
  return shape;
}

std::vector<TensorType> compress_shape(const ShapeContext& ctx) {
  const TensorType& input = ctx.input_type(0);
  const TensorType& condition = ctx.input_type(1);
  if (condition.dtype != DType::boolean || condition.rank() != 1) {
    ctx.fail("condition must be a 1-D bool tensor, not {}", type_string(condition));
  }
  const std::optional<int64_t> axis = compress_axis(ctx, input.rank());
  const int64_t size = axis ? input.shape[*axis] : input.num_elements();
  const int64_t kept =
      static_cast<int64_t>(selected_positions(ctx, ctx.input_value(1), size).size());
  return {{input.dtype, compress_output_shape(input.shape, axis, kept)}};
}

std::vector<Tensor> compress_kernel(const KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  const std::optional<int64_t> axis = compress_axis(ctx, input.rank());
  // With no axis the input is one row of all its elements.
  const AxisView view = axis ? AxisView(input.shape(), *axis)
                             : AxisView({input.num_elements()}, 0);
  const std::vector<int64_t> kept = selected_positions(ctx, ctx.input(1), view.n);
  const Shape shape = compress_output_shape(input.shape(), axis, static_cast<int64_t>(kept.size()));
  check_output_shape(ctx, 0, shape);

  Tensor output = ctx.make_output(0);
  const size_t block = static_cast<size_t>(view.inner * dtype_size(input.dtype()));
  std::byte* out = output.bytes().data();
  for (int64_t o = 0; o < view.outer; ++o) {
    for (int64_t j : kept) {
      std::memcpy(out, input.bytes().data() + (o * view.n + j) * block, block);
      out += block;
    }
  }
  return single_output(std::move(output));
}

// --- NonZero ----------------------------------------------------------------------------------

// The row-major positions of the nonzero elements of x.
std::vector<int64_t> nonzero_positions(const NodeContext& ctx, const Tensor& x) {
  check_computable(ctx, x.dtype(), "input X");
  std::vector<int64_t> positions;
  visit_dtype(x.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    auto values = x.values<T>();
    for (size_t i = 0; i < values.size(); ++i) {
      if (static_cast<C>(values[i]) != C{}) positions.push_back(static_cast<int64_t>(i));
    }
  });
  return positions;
}

std::vector<TensorType> nonzero_shape(const ShapeContext& ctx) {
  check_computable(ctx, ctx.input_type(0).dtype, "input X");
  const int64_t count = static_cast<int64_t>(nonzero_positions(ctx, ctx.input_value(0)).size());
  return {{DType::i64, {ctx.input_type(0).rank(), count}}};
}

std::vector<Tensor> nonzero_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<int64_t> positions = nonzero_positions(ctx, x);
  const int64_t count = static_cast<int64_t>(positions.size());
  check_output_shape(ctx, 0, {x.rank(), count});
  Tensor output = ctx.make_output(0);
  auto out = output.values<int64_t>();
  const Shape strides = row_major_strides(x.shape());
  for (int64_t c = 0; c < count; ++c) {
    int64_t rest = positions[c];
    for (int64_t d = 0; d < x.rank(); ++d) {
      out[d * count + c] = rest / strides[d];
      rest %= strides[d];
    }
  }
  return single_output(std::move(output));
}

// --- Unique -----------------------------------------------------------------------------------

// What Unique finds: the distinct slices, in output order.
struct UniqueResult {
  std::optional<int64_t> axis;   // normalised; nullopt: X is flattened
  std::vector<int64_t> first;    // per output slice: its first position in X
  std::vector<int64_t> inverse;  // per slice of X: its output position
  std::vector<int64_t> counts;   // per output slice: how often it occurs

  int64_t size() const { return static_cast<int64_t>(first.size()); }
  Shape y_shape(const Shape& x) const {
    if (!axis) return {size()};
    Shape shape = x;
    shape[*axis] = size();
    return shape;
  }
};

// a < b with NaN greater than every number and equal to itself (so a sort groups NaNs).
template <typename C>
bool less_nan_last(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

std::optional<int64_t> unique_axis(const NodeContext& ctx, int64_t rank) {
  if (!ctx.has_attr("axis")) return std::nullopt;
  if (rank == 0) ctx.fail("axis is given but X is a scalar");
  return ctx.normalize_axis(ctx.get_int("axis"), rank);
}

UniqueResult find_unique(const NodeContext& ctx, const Tensor& x) {
  check_computable(ctx, x.dtype(), "input X");
  const int64_t sorted = ctx.get_int("sorted", 1);
  if (sorted != 0 && sorted != 1) ctx.fail("sorted must be 0 or 1, not {}", sorted);
  UniqueResult result;
  result.axis = unique_axis(ctx, x.rank());
  const AxisView view = result.axis ? AxisView(x.shape(), *result.axis)
                                    : AxisView({x.num_elements()}, 0);
  const int64_t length = view.outer * view.inner;  // elements in one slice
  visit_dtype(x.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    auto values = x.values<T>();
    // slices[j * length + e]: element e of slice j, its elements in (outer, inner) order.
    std::vector<C> slices(static_cast<size_t>(x.num_elements()));
    for (int64_t o = 0; o < view.outer; ++o) {
      for (int64_t j = 0; j < view.n; ++j) {
        for (int64_t i = 0; i < view.inner; ++i) {
          slices[j * length + o * view.inner + i] =
              static_cast<C>(values[(o * view.n + j) * view.inner + i]);
        }
      }
    }
    auto less = [&](int64_t p, int64_t q) {
      for (int64_t e = 0; e < length; ++e) {
        const C a = slices[p * length + e];
        const C b = slices[q * length + e];
        if (less_nan_last(a, b)) return true;
        if (less_nan_last(b, a)) return false;
      }
      return false;
    };
    // Sort the slice positions (stably, so each group of equal slices starts at its first
    // occurrence), then number the groups.
    std::vector<int64_t> order(static_cast<size_t>(view.n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), less);
    std::vector<int64_t> group_of(order.size());
    for (size_t r = 0; r < order.size(); ++r) {
      if (r == 0 || less(order[r - 1], order[r])) {
        result.first.push_back(order[r]);
        result.counts.push_back(0);
      }
      group_of[order[r]] = result.size() - 1;
      ++result.counts.back();
    }
    // The groups in output order: as sorted, or by first occurrence.
    std::vector<int64_t> rank(result.first.size());
    std::iota(rank.begin(), rank.end(), 0);
    if (sorted == 0) {
      std::vector<int64_t> by_first(rank);
      std::sort(by_first.begin(), by_first.end(),
                [&](int64_t g, int64_t h) { return result.first[g] < result.first[h]; });
      std::vector<int64_t> first(by_first.size());
      std::vector<int64_t> counts(by_first.size());
      for (size_t r = 0; r < by_first.size(); ++r) {
        rank[by_first[r]] = static_cast<int64_t>(r);
        first[r] = result.first[by_first[r]];
        counts[r] = result.counts[by_first[r]];
      }
      result.first = std::move(first);
      result.counts = std::move(counts);
    }
    for (int64_t group : group_of) result.inverse.push_back(rank[group]);
  });
  return result;
}

std::vector<TensorType> unique_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  check_computable(ctx, x.dtype, "input X");
  unique_axis(ctx, x.rank());
  const UniqueResult result = find_unique(ctx, ctx.input_value(0));
  const int64_t slices = static_cast<int64_t>(result.inverse.size());
  std::vector<TensorType> types = {{x.dtype, result.y_shape(x.shape)},
                                   {DType::i64, {result.size()}},
                                   {DType::i64, {slices}},
                                   {DType::i64, {result.size()}}};
  types.resize(ctx.num_outputs());
  return types;
}

std::vector<Tensor> unique_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const UniqueResult result = find_unique(ctx, x);
  check_output_shape(ctx, 0, result.y_shape(x.shape()));
  // Y: the first occurrence of each distinct slice, copied as bytes.
  const AxisView view = result.axis ? AxisView(x.shape(), *result.axis)
                                    : AxisView({x.num_elements()}, 0);
  Tensor y = ctx.make_output(0);
  const size_t block = static_cast<size_t>(view.inner * dtype_size(x.dtype()));
  std::byte* out = y.bytes().data();
  for (int64_t o = 0; o < view.outer; ++o) {
    for (int64_t j : result.first) {
      std::memcpy(out, x.bytes().data() + (o * view.n + j) * block, block);
      out += block;
    }
  }
  std::vector<Tensor> outputs;
  outputs.push_back(std::move(y));
  const std::vector<int64_t>* lists[] = {&result.first, &result.inverse, &result.counts};
  for (size_t k = 1; k < ctx.num_outputs(); ++k) {
    const std::vector<int64_t>& list = *lists[k - 1];
    const Shape shape = {static_cast<int64_t>(list.size())};
    check_output_shape(ctx, k, shape);
    outputs.push_back(Tensor::from_vector<int64_t>(shape, list));
  }
  return outputs;
}

}  // namespace

void register_select_values_ops(OpRegistry& registry) {
  registry.add({.name = "Compress",
                .min_opset = 9,
                .min_inputs = 2,
                .max_inputs = 2,
                .fusion = FusionKind::opaque,
                .shape_rule = compress_shape,
                .kernel = compress_kernel});
  registry.add({.name = "NonZero",
                .min_opset = 9,
                .fusion = FusionKind::opaque,
                .shape_rule = nonzero_shape,
                .kernel = nonzero_kernel});
  registry.add({.name = "Unique",
                .min_opset = 11,
                .max_outputs = 4,
                .fusion = FusionKind::opaque,
                .shape_rule = unique_shape,
                .kernel = unique_kernel});
}

}  // namespace minic
