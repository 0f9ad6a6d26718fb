// ScatterElements, Scatter, ScatterND and TensorScatter: copy `data` and overwrite (or
// combine into) the elements that an index tensor picks. Course module 2.
//
// Each op is the same two steps: list the writes "output[to] <- updates[from]" from the
// indices, then apply them in order to a copy of `data`.
//   ScatterElements(axis), and Scatter (its name before opset 11): for every position i of
//   `indices` (which has the shape of `updates`),
//     output[i with coordinate `axis` replaced by indices[i]] <- updates[i]
//   ScatterND: `indices` has shape [..., k]; each k-tuple names a slice data[i0, ..., ik-1, :]
//     output[indices[j..., :], rest...] <- updates[j..., rest...]
//   TensorScatter(axis, mode) writes `update` into a cache along the sequence axis, each
//   batch entry b starting at write_indices[b] (0 if omitted):
//     output[b, ..., write_indices[b] + s, ...] <- update[b, ..., s, ...]
//   and mode "circular" wraps the sequence position modulo the cache's length.
// With `reduction` (opset 16: add, mul; opset 18: max, min) the write combines:
// output[to] = output[to] + updates[from] and so on; "none" overwrites, the later of two
// writes to one element winning. Indices may be negative (counting from the end); one
// outside [-n, n) is an error naming the node. Overwrites copy bytes and serve every
// element type; the reductions compute as float for the 16-bit floats.
//
// Fusion kind: opaque. Which output element an update lands on depends on the *values* of
// the indices.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "float_compute.h"
#include "minic/ops/op.h"
#include "movement.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

namespace minic {

namespace {

// --- writes and reductions --------------------------------------------------------------------

enum class Reduction { none, add, mul, max, min };

// The `reduction` attribute, checked against the opset that introduced each value.
Reduction read_reduction(const NodeContext& ctx) {
  const std::string name = ctx.get_string("reduction", "none");
  struct Known {
    const char* name;
    Reduction reduction;
    int since_opset;
  };
  static const Known kKnown[] = {{"none", Reduction::none, 1},
                                 {"add", Reduction::add, 16},
                                 {"mul", Reduction::mul, 16},
                                 {"max", Reduction::max, 18},
                                 {"min", Reduction::min, 18}};
  for (const Known& known : kKnown) {
    if (name != known.name) continue;
    if (ctx.opset() < known.since_opset) {
      ctx.fail("reduction '{}' needs opset {} or later; the model's opset is {}", name,
               known.since_opset, ctx.opset());
    }
    return known.reduction;
  }
  ctx.fail("reduction is '{}'; it must be 'none', 'add', 'mul', 'max' or 'min'", name);
}

// One write of the scatter: element `from` of the updates goes to element `to` of the
// output (both row-major flat positions).
struct Write {
  int64_t to;
  int64_t from;
};

// The value of one output element after a write. Integers add and multiply modulo 2^bits,
// as the hardware does, so that an overflow is not undefined behaviour.
template <typename T>
T combine(Reduction reduction, T old_value, T update) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    const uint64_t a = static_cast<uint64_t>(old_value);
    const uint64_t b = static_cast<uint64_t>(update);
    if (reduction == Reduction::add) return static_cast<T>(a + b);
    if (reduction == Reduction::mul) return static_cast<T>(a * b);
  }
  using C = compute_t<T>;
  const C a = static_cast<C>(old_value);
  const C b = static_cast<C>(update);
  switch (reduction) {
    case Reduction::none: return update;
    case Reduction::add: return static_cast<T>(a + b);
    case Reduction::mul: return static_cast<T>(a * b);
    case Reduction::max: return static_cast<T>(std::max(a, b));
    case Reduction::min: return static_cast<T>(std::min(a, b));
  }
  return update;
}

// A copy of `data` with `writes` applied in order.
Tensor apply_writes(const KernelContext& ctx, const Tensor& data, const Tensor& updates,
                    const std::vector<Write>& writes, Reduction reduction) {
  Tensor output = data;
  if (reduction == Reduction::none) {
    for (const Write& write : writes) copy_element(updates, write.from, output, write.to);
    return output;
  }
  if (is_storage_only(data.dtype())) {
    ctx.fail("a reduction cannot compute in {}; only 'none' takes it", dtype_name(data.dtype()));
  }
  visit_dtype(data.dtype(), [&]<typename T>() {
    auto out = output.values<T>();
    auto in = updates.values<T>();
    for (const Write& write : writes) {
      out[write.to] = combine<T>(reduction, out[write.to], in[write.from]);
    }
  });
  return output;
}

void check_same_dtype(const ShapeContext& ctx, const TensorType& data,
                      const TensorType& updates, const char* what) {
  if (updates.dtype != data.dtype) {
    ctx.fail("{} is {} but data is {}", what, type_string(updates), type_string(data));
  }
}

// --- ScatterElements and Scatter --------------------------------------------------------------

std::vector<TensorType> scatter_elements_shape(const ShapeContext& ctx) {
  const TensorType& data = ctx.input_type(0);
  const TensorType& indices = ctx.input_type(1);
  const TensorType& updates = ctx.input_type(2);
  check_indices_type(ctx, indices);
  check_same_dtype(ctx, data, updates, "updates");
  read_reduction(ctx);
  if (data.rank() == 0) ctx.fail("cannot scatter into a scalar");
  const int64_t axis = ctx.normalize_axis(ctx.get_int("axis", 0), data.rank());
  if (updates.shape != indices.shape) {
    ctx.fail("updates {} must have the shape of indices {}", type_string(updates),
             type_string(indices));
  }
  check_indices_fit(ctx, data, indices, axis);
  return {data};
}

std::vector<Tensor> scatter_elements_kernel(const KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  const int64_t axis = ctx.normalize_axis(ctx.get_int("axis", 0), data.rank());
  const Shape strides = row_major_strides(data.shape());
  std::vector<Write> writes;
  int64_t flat = 0;
  for_each_index(indices.shape(), [&](const Shape& index) {
    Shape target = index;
    target[axis] = checked_index(ctx, indices, flat, axis, data.shape()[axis]);
    writes.push_back({offset_of(target, strides), flat});
    ++flat;
  });
  return single_output(apply_writes(ctx, data, updates, writes, read_reduction(ctx)));
}

// --- ScatterND --------------------------------------------------------------------------------

std::vector<TensorType> scatter_nd_shape(const ShapeContext& ctx) {
  const TensorType& data = ctx.input_type(0);
  const TensorType& indices = ctx.input_type(1);
  const TensorType& updates = ctx.input_type(2);
  check_indices_type(ctx, indices);
  check_same_dtype(ctx, data, updates, "updates");
  read_reduction(ctx);
  if (data.rank() == 0) ctx.fail("cannot scatter into a scalar");
  if (indices.rank() == 0) ctx.fail("indices must have rank 1 or more, not a scalar");
  const int64_t k = indices.shape.back();
  if (k > data.rank()) {
    ctx.fail("indices {} name {} coordinates, more than data {} has", type_string(indices), k,
             type_string(data));
  }
  // updates: one slice data[i0, ..., ik-1, :] for each k-tuple of the indices.
  Shape expected(indices.shape.begin(), indices.shape.end() - 1);
  expected.insert(expected.end(), data.shape.begin() + k, data.shape.end());
  if (updates.shape != expected) {
    ctx.fail("updates {} must have shape {} (indices' leading dimensions, then data's after "
             "the first {})",
             type_string(updates), shape_string(expected), k);
  }
  return {data};
}

std::vector<Tensor> scatter_nd_kernel(const KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  const int64_t k = indices.shape().back();
  const Shape strides = row_major_strides(data.shape());
  int64_t slice = 1;  // elements of one slice data[i0, ..., ik-1, :]
  for (int64_t d = k; d < data.rank(); ++d) slice *= data.shape()[d];
  const int64_t tuples = num_elements(Shape(indices.shape().begin(), indices.shape().end() - 1));
  std::vector<Write> writes;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t base = 0;
    for (int64_t d = 0; d < k; ++d) {
      base += checked_index(ctx, indices, t * k + d, d, data.shape()[d]) * strides[d];
    }
    for (int64_t e = 0; e < slice; ++e) writes.push_back({base + e, t * slice + e});
  }
  return single_output(apply_writes(ctx, data, updates, writes, read_reduction(ctx)));
}

// --- TensorScatter ----------------------------------------------------------------------------

enum class CacheMode { linear, circular };

CacheMode read_cache_mode(const NodeContext& ctx) {
  const std::string mode = ctx.get_string("mode", "linear");
  if (mode == "linear") return CacheMode::linear;
  if (mode == "circular") return CacheMode::circular;
  ctx.fail("mode is '{}'; it must be 'linear' or 'circular'", mode);
}

// The sequence axis, in [1, rank): axis 0 is the batch.
int64_t sequence_axis(const NodeContext& ctx, int64_t rank) {
  const int64_t axis = ctx.normalize_axis(ctx.get_int("axis", -2), rank);
  if (axis == 0) ctx.fail("axis is the batch axis 0; the sequence axis must be another");
  return axis;
}

std::vector<TensorType> tensor_scatter_shape(const ShapeContext& ctx) {
  const TensorType& cache = ctx.input_type(0);
  const TensorType& update = ctx.input_type(1);
  check_same_dtype(ctx, cache, update, "update");
  read_cache_mode(ctx);
  if (cache.rank() < 2) {
    ctx.fail("past_cache must have a batch and a sequence axis, not {}", type_string(cache));
  }
  const int64_t axis = sequence_axis(ctx, cache.rank());
  bool fits = update.rank() == cache.rank();
  for (int64_t d = 0; fits && d < cache.rank(); ++d) {
    fits = d == axis ? update.shape[d] <= cache.shape[d] : update.shape[d] == cache.shape[d];
  }
  if (!fits) {
    ctx.fail("update {} must match past_cache {} except along axis {}, where it may be shorter",
             type_string(update), type_string(cache), axis);
  }
  if (ctx.has_input(2)) {
    const TensorType& write_indices = ctx.input_type(2);
    if (write_indices.dtype != DType::i64 || write_indices.shape != Shape{cache.shape[0]}) {
      ctx.fail("write_indices must be i64[{}], one per batch entry, not {}", cache.shape[0],
               type_string(write_indices));
    }
  }
  return {cache};
}

std::vector<Tensor> tensor_scatter_kernel(const KernelContext& ctx) {
  const Tensor& cache = ctx.input(0);
  const Tensor& update = ctx.input(1);
  const CacheMode mode = read_cache_mode(ctx);
  const int64_t axis = sequence_axis(ctx, cache.rank());
  const int64_t length = cache.shape()[axis];  // max_sequence_length
  const Shape strides = row_major_strides(cache.shape());
  std::vector<Write> writes;
  int64_t flat = 0;
  for_each_index(update.shape(), [&](const Shape& index) {
    const int64_t start = ctx.has_input(2) ? ctx.input(2).as_int64(index[0]) : 0;
    int64_t position = start + index[axis];
    if (mode == CacheMode::circular) {
      position = ((position % length) + length) % length;
    } else if (start < 0 || position >= length) {
      ctx.fail("write index {} of batch entry {} puts the update past the cache's {} "
               "positions (mode 'linear')",
               start, index[0], length);
    }
    Shape target = index;
    target[axis] = position;
    writes.push_back({offset_of(target, strides), flat});
    ++flat;
  });
  return single_output(apply_writes(ctx, cache, update, writes, Reduction::none));
}

}  // namespace

void register_scatter_ops(OpRegistry& registry) {
  registry.add({.name = "ScatterElements",
                .min_opset = 11,
                .min_inputs = 3,
                .max_inputs = 3,
                .fusion = FusionKind::opaque,
                .shape_rule = scatter_elements_shape,
                .kernel = scatter_elements_kernel});
  // Scatter is ScatterElements' name in opsets 9 and 10 (it has no reduction there).
  registry.add({.name = "Scatter",
                .min_opset = 9,
                .max_opset = 10,
                .min_inputs = 3,
                .max_inputs = 3,
                .fusion = FusionKind::opaque,
                .shape_rule = scatter_elements_shape,
                .kernel = scatter_elements_kernel});
  registry.add({.name = "ScatterND",
                .min_opset = 11,
                .min_inputs = 3,
                .max_inputs = 3,
                .fusion = FusionKind::opaque,
                .shape_rule = scatter_nd_shape,
                .kernel = scatter_nd_kernel});
  registry.add({.name = "TensorScatter",
                .min_opset = 24,
                .min_inputs = 2,
                .max_inputs = 3,
                .fusion = FusionKind::opaque,
                .shape_rule = tensor_scatter_shape,
                .kernel = tensor_scatter_kernel});
}

}  // namespace minic
