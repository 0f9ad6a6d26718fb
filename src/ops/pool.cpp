// Pooling: MaxPool, AveragePool, LpPool and their global forms.
//
// Course module 2. A pool slides a window over the spatial axes of X [N, C, D1..Dk] (the
// geometry of window.h: kernel_shape, strides, dilations, pads or auto_pad, ceil_mode)
// and reduces the elements under each window, one channel at a time:
//
//   MaxPool      the largest element; the optional output Indices holds where it was, as
//                a flat index into X (row-major, or column-major within each (n, c) plane
//                when storage_order = 1); the first of equal maxima wins
//   AveragePool  the mean; positions in the padding count toward the divisor only when
//                count_include_pad = 1, and positions past the end padding (which ceil_mode
//                can reach) never do
//   LpPool       (sum of |x|^p)^(1/p); padding adds nothing
//
// The global forms reduce over the whole spatial extent, giving [N, C, 1, .., 1]. A window
// that covers no input element at all (only possible with large pads or dilations) gives 0,
// with index -1, as in ONNX's reference implementation.
//
// The kernels walk the output positions once, listing the window positions inside the
// input (for_each_window), and reduce those positions in every (n, c) plane.
//
// Compute rules (course module 3): one reduction over the window's taps per output
// element, a tap in the padding excluded by a select (the reducer's identity in its
// place); AveragePool divides by the count of taps (compute_window.h's closed form),
// LpPool takes the p-th root. MaxPool's Indices output has none. A window entirely in
// the padding gives -inf for MaxPool here (0 in the reference kernel).
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "broadcast.h"
#include "compute_window.h"
#include "float_compute.h"
#include "window.h"

#include <cmath>

namespace minic {

namespace {

struct PoolAttributes {
  WindowGeometry window;
  bool count_include_pad = false;  // AveragePool
  int64_t storage_order = 0;       // MaxPool's Indices: 0 row-major, 1 column-major
  double p = 2.0;                  // LpPool's exponent

  // The attributes of a windowed pool (global = false) or of a global one, for input X.
  static PoolAttributes read(const NodeContext& ctx, const TensorType& x, bool global) {
    if (x.rank() < 3) {
      ctx.fail("input X is {}; {} needs N x C x D1 x ... (at least one spatial axis)",
               type_string(x), ctx.node().op);
    }
    PoolAttributes a;
    Shape spatial(x.shape.begin() + 2, x.shape.end());
    const int64_t rank = static_cast<int64_t>(spatial.size());
    if (global) {
      a.window.input = spatial;
      a.window.kernel = spatial;
      a.window.strides.assign(rank, 1);
      a.window.dilations.assign(rank, 1);
      a.window.pads_begin.assign(rank, 0);
      a.window.pads_end.assign(rank, 0);
      a.window.output.assign(rank, 1);
    } else {
      Shape kernel = ctx.get_ints("kernel_shape");
      if (static_cast<int64_t>(kernel.size()) != rank) {
        ctx.fail("kernel_shape {} has {} entries; X {} has {} spatial axes", shape_string(kernel),
                 kernel.size(), type_string(x), rank);
      }
      bool ceil_mode = ctx.get_int("ceil_mode", 0) != 0;
      a.window = read_window(ctx, spatial, kernel, ceil_mode);
    }
    a.count_include_pad = ctx.get_int("count_include_pad", 0) != 0;
    a.storage_order = ctx.get_int("storage_order", 0);
    if (a.storage_order != 0 && a.storage_order != 1) {
      ctx.fail("storage_order is {}; it must be 0 (row-major) or 1 (column-major)",
               a.storage_order);
    }
    a.p = static_cast<double>(ctx.get_int("p", 2));
    if (a.p <= 0) ctx.fail("p is {}; it must be positive", a.p);
    return a;
  }

  Shape output_shape(const TensorType& x) const {
    Shape shape = {x.shape[0], x.shape[1]};
    shape.insert(shape.end(), window.output.begin(), window.output.end());
    return shape;
  }
};

// Calls fn(out_offset, taps, padded_count) for every output position of one (n, c) plane,
// in row-major order. `taps` are the row-major offsets, within a plane, of the window
// positions that lie inside the input, in row-major window order; `padded_count` is the
// number of window positions inside the padded input.
template <typename Fn>
void for_each_window(const WindowGeometry& g, Fn&& fn) {
  const int64_t rank = g.rank();
  const Shape in_strides = row_major_strides(g.input);
  std::vector<std::vector<int64_t>> axis_offsets(rank);
  Shape counts(rank);
  std::vector<int64_t> taps;
  int64_t out_offset = 0;
  for_each_index(g.output, [&](const Shape& o) {
    int64_t padded_count = 1;
    for (int64_t axis = 0; axis < rank; ++axis) {
      axis_offsets[axis].clear();
      int64_t padded = 0;
      for (int64_t k = 0; k < g.kernel[axis]; ++k) {
        int64_t p = o[axis] * g.strides[axis] - g.pads_begin[axis] + k * g.dilations[axis];
        if (p < g.input[axis] + g.pads_end[axis]) ++padded;
        if (p >= 0 && p < g.input[axis]) axis_offsets[axis].push_back(p * in_strides[axis]);
      }
      counts[axis] = static_cast<int64_t>(axis_offsets[axis].size());
      padded_count *= padded;
    }
    taps.clear();
    for_each_index(counts, [&](const Shape& j) {
      int64_t offset = 0;
      for (int64_t axis = 0; axis < rank; ++axis) offset += axis_offsets[axis][j[axis]];
      taps.push_back(offset);
    });
    fn(out_offset++, std::span<const int64_t>(taps), padded_count);
  });
}

// A row-major offset within a plane of extent `shape`, re-expressed column-major.
int64_t column_major_offset(int64_t offset, const Shape& shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  Shape index(rank);
  for (int64_t axis = rank - 1; axis >= 0; --axis) {
    index[axis] = offset % shape[axis];
    offset /= shape[axis];
  }
  int64_t result = 0;
  int64_t stride = 1;
  for (int64_t axis = 0; axis < rank; ++axis) {
    result += index[axis] * stride;
    stride *= shape[axis];
  }
  return result;
}

// --- MaxPool -----------------------------------------------------------------------------------

template <typename T>
void max_pool(const PoolAttributes& a, const Tensor& x, Tensor& y, Tensor* indices) {
  using C = compute_t<T>;
  const int64_t planes = x.shape()[0] * x.shape()[1];
  const int64_t in_size = num_elements(a.window.input);
  const int64_t out_size = num_elements(a.window.output);
  auto in = x.values<T>();
  auto out = y.values<T>();
  for_each_window(a.window, [&](int64_t o, std::span<const int64_t> taps, int64_t) {
    for (int64_t plane = 0; plane < planes; ++plane) {
      const T* src = in.data() + plane * in_size;
      int64_t best = -1;
      C best_value{};
      for (int64_t tap : taps) {
        C value = static_cast<C>(src[tap]);
        if (best < 0 || value > best_value) {
          best = tap;
          best_value = value;
        }
      }
      out[plane * out_size + o] = static_cast<T>(best_value);
      if (!indices) continue;
      int64_t where = -1;
      if (best >= 0) {
        int64_t in_plane = a.storage_order == 0 ? best : column_major_offset(best, a.window.input);
        where = plane * in_size + in_plane;
      }
      indices->values<int64_t>()[plane * out_size + o] = where;
    }
  });
}

void check_max_pool_dtype(const NodeContext& ctx, DType dtype) {
  if (!is_float(dtype) && dtype != DType::i8 && dtype != DType::u8) {
    ctx.fail("input X has element type {}; {} takes floating-point, int8 or uint8 tensors",
             dtype_name(dtype), ctx.node().op);
  }
}

std::vector<TensorType> max_pool_shape(const ShapeContext& ctx, bool global) {
  const TensorType& x = ctx.input_type(0);
  check_max_pool_dtype(ctx, x.dtype);
  PoolAttributes a = PoolAttributes::read(ctx, x, global);
  std::vector<TensorType> types = {{x.dtype, a.output_shape(x)}};
  if (ctx.num_outputs() > 1) types.push_back({DType::i64, a.output_shape(x)});
  return types;
}

std::vector<Tensor> max_pool_kernel(const KernelContext& ctx, bool global) {
  const Tensor& x = ctx.input(0);
  check_max_pool_dtype(ctx, x.dtype());
  PoolAttributes a = PoolAttributes::read(ctx, x.type(), global);
  std::vector<Tensor> outputs = {ctx.make_output(0)};
  if (ctx.num_outputs() > 1) outputs.push_back(ctx.make_output(1));
  Tensor* indices = outputs.size() > 1 ? &outputs[1] : nullptr;
  visit_dtype(x.dtype(), [&]<typename T>() {
    if constexpr (is_float_v<T> || std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
      max_pool<T>(a, x, outputs[0], indices);
    }
  });
  return outputs;
}

// --- AveragePool and LpPool --------------------------------------------------------------------

enum class SumPool { average, lp };

template <typename T>
void sum_pool(SumPool kind, const PoolAttributes& a, const Tensor& x, Tensor& y) {
  const int64_t planes = x.shape()[0] * x.shape()[1];
  const int64_t in_size = num_elements(a.window.input);
  const int64_t out_size = num_elements(a.window.output);
  auto in = x.values<T>();
  auto out = y.values<T>();
  for_each_window(a.window, [&](int64_t o, std::span<const int64_t> taps, int64_t padded_count) {
    const int64_t count = a.count_include_pad ? padded_count : static_cast<int64_t>(taps.size());
    for (int64_t plane = 0; plane < planes; ++plane) {
      const T* src = in.data() + plane * in_size;
      double sum = 0;
      if (kind == SumPool::average) {
        for (int64_t tap : taps) sum += to_double(src[tap]);
        sum = count > 0 ? sum / static_cast<double>(count) : 0.0;
      } else {
        for (int64_t tap : taps) sum += std::pow(std::abs(to_double(src[tap])), a.p);
        sum = std::pow(sum, 1.0 / a.p);
      }
      out[plane * out_size + o] = static_cast<T>(sum);
    }
  });
}

std::vector<TensorType> sum_pool_shape(const ShapeContext& ctx, bool global) {
  const TensorType& x = ctx.input_type(0);
  visit_float_dtype(ctx, x.dtype, "input X", []<typename T>() {});
  PoolAttributes a = PoolAttributes::read(ctx, x, global);
  return {{x.dtype, a.output_shape(x)}};
}

std::vector<Tensor> sum_pool_kernel(const KernelContext& ctx, SumPool kind, bool global) {
  const Tensor& x = ctx.input(0);
  PoolAttributes a = PoolAttributes::read(ctx, x.type(), global);
  Tensor y = ctx.make_output(0);
  visit_float_dtype(ctx, x.dtype(), "input X", [&]<typename T>() { sum_pool<T>(kind, a, x, y); });
  return {std::move(y)};
}

// --- compute rules ------------------------------------------------------------------------------

// The reduction of a pool over the window of each output element: body(x element) summed
// (or maxed) over the taps inside the input.
ComputeTensor pool_reduce(const ComputeContext& ctx, const PoolAttributes& a, DType dtype,
                          Reducer reducer, const std::function<loop::Expr(loop::Expr)>& body) {
  const ComputeTensor& x = ctx.input(0);
  const WindowGeometry& g = a.window;
  TensorType type{dtype, ctx.output_type(0).shape};
  auto body_at = [&](const Indices& i, const Indices& k) {
    Indices at = {i[0], i[1]};
    Indices o(i.begin() + 2, i.end());
    for (size_t axis = 0; axis < o.size(); ++axis) {
      at.push_back(window_position(g, axis, o[axis], k[axis]));
    }
    loop::Expr value = body(x(at));
    loop::Expr inside = window_inside(g, o, k);
    return inside ? select(inside, value, reducer_identity(reducer, dtype)) : value;
  };
  return ctx.reduce(stage_name(ctx), type, g.kernel, reducer, body_at);
}

std::vector<ComputeTensor> max_pool_compute(const ComputeContext& ctx, bool global) {
  if (ctx.num_outputs() > 1) ctx.no_rule("the Indices output");
  const ComputeTensor& x = ctx.input(0);
  PoolAttributes a = PoolAttributes::read(ctx, x.type(), global);
  return {pool_reduce(ctx, a, x.dtype(), Reducer::max, [](loop::Expr value) { return value; })};
}

std::vector<ComputeTensor> sum_pool_compute(const ComputeContext& ctx, SumPool kind, bool global) {
  const ComputeTensor& x = ctx.input(0);
  PoolAttributes a = PoolAttributes::read(ctx, x.type(), global);
  const TensorType& type = ctx.output_type(0);
  const DType acc = accumulation_dtype(type.dtype);
  const loop::Expr p = constant(acc, a.p);
  ComputeTensor sum = pool_reduce(ctx, a, acc, Reducer::sum, [&](loop::Expr value) {
    value = cast(acc, value);
    return kind == SumPool::average ? value : call("pow", {call("fabs", {value}), p});
  });
  const WindowGeometry& g = a.window;
  return {ctx.compute(stage_name(ctx) + "_result", type, [&](const Indices& i) {
    if (kind == SumPool::lp) {
      return cast(type.dtype, call("pow", {sum(i), constant(acc, 1.0 / a.p)}));
    }
    // Taps inside the input, or (count_include_pad) inside the padded input.
    loop::Expr count;
    for (size_t axis = 0; axis < g.kernel.size(); ++axis) {
      int64_t hi = g.input[axis] + (a.count_include_pad ? g.pads_end[axis] : 0);
      int64_t lo = a.count_include_pad ? -g.pads_begin[axis] : 0;
      loop::Expr axis_count = window_count(g, axis, i[axis + 2], lo, hi);
      count = count ? count * axis_count : axis_count;
    }
    // A window with no tap inside sums to 0; dividing by 1 keeps that 0.
    loop::Expr divisor = cast(acc, loop::max(count, index(1)));
    return cast(type.dtype, loop::Div::make(sum(i), divisor));
  })};
}

// --- registration ------------------------------------------------------------------------------

// Pools absorb elementwise consumers (MaxPool followed by Relu) like Conv does.
void add_pool(OpRegistry& registry, const std::string& name, int min_opset, int max_outputs,
              ShapeRule shape_rule, Kernel kernel, ComputeRule compute) {
  registry.add({.name = name,
                .min_opset = min_opset,
                .max_outputs = max_outputs,
                .fusion = FusionKind::out_fusable,
                .shape_rule = std::move(shape_rule),
                .kernel = std::move(kernel),
                .compute = std::move(compute)});
}

}  // namespace

void register_pool_ops(OpRegistry& registry) {
  add_pool(registry, "MaxPool", 1, 2,
           [](const ShapeContext& ctx) { return max_pool_shape(ctx, false); },
           [](const KernelContext& ctx) { return max_pool_kernel(ctx, false); },
           [](const ComputeContext& ctx) { return max_pool_compute(ctx, false); });
  add_pool(registry, "GlobalMaxPool", 1, 1,
           [](const ShapeContext& ctx) { return max_pool_shape(ctx, true); },
           [](const KernelContext& ctx) { return max_pool_kernel(ctx, true); },
           [](const ComputeContext& ctx) { return max_pool_compute(ctx, true); });
  add_pool(registry, "AveragePool", 1, 1,
           [](const ShapeContext& ctx) { return sum_pool_shape(ctx, false); },
           [](const KernelContext& ctx) { return sum_pool_kernel(ctx, SumPool::average, false); },
           [](const ComputeContext& ctx) {
             return sum_pool_compute(ctx, SumPool::average, false);
           });
  add_pool(registry, "GlobalAveragePool", 1, 1,
           [](const ShapeContext& ctx) { return sum_pool_shape(ctx, true); },
           [](const KernelContext& ctx) { return sum_pool_kernel(ctx, SumPool::average, true); },
           [](const ComputeContext& ctx) {
             return sum_pool_compute(ctx, SumPool::average, true);
           });
  // LpPool-1 took p as a float attribute; from opset 2 it is an int.
  add_pool(registry, "LpPool", 2, 1,
           [](const ShapeContext& ctx) { return sum_pool_shape(ctx, false); },
           [](const KernelContext& ctx) { return sum_pool_kernel(ctx, SumPool::lp, false); },
           [](const ComputeContext& ctx) {
             return sum_pool_compute(ctx, SumPool::lp, false);
           });
  add_pool(registry, "GlobalLpPool", 2, 1,
           [](const ShapeContext& ctx) { return sum_pool_shape(ctx, true); },
           [](const KernelContext& ctx) { return sum_pool_kernel(ctx, SumPool::lp, true); },
           [](const ComputeContext& ctx) {
             return sum_pool_compute(ctx, SumPool::lp, true);
           });
}

}  // namespace minic
