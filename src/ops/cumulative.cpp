// CumSum and CumProd: running sums and products along one axis. Course module 2.
//
// Along the axis given by input 1 (a scalar; negative counts from the end), for each
// position i of that axis of size n:
//   CumSum   y[i] = x[0] + ... + x[i]          CumProd   y[i] = x[0] * ... * x[i]
//   exclusive = 1 leaves x[i] out:  y[i] = x[0] + ... + x[i-1]   (y[0] = 0, or 1 for CumProd)
//   reverse = 1 runs from the other end:  y[i] = x[i] + ... + x[n-1]
// and both together give y[i] = x[i+1] + ... + x[n-1]. The running value is kept in the
// element type itself, rounded at every step as the ONNX reference does (float16 and
// bfloat16 compute each step in float); integers wrap on overflow (accumulate.h).
//
// Fusion kind: opaque. An output element reads a whole prefix of its row, so it is neither
// elementwise nor one reduction per output element that a consumer could inline cheaply.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "accumulate.h"
#include "minic/ops/op.h"

#include <string_view>

namespace minic {

namespace {

enum class Running { sum, product };

// Element types the ONNX spec lists for both ops: 32- and 64-bit integers and the floats.
bool is_cumulative_dtype(DType type) {
  switch (type) {
    case DType::i32: case DType::i64: case DType::u32: case DType::u64:
    case DType::f16: case DType::bf16: case DType::f32: case DType::f64:
      return true;
    default:
      return false;
  }
}

// Input 1, the axis: one i32 or i64 element (the spec asks for rank 0; a 1-element 1-D
// tensor is accepted too, as ONNX Runtime does).
void check_axis_type(const ShapeContext& ctx) {
  const TensorType& axis = ctx.input_type(1);
  if ((axis.dtype != DType::i32 && axis.dtype != DType::i64) || axis.num_elements() != 1 ||
      axis.rank() > 1) {
    ctx.fail("axis must be a scalar i32 or i64, not {}", type_string(axis));
  }
}

std::vector<TensorType> cumulative_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  if (!is_cumulative_dtype(x.dtype)) {
    ctx.fail("input x has element type {}; {} takes i32, i64, u32, u64, f16, bf16, f32 or f64",
             dtype_name(x.dtype), ctx.node().op);
  }
  if (x.rank() == 0) ctx.fail("input x is a scalar; it needs an axis to run along");
  check_axis_type(ctx);
  // The axis is usually a constant: check it now when it is known, else in the kernel.
  if (const Tensor* axis = ctx.known_value(1)) ctx.normalize_axis(axis->as_int64(0), x.rank());
  return {x};
}

template <typename T>
T combine(Running op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return op == Running::sum ? add_wrapping(a, b) : mul_wrapping(a, b);
  } else {
    using C = compute_t<T>;
    const C result = op == Running::sum ? static_cast<C>(a) + static_cast<C>(b)
                                        : static_cast<C>(a) * static_cast<C>(b);
    return static_cast<T>(result);
  }
}

std::vector<Tensor> cumulative_kernel(const KernelContext& ctx, Running op) {
  const Tensor& x = ctx.input(0);
  const int64_t axis = ctx.normalize_axis(ctx.input(1).as_int64(0), x.rank());
  const bool exclusive = ctx.get_int("exclusive", 0) != 0;
  const bool reverse = ctx.get_int("reverse", 0) != 0;
  // x viewed as [outer, n, inner]: a row is the n elements at (o, *, i), `inner` apart.
  const int64_t n = x.shape()[axis];
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[d];
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];

  Tensor y = ctx.make_output(0);
  visit_dtype(x.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      auto in = x.values<T>();
      auto out = y.values<T>();
      const T identity = static_cast<T>(op == Running::sum ? 0.0f : 1.0f);
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          T running = identity;
          for (int64_t step = 0; step < n; ++step) {
            const int64_t k = reverse ? n - 1 - step : step;
            const int64_t at = (o * n + k) * inner + i;
            if (exclusive) {
              out[at] = running;
              running = combine(op, running, in[at]);
            } else {
              running = combine(op, running, in[at]);
              out[at] = running;
            }
          }
        }
      }
    }
  });
  return single_output(std::move(y));
}

OpSchema cumulative_schema(std::string name, int min_opset, Running op) {
  return {.name = std::move(name),
          .min_opset = min_opset,
          .min_inputs = 2,
          .max_inputs = 2,
          .fusion = FusionKind::opaque,
          .shape_rule = cumulative_shape,
          .kernel = [op](const KernelContext& ctx) { return cumulative_kernel(ctx, op); }};
}

}  // namespace

void register_cumulative_ops(OpRegistry& registry) {
  registry.add(cumulative_schema("CumSum", 11, Running::sum));
  registry.add(cumulative_schema("CumProd", 26, Running::product));
}

}  // namespace minic
