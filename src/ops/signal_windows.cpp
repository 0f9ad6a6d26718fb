// HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix: the tables that signal
// processing multiplies spectra and frames by. Course module 2.
//
// The three windows are generalised cosine windows of `size` points (a scalar input):
//   w[n] = a0 - a1 * cos(2 pi n / N) + a2 * cos(4 pi n / N)     for n in [0, size)
//   Hann: a0 = a1 = 0.5, a2 = 0     Hamming: a0 = 25/46, a1 = 21/46, a2 = 0
//   Blackman: a0 = 0.42, a1 = 0.5, a2 = 0.08
// with N = size for a periodic window (attribute periodic = 1, the default) and N = size - 1
// for a symmetric one. A symmetric window of one point divides 0 by 0 and is NaN, as ONNX's
// own definition of these ops (a function of Range, Cos, Div) computes it.
//
// MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz)
// maps the dft_length / 2 + 1 bins of a one-sided spectrum onto num_mel_bins triangular
// bands, spaced evenly on the mel scale mel(f) = 2595 * log10(1 + f / 700):
//   1. mel edges m[k] = mel(lower) + k * (mel(upper) - mel(lower)) / (num_mel_bins + 2),
//      for k in [0, num_mel_bins + 2) (ONNX divides by the number of edges, not of gaps);
//   2. each edge as a spectrum bin: b[k] = floor((dft_length + 1) * hz(m[k]) / sample_rate),
//      hz being the inverse of mel;
//   3. band i rises from bin b[i] to 1 at b[i + 1], then falls to 0 at b[i + 2]:
//        out[j, i] = (j - b[i]) / (b[i + 1] - b[i])           for j in [b[i], b[i + 1]]
//        out[j, i] = (b[i + 2] - j) / (b[i + 2] - b[i + 1])   for j in [b[i + 1], b[i + 2])
//      (a band whose rising edge has no width is just 1 at b[i + 1]).
// A band edge beyond the last spectrum bin is an error (upper_edge_hertz is too high for
// the sample rate), never a write outside the matrix.
//
// All four output the element type `output_datatype` names (float by default); the
// kernels compute in double and convert at the end. Their output shapes depend on the
// values of their inputs, which must be known before running. Fusion kind: opaque (they
// read no tensor elementwise, and have no compute rule).
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/op.h"
#include "minic/ops/onnx_data_type.h"

#include <cmath>
#include <numbers>

namespace minic {

namespace {

// The element type attribute `output_datatype` names; the ops take the computing types
// only (floats and the 8- to 64-bit integers), with `allow_int` for the windows.
DType read_output_datatype(const NodeContext& ctx, bool allow_int) {
  const int64_t code = ctx.get_int("output_datatype", 1);
  std::optional<DType> type = dtype_of_onnx_code(code);
  const bool fits = type && (is_float(*type) || (allow_int && is_int(*type)));
  if (!fits) {
    ctx.fail("output_datatype {} is not one of the {} types {} outputs", code,
             allow_int ? "numeric" : "floating-point", ctx.node().op);
  }
  return *type;
}

// A scalar input's value, known before running; `what` names it in messages.
const Tensor& scalar_value(const ShapeContext& ctx, size_t index, std::string_view what,
                           bool want_int) {
  const TensorType& type = ctx.input_type(index);
  const bool type_fits = want_int ? is_int(type.dtype) : is_float(type.dtype);
  if (!type_fits || type.num_elements() != 1) {
    ctx.fail("{} must be one {}, not {}", what, want_int ? "integer" : "float",
             type_string(type));
  }
  return ctx.input_value(index);
}

// --- the windows --------------------------------------------------------------------------

struct CosineWindow {
  double a0, a1, a2;
};

int64_t window_size(const ShapeContext& ctx) {
  const int64_t size = scalar_value(ctx, 0, "size", true).as_int64(0);
  if (size < 0) ctx.fail("size is {}; a window cannot have a negative length", size);
  return size;
}

std::vector<TensorType> window_shape(const ShapeContext& ctx) {
  const int64_t periodic = ctx.get_int("periodic", 1);
  if (periodic != 0 && periodic != 1) ctx.fail("periodic is {}; it must be 0 or 1", periodic);
  return {{read_output_datatype(ctx, true), {window_size(ctx)}}};
}

std::vector<Tensor> window_kernel(const KernelContext& ctx, CosineWindow window) {
  const int64_t size = ctx.input(0).as_int64(0);
  const bool periodic = ctx.get_int("periodic", 1) != 0;
  const double n_total = static_cast<double>(periodic ? size : size - 1);
  std::vector<double> values(static_cast<size_t>(size));
  for (int64_t n = 0; n < size; ++n) {
    const double angle = 2 * std::numbers::pi * static_cast<double>(n) / n_total;
    values[n] = window.a0 - window.a1 * std::cos(angle) + window.a2 * std::cos(2 * angle);
  }
  Tensor result = Tensor::from_vector<double>({size}, values);
  return single_output(result.cast(ctx.output_type(0).dtype));
}

OpSchema window_schema(std::string name, CosineWindow window) {
  return {.name = std::move(name),
          .min_opset = 17,
          .shape_rule = window_shape,
          .kernel = [window](const KernelContext& ctx) { return window_kernel(ctx, window); }};
}

// --- MelWeightMatrix ----------------------------------------------------------------------

struct MelInputs {
  int64_t num_mel_bins;
  int64_t dft_length;
  int64_t sample_rate;
  double lower_edge_hertz;
  double upper_edge_hertz;

  int64_t spectrogram_bins() const { return dft_length / 2 + 1; }
};

// Checks the values and reads them; `value(i)` gives input i.
template <typename ValueOf>
MelInputs read_mel_inputs(const NodeContext& ctx, ValueOf value) {
  MelInputs in{value(0).as_int64(0), value(1).as_int64(0), value(2).as_int64(0),
               value(3).as_double(0), value(4).as_double(0)};
  if (in.num_mel_bins <= 0) ctx.fail("num_mel_bins is {}; it must be positive", in.num_mel_bins);
  if (in.dft_length <= 0) ctx.fail("dft_length is {}; it must be positive", in.dft_length);
  if (in.sample_rate <= 0) ctx.fail("sample_rate is {}; it must be positive", in.sample_rate);
  if (!(in.lower_edge_hertz >= 0 && in.lower_edge_hertz <= in.upper_edge_hertz &&
        std::isfinite(in.upper_edge_hertz))) {
    ctx.fail("the band edges {} Hz to {} Hz must be finite, with 0 <= lower_edge_hertz <= "
             "upper_edge_hertz", in.lower_edge_hertz, in.upper_edge_hertz);
  }
  return in;
}

std::vector<TensorType> mel_weight_matrix_shape(const ShapeContext& ctx) {
  const char* const names[] = {"num_mel_bins", "dft_length", "sample_rate"};
  for (size_t i = 0; i < 3; ++i) scalar_value(ctx, i, names[i], true);
  scalar_value(ctx, 3, "lower_edge_hertz", false);
  scalar_value(ctx, 4, "upper_edge_hertz", false);
  if (ctx.input_type(3).dtype != ctx.input_type(4).dtype) {
    ctx.fail("lower_edge_hertz is {} but upper_edge_hertz is {}; they must match",
             dtype_name(ctx.input_type(3).dtype), dtype_name(ctx.input_type(4).dtype));
  }
  MelInputs in = read_mel_inputs(ctx, [&](size_t i) -> const Tensor& {
    return ctx.input_value(i);
  });
  return {{read_output_datatype(ctx, false), {in.spectrogram_bins(), in.num_mel_bins}}};
}

double hertz_to_mel(double hertz) { return 2595 * std::log10(1 + hertz / 700); }
double mel_to_hertz(double mel) { return 700 * (std::pow(10.0, mel / 2595) - 1); }

std::vector<Tensor> mel_weight_matrix_kernel(const KernelContext& ctx) {
  MelInputs in = read_mel_inputs(ctx, [&](size_t i) -> const Tensor& { return ctx.input(i); });
  const int64_t rows = in.spectrogram_bins();
  const int64_t bands = in.num_mel_bins;

  // Steps 1 and 2: the band edges as spectrum bins.
  const int64_t edges = bands + 2;
  const double low_mel = hertz_to_mel(in.lower_edge_hertz);
  const double mel_step = (hertz_to_mel(in.upper_edge_hertz) - low_mel) / edges;
  std::vector<int64_t> bin(edges);
  for (int64_t k = 0; k < edges; ++k) {
    const double hertz = mel_to_hertz(low_mel + static_cast<double>(k) * mel_step);
    const double position = std::floor((static_cast<double>(in.dft_length) + 1) * hertz /
                                       static_cast<double>(in.sample_rate));
    // A right edge may be one past the last bin (the falling side stops before it).
    if (!(position <= static_cast<double>(rows))) {
      ctx.fail("the mel band edge {} Hz lies past the {} bins of a {}-point DFT; "
               "upper_edge_hertz {} is too high for sample_rate {}",
               hertz, rows, in.dft_length, in.upper_edge_hertz, in.sample_rate);
    }
    bin[k] = static_cast<int64_t>(position);
  }

  // Step 3: the triangles, column i of a rows x bands matrix.
  std::vector<double> out(static_cast<size_t>(rows * bands), 0.0);
  auto set = [&](int64_t j, int64_t i, double weight) {
    if (j < 0 || j >= rows) {
      ctx.fail("mel band {} reaches spectrum bin {}, past the {} bins of a {}-point DFT; "
               "upper_edge_hertz {} is too high for sample_rate {}",
               i, j, rows, in.dft_length, in.upper_edge_hertz, in.sample_rate);
    }
    out[j * bands + i] = weight;
  };
  for (int64_t i = 0; i < bands; ++i) {
    const int64_t left = bin[i];
    const int64_t center = bin[i + 1];
    const int64_t right = bin[i + 2];
    if (center == left) {
      set(center, i, 1.0);
    } else {
      for (int64_t j = left; j <= center; ++j) {
        set(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
      }
    }
    for (int64_t j = center; j < right; ++j) {
      set(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
    }
  }
  Tensor result = Tensor::from_vector<double>({rows, bands}, out);
  return single_output(result.cast(ctx.output_type(0).dtype));
}

}  // namespace

void register_signal_window_ops(OpRegistry& registry) {
  registry.add(window_schema("HannWindow", {0.5, 0.5, 0.0}));
  registry.add(window_schema("HammingWindow", {25.0 / 46.0, 21.0 / 46.0, 0.0}));
  registry.add(window_schema("BlackmanWindow", {0.42, 0.5, 0.08}));
  registry.add({.name = "MelWeightMatrix",
                .min_opset = 17,
                .min_inputs = 5,
                .max_inputs = 5,
                .shape_rule = mel_weight_matrix_shape,
                .kernel = mel_weight_matrix_kernel});
}

}  // namespace minic
