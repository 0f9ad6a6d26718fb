// The form of a recurrent op (LSTM, GRU, RNN) as its attributes give it: the direction,
// the hidden size, the layout, the cell's activation functions, clip and the cell's
// options. Course module 2.
//
// Two readers share it: the reference kernel, which runs the cells itself
// (src/ops/rnn.cpp), and the graph pass that rewrites the op as a Scan over its cell
// (src/passes/graph/expand_recurrent.cpp). Reading the attributes in one place keeps the
// two agreeing on every default and every refusal.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "minic/ops/op.h"

namespace minic {

// One of the activation functions the recurrent ops name in their `activations`
// attribute, with the alpha and beta it takes (unused ones stay 0).
struct Activation {
  enum class Kind {
    relu,              // max(0, x)
    tanh,              // tanh(x)
    sigmoid,           // 1 / (1 + e^-x)
    affine,            // alpha * x + beta
    leaky_relu,        // x >= 0 ? x : alpha * x
    thresholded_relu,  // x >= alpha ? x : 0
    scaled_tanh,       // alpha * tanh(beta * x)
    hard_sigmoid,      // min(max(alpha * x + beta, 0), 1)
    elu,               // x >= 0 ? x : alpha * (e^x - 1)
    softsign,          // x / (1 + |x|)
    softplus,          // log(1 + e^x)
  };
  Kind kind = Kind::tanh;
  double alpha = 0;
  double beta = 0;

  double operator()(double x) const;
};

enum class Direction { forward, reverse, bidirectional };

struct RecurrentForm {
  // 4 for LSTM (gates i, o, f, c), 3 for GRU (z, r, h), 1 for RNN: gate k's rows of W, R
  // and of each half of B are [k * hidden, (k + 1) * hidden).
  int64_t gates = 1;
  bool has_cell_state = false;  // LSTM: initial_c, P and Y_c
  Direction direction = Direction::forward;
  int64_t directions = 1;  // 2 for bidirectional
  int64_t hidden = 0;
  bool batch_first = false;  // layout = 1
  std::optional<double> clip;
  // The cell's functions (f for RNN; f, g for GRU; f, g, h for LSTM), for each direction
  // in turn: directions * per_direction entries.
  std::vector<Activation> activations;
  size_t per_direction = 1;
  bool linear_before_reset = false;  // GRU
  bool input_forget = false;         // LSTM

  // True if direction `d` runs backward in time: "reverse", or the second direction of
  // "bidirectional".
  bool backward(int64_t d) const { return direction == Direction::reverse || d == 1; }
};

// The form of the LSTM, GRU or RNN node of `ctx`, whose input R has type `r` (rank 3: it
// gives hidden_size where the attribute is omitted). Throws Error naming the node for an
// attribute out of range or of the wrong kind.
RecurrentForm read_recurrent_form(const NodeContext& ctx, const TensorType& r);

}  // namespace minic
