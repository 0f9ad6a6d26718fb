// DFT and STFT: discrete Fourier transforms along one axis. Course module 2.
//
// A complex tensor is a real one with a last axis of 2 (real part, imaginary part); a real
// signal has a last axis of 1. Along `axis`, DFT transforms each signal x of n points:
//   forward:  y[k] = sum_{m < n} x[m] * exp(-2 pi i k m / n)
//   inverse:  x[m] = (1 / n) * sum_{k < n} y[k] * exp(+2 pi i k m / n)
// n is dft_length (optional input 1): the signal is zero-padded or cut to n points; by
// default n is the axis' length. With onesided = 1:
//   - forward (RFFT) takes a real signal and returns only y[0 .. n/2], the rest being the
//     complex conjugates of those (y[n - k] = conj(y[k]));
//   - inverse (IRFFT) takes those n/2 + 1 bins of a complex spectrum, rebuilds the full
//     spectrum from that symmetry and returns the real signal; n defaults to 2 * (bins - 1).
// The axis is an attribute (default 1) up to opset 19 and an input (default -2) from
// opset 20; it may be any axis but the last.
//
// STFT (signal [batch, length, 1 or 2], frame_step, window, frame_length) cuts the signal
// into frames of frame_length points, one every frame_step points, multiplies each by the
// window (all ones when absent) and transforms it:
//   out[b, f, k] = sum_{m < L} window[m] * x[b, f * frame_step + m] * exp(-2 pi i k m / L)
// giving frames = 1 + (length - L) / frame_step and, with onesided = 1 (the default, for
// real signals), the L / 2 + 1 unique bins, else all L; the output ends in [2].
//
// Both kernels are the plain O(n^2) sums above in double, which are obviously correct; a
// fast Fourier transform would compute the same numbers in O(n log n). The angle uses
// (k * m) mod n, so that it stays accurate for long signals. Fusion kind: opaque (every
// output element reads a whole signal), and there is no compute rule.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/op.h"

#include <cmath>
#include <complex>
#include <numbers>

namespace minic {

namespace {

using Complex = std::complex<double>;

// exp(sign * 2 pi i k m / n).
Complex twiddle(int64_t k, int64_t m, int64_t n, double sign) {
  const double angle = sign * 2 * std::numbers::pi * static_cast<double>((k * m) % n) /
                       static_cast<double>(n);
  return {std::cos(angle), std::sin(angle)};
}

void check_signal_type(const ShapeContext& ctx, const TensorType& type, std::string_view what) {
  if (!is_float(type.dtype)) {
    ctx.fail("{} has element type {}; {} takes floating-point tensors", what,
             dtype_name(type.dtype), ctx.node().op);
  }
  const int64_t parts = type.rank() == 0 ? 0 : type.shape.back();
  if (type.rank() < 2 || (parts != 1 && parts != 2)) {
    ctx.fail("{} is {}; it must have rank 2 or more and end in 1 (real) or 2 (complex)", what,
             type_string(type));
  }
}

// An optional scalar integer input known before running (null if omitted).
const Tensor* optional_int_scalar(const ShapeContext& ctx, size_t index, std::string_view what) {
  if (!ctx.has_input(index)) return nullptr;
  const TensorType& type = ctx.input_type(index);
  if (!is_int(type.dtype) || type.num_elements() != 1) {
    ctx.fail("{} must be one integer, not {}", what, type_string(type));
  }
  return &ctx.input_value(index);
}

bool read_flag(const NodeContext& ctx, std::string_view name, int64_t fallback) {
  const int64_t value = ctx.get_int(name, fallback);
  if (value != 0 && value != 1) ctx.fail("{} is {}; it must be 0 or 1", name, value);
  return value == 1;
}

// --- DFT ----------------------------------------------------------------------------------

// What a DFT node computes, read from its attributes and its inputs' types and values.
struct DftForm {
  int64_t axis = 0;       // normalised into [0, rank - 1)
  bool inverse = false;
  bool onesided = false;
  int64_t n = 0;          // the transform length
  int64_t output_length = 0;  // along axis
  int64_t output_parts = 2;   // the output's last axis: 1 for IRFFT, else 2

  // `axis_value` and `length_value` are inputs 2 and 1, null when omitted.
  static DftForm read(const NodeContext& ctx, const TensorType& input,
                      const Tensor* length_value, const Tensor* axis_value) {
    DftForm f;
    const int64_t rank = input.rank();
    int64_t axis = 1;
    if (ctx.opset() >= 20) {
      if (ctx.has_attr("axis")) ctx.fail("axis is an input from opset 20, not an attribute");
      axis = axis_value ? axis_value->as_int64(0) : -2;
    } else if (axis_value) {
      ctx.fail("has an axis input, which DFT takes from opset 20; at opset {} axis is an "
               "attribute", ctx.opset());
    } else {
      axis = ctx.get_int("axis", 1);
    }
    f.axis = axis < 0 ? axis + rank : axis;
    if (f.axis < 0 || f.axis > rank - 2) {
      ctx.fail("axis {} is out of range for {}: the last axis holds the real and imaginary "
               "parts, so axis must be in [{}, -2] or [0, {}]", axis, type_string(input), -rank,
               rank - 2);
    }
    f.inverse = read_flag(ctx, "inverse", 0);
    f.onesided = read_flag(ctx, "onesided", 0);
    const int64_t parts = input.shape.back();
    const int64_t length = input.shape[f.axis];
    if (f.onesided && !f.inverse && parts != 1) {
      ctx.fail("a one-sided forward DFT takes a real signal (last axis 1), not {}",
               type_string(input));
    }
    if (f.onesided && f.inverse && parts != 2) {
      ctx.fail("a one-sided inverse DFT takes a complex spectrum (last axis 2), not {}",
               type_string(input));
    }
    const bool irfft = f.onesided && f.inverse;
    f.n = length_value ? length_value->as_int64(0) : irfft ? 2 * (length - 1) : length;
    if (f.n < 1) {
      ctx.fail("the transform length is {} ({}); it must be at least 1", f.n,
               length_value ? "dft_length" : "from the axis' length");
    }
    f.output_length = f.onesided && !f.inverse ? f.n / 2 + 1 : f.n;
    f.output_parts = irfft ? 1 : 2;
    return f;
  }

  Shape output_shape(const Shape& input) const {
    Shape shape = input;
    shape[axis] = output_length;
    shape.back() = output_parts;
    return shape;
  }
};

std::vector<TensorType> dft_shape(const ShapeContext& ctx) {
  const TensorType& input = ctx.input_type(0);
  check_signal_type(ctx, input, "input");
  const Tensor* length = optional_int_scalar(ctx, 1, "dft_length");
  const Tensor* axis = optional_int_scalar(ctx, 2, "axis");
  DftForm f = DftForm::read(ctx, input, length, axis);
  return {{input.dtype, f.output_shape(input.shape)}};
}

// Transforms one signal `x` (its points along the axis) into `out.size()` values.
std::vector<Complex> transform(const DftForm& f, const std::vector<Complex>& x) {
  const int64_t points = static_cast<int64_t>(x.size());
  // x zero-padded or cut to n points.
  auto at = [&](int64_t m) { return m < points ? x[m] : Complex(0, 0); };
  std::vector<Complex> out(static_cast<size_t>(f.output_length));
  const double n = static_cast<double>(f.n);
  for (int64_t k = 0; k < f.output_length; ++k) {
    Complex sum = 0;
    if (!f.inverse) {
      for (int64_t m = 0; m < f.n; ++m) sum += at(m) * twiddle(k, m, f.n, -1);
    } else if (!f.onesided) {
      for (int64_t m = 0; m < f.n; ++m) sum += at(m) * twiddle(k, m, f.n, +1);
      sum /= n;
    } else {
      // IRFFT: bin m > n/2 is the conjugate of bin n - m; the result is real.
      double real = 0;
      for (int64_t m = 0; m < f.n; ++m) {
        Complex bin = 2 * m <= f.n ? at(m) : std::conj(at(f.n - m));
        real += (bin * twiddle(k, m, f.n, +1)).real();
      }
      sum = real / n;
    }
    out[k] = sum;
  }
  return out;
}

std::vector<Tensor> dft_kernel(const KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  const Tensor* length = ctx.has_input(1) ? &ctx.input(1) : nullptr;
  const Tensor* axis = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  DftForm f = DftForm::read(ctx, input.type(), length, axis);

  // The input as [outer, points, inner, parts]; the output as [outer, output_length, inner,
  // output_parts].
  const Shape& shape = input.shape();
  const int64_t parts = shape.back();
  const int64_t points = shape[f.axis];
  int64_t outer = 1;
  for (int64_t d = 0; d < f.axis; ++d) outer *= shape[d];
  int64_t inner = 1;
  for (int64_t d = f.axis + 1; d + 1 < input.rank(); ++d) inner *= shape[d];

  const std::vector<double> in = input.to_double_vector();
  const Shape output_shape = f.output_shape(shape);
  std::vector<double> out(static_cast<size_t>(num_elements(output_shape)));
  std::vector<Complex> signal(static_cast<size_t>(points));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t m = 0; m < points; ++m) {
        const int64_t at = ((o * points + m) * inner + i) * parts;
        signal[m] = {in[at], parts == 2 ? in[at + 1] : 0.0};
      }
      std::vector<Complex> result = transform(f, signal);
      for (int64_t k = 0; k < f.output_length; ++k) {
        const int64_t at = ((o * f.output_length + k) * inner + i) * f.output_parts;
        out[at] = result[k].real();
        if (f.output_parts == 2) out[at + 1] = result[k].imag();
      }
    }
  }
  Tensor output = Tensor::from_vector<double>(output_shape, out);
  return single_output(output.cast(input.dtype()));
}

// --- STFT ---------------------------------------------------------------------------------

struct StftForm {
  int64_t frame_step = 0;
  int64_t frame_length = 0;
  int64_t frames = 0;
  int64_t bins = 0;

  static StftForm read(const NodeContext& ctx, const TensorType& signal, const Tensor& step,
                       const TensorType* window, const Tensor* frame_length) {
    StftForm f;
    if (signal.rank() != 3) {
      ctx.fail("signal is {}; it must be [batch, length, 1 or 2]", type_string(signal));
    }
    const int64_t length = signal.shape[1];
    f.frame_step = step.as_int64(0);
    if (f.frame_step < 1) ctx.fail("frame_step is {}; it must be positive", f.frame_step);
    f.frame_length = frame_length ? frame_length->as_int64(0)
                     : window     ? window->shape[0]
                                  : length;
    if (f.frame_length < 1) ctx.fail("frame_length is {}; it must be positive", f.frame_length);
    if (window && window->shape[0] != f.frame_length) {
      ctx.fail("the window has {} points but frame_length is {}; they must be equal",
               window->shape[0], f.frame_length);
    }
    if (f.frame_length > length) {
      ctx.fail("frame_length {} is longer than the signal ({} points)", f.frame_length,
               length);
    }
    const bool onesided = read_flag(ctx, "onesided", 1);
    if (onesided && signal.shape[2] != 1) {
      ctx.fail("onesided = 1 needs a real signal (last axis 1), not {}; set onesided = 0",
               type_string(signal));
    }
    f.frames = 1 + (length - f.frame_length) / f.frame_step;
    f.bins = onesided ? f.frame_length / 2 + 1 : f.frame_length;
    return f;
  }
};

std::vector<TensorType> stft_shape(const ShapeContext& ctx) {
  const TensorType& signal = ctx.input_type(0);
  check_signal_type(ctx, signal, "signal");
  const Tensor* step = optional_int_scalar(ctx, 1, "frame_step");
  if (!step) ctx.fail("frame_step (input 1) is required");
  const TensorType* window = nullptr;
  if (ctx.has_input(2)) {
    window = &ctx.input_type(2);
    if (window->dtype != signal.dtype || window->rank() != 1) {
      ctx.fail("window is {}; it must be one-dimensional, of the signal's type {}",
               type_string(*window), dtype_name(signal.dtype));
    }
  }
  const Tensor* frame_length = optional_int_scalar(ctx, 3, "frame_length");
  StftForm f = StftForm::read(ctx, signal, *step, window, frame_length);
  return {{signal.dtype, {signal.shape[0], f.frames, f.bins, 2}}};
}

std::vector<Tensor> stft_kernel(const KernelContext& ctx) {
  const Tensor& signal = ctx.input(0);
  const TensorType* window_type = ctx.has_input(2) ? &ctx.input(2).type() : nullptr;
  const Tensor* frame_length = ctx.has_input(3) ? &ctx.input(3) : nullptr;
  StftForm f = StftForm::read(ctx, signal.type(), ctx.input(1), window_type, frame_length);
  const int64_t batch = signal.shape()[0];
  const int64_t length = signal.shape()[1];
  const int64_t parts = signal.shape()[2];
  const int64_t n = f.frame_length;
  const std::vector<double> x = signal.to_double_vector();
  const std::vector<double> window = window_type ? ctx.input(2).to_double_vector()
                                                 : std::vector<double>(n, 1.0);

  std::vector<double> out(static_cast<size_t>(batch * f.frames * f.bins * 2));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t frame = 0; frame < f.frames; ++frame) {
      for (int64_t k = 0; k < f.bins; ++k) {
        Complex sum = 0;
        for (int64_t m = 0; m < n; ++m) {
          const int64_t at = (b * length + frame * f.frame_step + m) * parts;
          const Complex point(x[at], parts == 2 ? x[at + 1] : 0.0);
          sum += window[m] * point * twiddle(k, m, n, -1);
        }
        const int64_t at = ((b * f.frames + frame) * f.bins + k) * 2;
        out[at] = sum.real();
        out[at + 1] = sum.imag();
      }
    }
  }
  Tensor output = Tensor::from_vector<double>({batch, f.frames, f.bins, 2}, out);
  return single_output(output.cast(signal.dtype()));
}

}  // namespace

void register_dft_ops(OpRegistry& registry) {
  registry.add({.name = "DFT",
                .min_opset = 17,
                .max_inputs = 3,
                .shape_rule = dft_shape,
                .kernel = dft_kernel});
  registry.add({.name = "STFT",
                .min_opset = 17,
                .min_inputs = 2,
                .max_inputs = 4,
                .shape_rule = stft_shape,
                .kernel = stft_kernel});
}

}  // namespace minic
