// The cells of the recurrent ops: one time step of LSTM, GRU and RNN, and the activation
// functions they apply. Course module 2.
//
// In ONNX's notation, with x = X_t, h = H_{t-1}, c = C_{t-1}, f, g, h the direction's
// activations, (.) the elementwise product and "gate" for the sum x W^T + h R^T + Wb + Rb
// of one gate's rows:
//
//   RNN    H_t = f(gate_i)
//   GRU    z = f(gate_z)     r = f(gate_r)
//          n = g(x Wh^T + (r (.) h) Rh^T + Rbh + Wbh)      (linear_before_reset = 0)
//          n = g(x Wh^T + r (.) (h Rh^T + Rbh) + Wbh)      (linear_before_reset = 1)
//          H_t = (1 - z) (.) n + z (.) h
//   LSTM   i = f(gate_i + Pi (.) c)   f_t = f(gate_f + Pf (.) c)   (f_t = 1 - i if input_forget)
//          C_t = f_t (.) c + i (.) g(gate_c)
//          o = f(gate_o + Po (.) C_t)
//          H_t = o (.) h(C_t)
//
// `clip`, when set, bounds the gates' pre-activations to [-clip, clip] before f and g. The
// cell state C_t is not clipped before h: ONNX says only "the input of activations", and
// this is what onnxruntime does.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "rnn.h"

#include <algorithm>
#include <cmath>

namespace minic {

double Activation::operator()(double x) const {
  switch (kind) {
    case Kind::relu: return std::max(0.0, x);
    case Kind::tanh: return std::tanh(x);
    case Kind::sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case Kind::affine: return alpha * x + beta;
    case Kind::leaky_relu: return x >= 0 ? x : alpha * x;
    case Kind::thresholded_relu: return x >= alpha ? x : 0.0;
    case Kind::scaled_tanh: return alpha * std::tanh(beta * x);
    case Kind::hard_sigmoid: return std::clamp(alpha * x + beta, 0.0, 1.0);
    case Kind::elu: return x >= 0 ? x : alpha * (std::exp(x) - 1.0);
    case Kind::softsign: return x / (1.0 + std::abs(x));
    case Kind::softplus: return std::log1p(std::exp(x));
  }
  return x;
}

double CellParameters::input_part(int64_t row, std::span<const double> x) const {
  double sum = wb[row];
  for (int64_t i = 0; i < input_size; ++i) sum += w[row * input_size + i] * x[i];
  return sum;
}

double CellParameters::recurrent_part(int64_t row, std::span<const double> h) const {
  double sum = rb[row];
  for (int64_t i = 0; i < hidden; ++i) sum += r[row * hidden + i] * h[i];
  return sum;
}

double CellParameters::activate(size_t which, double x) const {
  if (clip) x = std::clamp(x, -*clip, *clip);
  return activations[which](x);
}

void rnn_step(const CellParameters& cell, std::span<const double> x, std::vector<double>& h,
              std::vector<double>& /*c*/) {
  std::vector<double> next(cell.hidden);
  for (int64_t j = 0; j < cell.hidden; ++j) {
    next[j] = cell.activate(0, cell.input_part(j, x) + cell.recurrent_part(j, h));
  }
  h = std::move(next);
}

void gru_step(const CellParameters& cell, std::span<const double> x, std::vector<double>& h,
              std::vector<double>& /*c*/) {
  const int64_t n = cell.hidden;
  std::vector<double> z(n), r(n);
  for (int64_t j = 0; j < n; ++j) {
    z[j] = cell.activate(0, cell.input_part(j, x) + cell.recurrent_part(j, h));
    r[j] = cell.activate(0, cell.input_part(n + j, x) + cell.recurrent_part(n + j, h));
  }
  // The reset gate applies to h before the product with Rh, or to the product after it.
  std::vector<double> reset_h(n);
  for (int64_t j = 0; j < n; ++j) reset_h[j] = r[j] * h[j];
  std::vector<double> next(n);
  for (int64_t j = 0; j < n; ++j) {
    const int64_t row = 2 * n + j;
    const double recurrent = cell.linear_before_reset ? r[j] * cell.recurrent_part(row, h)
                                                      : cell.recurrent_part(row, reset_h);
    const double candidate = cell.activate(1, cell.input_part(row, x) + recurrent);
    next[j] = (1.0 - z[j]) * candidate + z[j] * h[j];
  }
  h = std::move(next);
}

void lstm_step(const CellParameters& cell, std::span<const double> x, std::vector<double>& h,
               std::vector<double>& c) {
  const int64_t n = cell.hidden;
  // Gate k's pre-activation for unit j, without the peephole.
  auto gate = [&](int64_t k, int64_t j) {
    return cell.input_part(k * n + j, x) + cell.recurrent_part(k * n + j, h);
  };
  enum : int64_t { kInput = 0, kOutput = 1, kForget = 2, kCell = 3 };  // W's row blocks
  std::vector<double> next_h(n), next_c(n);
  for (int64_t j = 0; j < n; ++j) {
    // The peepholes P are in the order i, o, f.
    const double input = cell.activate(0, gate(kInput, j) + cell.p[j] * c[j]);
    const double forget = cell.input_forget
                              ? 1.0 - input
                              : cell.activate(0, gate(kForget, j) + cell.p[2 * n + j] * c[j]);
    const double candidate = cell.activate(1, gate(kCell, j));
    next_c[j] = forget * c[j] + input * candidate;
    const double output = cell.activate(0, gate(kOutput, j) + cell.p[n + j] * next_c[j]);
    next_h[j] = output * cell.activations[2](next_c[j]);  // unclipped: see the header
  }
  h = std::move(next_h);
  c = std::move(next_c);
}

}  // namespace minic
