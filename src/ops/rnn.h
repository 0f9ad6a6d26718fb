// What the recurrent ops share between the loop over time (rnn.cpp) and their cells
// (rnn_cells.cpp): what one cell step reads. The activation functions are in
// minic/ops/recurrent.h.
//
// Course module 2. A cell is one time step of one direction for one batch entry: it reads
// the input x_t and the state (the hidden state h, and for LSTM the cell state c) and
// replaces the state with the next one. Everything is in double; the loop in rnn.cpp reads
// the tensors into double and writes the outputs back in the input's element type.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "minic/ops/recurrent.h"

namespace minic {

// What one cell step reads: one direction's weights, as row-major arrays of doubles,
// and the op's attributes. `gates` is 4 for LSTM (gates i, o, f, c), 3 for GRU (z, r, h)
// and 1 for RNN; gate k's rows of W, R, Wb and Rb are [k * hidden, (k + 1) * hidden).
struct CellParameters {
  int64_t hidden = 0;
  int64_t input_size = 0;
  std::span<const double> w;   // [gates * hidden, input_size]
  std::span<const double> r;   // [gates * hidden, hidden]
  std::span<const double> wb;  // [gates * hidden]; zeros where B is omitted
  std::span<const double> rb;  // [gates * hidden]; zeros where B is omitted
  std::span<const double> p;   // LSTM's peepholes [3 * hidden] (i, o, f); zeros if omitted
  std::span<const Activation> activations;  // this direction's f, g (GRU, LSTM), h (LSTM)
  std::optional<double> clip;  // bounds the gates' pre-activations to [-clip, clip]
  bool linear_before_reset = false;  // GRU
  bool input_forget = false;         // LSTM

  // Row `row` of W times x, plus Wb[row].
  double input_part(int64_t row, std::span<const double> x) const;
  // Row `row` of R times h, plus Rb[row].
  double recurrent_part(int64_t row, std::span<const double> h) const;
  // Activation `which` of this direction applied to the pre-activation `x`, clipped.
  double activate(size_t which, double x) const;
};

// One time step: reads x_t (input_size values), replaces h (and LSTM's c, `hidden`
// values each; GRU and RNN leave c alone).
using CellStep = void (*)(const CellParameters& cell, std::span<const double> x,
                          std::vector<double>& h, std::vector<double>& c);

void lstm_step(const CellParameters& cell, std::span<const double> x, std::vector<double>& h,
               std::vector<double>& c);
void gru_step(const CellParameters& cell, std::span<const double> x, std::vector<double>& h,
              std::vector<double>& c);
void rnn_step(const CellParameters& cell, std::span<const double> x, std::vector<double>& h,
              std::vector<double>& c);

}  // namespace minic
