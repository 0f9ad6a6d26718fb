// LSTM, GRU and RNN: one-layer recurrent networks over a sequence, in one direction or
// both. Course module 2.
//
// With gates = 4 (LSTM: i, o, f, c), 3 (GRU: z, r, h) or 1 (RNN), dirs = 2 for direction
// "bidirectional" and 1 otherwise, the inputs and outputs are (layout = 0)
//
//   X [seq, batch, input]           W [dirs, gates * hidden, input]
//   R [dirs, gates * hidden, hidden]   B [dirs, 2 * gates * hidden]  (Wb, then Rb)
//   sequence_lens [batch]           initial_h, initial_c (LSTM) [dirs, batch, hidden]
//   P (LSTM) [dirs, 3 * hidden]     (peepholes i, o, f)
//   Y [seq, dirs, batch, hidden]    Y_h, Y_c (LSTM) [dirs, batch, hidden]
//
// and with layout = 1 (opset 14 on) batch comes first: X [batch, seq, input], the states
// [batch, dirs, hidden], Y [batch, seq, dirs, hidden]. Every input after R and every output
// may be omitted. For each direction d and batch entry b the state starts at initial_h
// (and initial_c; zero where omitted) and one cell step (rnn_cells.cpp) per time step
// runs through the first sequence_lens[b] steps (all of them if omitted): forward in time
// for "forward" and for the first direction of "bidirectional", backward for "reverse"
// and the second. Y at step t is the hidden state after step t, zero past the sequence's
// end; Y_h and Y_c are the state after the last step (zero, as in onnxruntime, for a
// sequence of length 0).
//
// The attribute `activations` names the cell's functions (f for RNN; f, g for GRU; f, g, h
// for LSTM) for each direction in turn, or once for both; `activation_alpha` and
// `activation_beta` give, in that order, the parameters of those that take one (Affine,
// LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu), the ONNX operators' defaults
// where the lists run out. The kernel computes in double. The ops' form has not changed
// since opset 7 apart from layout (14) and bfloat16 (22); opset 1 had `output_sequence`.
// Fusion kind: opaque. In a compiled model the graph pass expand-recurrent
// (src/passes/graph/expand_recurrent.cpp) replaces most such nodes by a Scan over their
// cell written in ops that compile; this kernel runs the rest, and every interpreted run.
// The attributes are read by read_recurrent_form (minic/ops/recurrent.h) for both.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "float_compute.h"
#include "minic/ops/op.h"
#include "rnn.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace minic {

namespace {

// What tells the three ops apart.
struct RecurrentOp {
  int64_t gates;
  std::vector<Activation::Kind> default_activations;  // f (, g (, h)): one direction's
  bool has_cell_state;                                // LSTM: initial_c, P, Y_c
  CellStep step;
};

using Kind = Activation::Kind;
const RecurrentOp kLstm{4, {Kind::sigmoid, Kind::tanh, Kind::tanh}, true, lstm_step};
const RecurrentOp kGru{3, {Kind::sigmoid, Kind::tanh}, false, gru_step};
const RecurrentOp kRnn{1, {Kind::tanh}, false, rnn_step};

// The input positions.
enum : size_t { kX, kW, kR, kB, kSequenceLens, kInitialH, kInitialC, kPeepholes };

// An activation name as ONNX spells it (compared ignoring case), how many of alpha and
// beta it takes (0: none, 1: alpha, 2: both), and the ONNX operator's defaults.
struct ActivationInfo {
  const char* name;
  Kind kind;
  int parameters;
  double alpha;
  double beta;
};

constexpr ActivationInfo kActivations[] = {
    {"Relu", Kind::relu, 0, 0, 0},
    {"Tanh", Kind::tanh, 0, 0, 0},
    {"Sigmoid", Kind::sigmoid, 0, 0, 0},
    {"Affine", Kind::affine, 2, 1.0, 0.0},
    {"LeakyRelu", Kind::leaky_relu, 1, 0.01, 0},
    {"ThresholdedRelu", Kind::thresholded_relu, 1, 1.0, 0},
    {"ScaledTanh", Kind::scaled_tanh, 2, 1.0, 1.0},
    {"HardSigmoid", Kind::hard_sigmoid, 2, 0.2, 0.5},
    {"Elu", Kind::elu, 1, 1.0, 0},
    {"Softsign", Kind::softsign, 0, 0, 0},
    {"Softplus", Kind::softplus, 0, 0, 0},
};

bool same_ignoring_case(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

// The activations of every direction, in order: dirs times the cell's count.
std::vector<Activation> read_activations(const NodeContext& ctx, const RecurrentOp& op,
                                         int64_t directions) {
  const size_t count = op.default_activations.size();
  std::vector<Activation> parsed;
  auto it = ctx.node().attributes.find("activations");
  if (it == ctx.node().attributes.end()) {
    for (Kind kind : op.default_activations) parsed.push_back({kind});
  } else {
    const auto* names = std::get_if<std::vector<std::string>>(&it->second);
    if (!names) ctx.fail("attribute 'activations' should be a list of strings");
    if (names->size() != count && names->size() != count * directions) {
      ctx.fail("attribute 'activations' has {} names; {} takes {} for each of {} direction(s)",
               names->size(), ctx.node().op, count, directions);
    }
    const std::vector<float> alphas = ctx.get_floats("activation_alpha", {});
    const std::vector<float> betas = ctx.get_floats("activation_beta", {});
    size_t next_alpha = 0, next_beta = 0;
    for (const std::string& name : *names) {
      const ActivationInfo* info = nullptr;
      for (const ActivationInfo& candidate : kActivations) {
        if (same_ignoring_case(name, candidate.name)) info = &candidate;
      }
      if (!info) ctx.fail("unknown activation '{}'", name);
      Activation activation{info->kind, info->alpha, info->beta};
      if (info->parameters >= 1 && next_alpha < alphas.size()) {
        activation.alpha = alphas[next_alpha++];
      }
      if (info->parameters >= 2 && next_beta < betas.size()) activation.beta = betas[next_beta++];
      parsed.push_back(activation);
    }
    if (next_alpha < alphas.size() || next_beta < betas.size()) {
      ctx.fail("activation_alpha has {} and activation_beta {} values, but the activations "
               "take {} and {}", alphas.size(), betas.size(), next_alpha, next_beta);
    }
  }
  // Names given once serve every direction.
  std::vector<Activation> activations;
  while (static_cast<int64_t>(activations.size()) < static_cast<int64_t>(count) * directions) {
    activations.insert(activations.end(), parsed.begin(), parsed.end());
  }
  return activations;
}

// The op of `ctx`'s node: LSTM, GRU or RNN.
const RecurrentOp& recurrent_op(const NodeContext& ctx) {
  if (ctx.node().op == "LSTM") return kLstm;
  if (ctx.node().op == "GRU") return kGru;
  MINIC_CHECK(ctx.node().op == "RNN");
  return kRnn;
}

}  // namespace

RecurrentForm read_recurrent_form(const NodeContext& ctx, const TensorType& r) {
  const RecurrentOp& op = recurrent_op(ctx);
  RecurrentForm a;
  a.gates = op.gates;
  a.has_cell_state = op.has_cell_state;
  a.per_direction = op.default_activations.size();
  const std::string direction = ctx.get_string("direction", "forward");
  if (direction == "forward") {
    a.direction = Direction::forward;
  } else if (direction == "reverse") {
    a.direction = Direction::reverse;
  } else if (direction == "bidirectional") {
    a.direction = Direction::bidirectional;
    a.directions = 2;
  } else {
    ctx.fail("direction '{}' is not forward, reverse or bidirectional", direction);
  }
  a.hidden = ctx.get_int("hidden_size", r.shape[2]);
  if (a.hidden != r.shape[2]) {
    ctx.fail("hidden_size is {} but R {} has hidden size {}", a.hidden, type_string(r),
             r.shape[2]);
  }
  if (ctx.has_attr("layout") && ctx.opset() < 14) {
    ctx.fail("attribute 'layout' exists from opset 14 on; the model's opset is {}",
             ctx.opset());
  }
  const int64_t layout = ctx.get_int("layout", 0);
  if (layout != 0 && layout != 1) ctx.fail("layout must be 0 or 1, not {}", layout);
  a.batch_first = layout == 1;
  if (ctx.has_attr("clip")) {
    a.clip = ctx.get_float("clip", 0);
    if (!(*a.clip > 0)) ctx.fail("clip must be positive, not {}", *a.clip);
  }
  a.activations = read_activations(ctx, op, a.directions);
  if (&op == &kGru) a.linear_before_reset = ctx.get_int("linear_before_reset", 0) != 0;
  if (&op == &kLstm) {
    const int64_t input_forget = ctx.get_int("input_forget", 0);
    if (input_forget != 0 && input_forget != 1) {
      ctx.fail("input_forget must be 0 or 1, not {}", input_forget);
    }
    a.input_forget = input_forget == 1;
  }
  return a;
}

namespace {

// The sizes, and where element (t, b) of X, (t, d, b) of Y and (d, b) of a state start in
// row-major order under either layout.
struct Dims {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, directions = 1;
  bool batch_first = false;

  static Dims of(const TensorType& x, const RecurrentForm& a) {
    return {.seq = x.shape[a.batch_first ? 1 : 0],
            .batch = x.shape[a.batch_first ? 0 : 1],
            .input = x.shape[2],
            .hidden = a.hidden,
            .directions = a.directions,
            .batch_first = a.batch_first};
  }
  int64_t x_offset(int64_t t, int64_t b) const {
    return (batch_first ? b * seq + t : t * batch + b) * input;
  }
  int64_t y_offset(int64_t t, int64_t d, int64_t b) const {
    return (batch_first ? (b * seq + t) * directions + d : (t * directions + d) * batch + b) *
           hidden;
  }
  int64_t state_offset(int64_t d, int64_t b) const {
    return (batch_first ? b * directions + d : d * batch + b) * hidden;
  }
  Shape y_shape() const {
    return batch_first ? Shape{batch, seq, directions, hidden}
                       : Shape{seq, directions, batch, hidden};
  }
  Shape state_shape() const {
    return batch_first ? Shape{batch, directions, hidden} : Shape{directions, batch, hidden};
  }
};

void check_input(const ShapeContext& ctx, size_t index, const char* name, DType dtype,
                 const Shape& shape) {
  const TensorType& type = ctx.input_type(index);
  const TensorType expected{dtype, shape};
  if (type != expected) {
    ctx.fail("input {} is {} but should be {}", name, type_string(type), type_string(expected));
  }
}

// The sequence lengths of input `sequence_lens`: each in [0, seq].
std::vector<int64_t> read_lengths(const NodeContext& ctx, const Tensor& tensor, int64_t seq) {
  std::vector<int64_t> lengths = tensor.to_int64_vector();
  for (int64_t length : lengths) {
    if (length < 0 || length > seq) {
      ctx.fail("sequence_lens holds {}, outside [0, {}] (the sequence length of X)", length,
               seq);
    }
  }
  return lengths;
}

std::vector<TensorType> recurrent_shape(const ShapeContext& ctx, const RecurrentOp& op) {
  const TensorType& x = ctx.input_type(kX);
  visit_float_dtype(ctx, x.dtype, "input X", []<typename T>() {});
  if (x.rank() != 3) ctx.fail("input X must have rank 3, not {}", type_string(x));
  const TensorType& r = ctx.input_type(kR);
  if (r.rank() != 3) ctx.fail("input R must have rank 3, not {}", type_string(r));
  const RecurrentForm a = read_recurrent_form(ctx, r);
  const Dims dims = Dims::of(x, a);
  const int64_t rows = op.gates * a.hidden;
  check_input(ctx, kW, "W", x.dtype, {a.directions, rows, dims.input});
  check_input(ctx, kR, "R", x.dtype, {a.directions, rows, a.hidden});
  if (ctx.has_input(kB)) check_input(ctx, kB, "B", x.dtype, {a.directions, 2 * rows});
  if (ctx.has_input(kSequenceLens)) {
    const TensorType& lengths = ctx.input_type(kSequenceLens);
    if (!is_int(lengths.dtype) || lengths.shape != Shape{dims.batch}) {
      ctx.fail("input sequence_lens is {} but should be int32[{}]", type_string(lengths),
               dims.batch);
    }
    if (const Tensor* known = ctx.known_value(kSequenceLens)) read_lengths(ctx, *known, dims.seq);
  }
  if (ctx.has_input(kInitialH)) check_input(ctx, kInitialH, "initial_h", x.dtype,
                                            dims.state_shape());
  if (op.has_cell_state && ctx.has_input(kInitialC)) {
    check_input(ctx, kInitialC, "initial_c", x.dtype, dims.state_shape());
  }
  if (op.has_cell_state && ctx.has_input(kPeepholes)) {
    check_input(ctx, kPeepholes, "P", x.dtype, {a.directions, 3 * a.hidden});
  }
  std::vector<TensorType> types = {{x.dtype, dims.y_shape()}};
  for (size_t i = 1; i < ctx.num_outputs(); ++i) types.push_back({x.dtype, dims.state_shape()});
  return types;
}

// Input `index` as doubles, or `size` zeros where it is omitted.
std::vector<double> values_or_zeros(const KernelContext& ctx, size_t index, int64_t size) {
  return ctx.has_input(index) ? ctx.input(index).to_double_vector()
                              : std::vector<double>(size, 0.0);
}

std::vector<Tensor> recurrent_kernel(const KernelContext& ctx, const RecurrentOp& op) {
  const Tensor& x_tensor = ctx.input(kX);
  const RecurrentForm a = read_recurrent_form(ctx, ctx.input(kR).type());
  const Dims dims = Dims::of(x_tensor.type(), a);
  const int64_t rows = op.gates * a.hidden;
  const int64_t state_size = num_elements(dims.state_shape());
  const std::vector<double> x = x_tensor.to_double_vector();
  const std::vector<double> w = ctx.input(kW).to_double_vector();
  const std::vector<double> r = ctx.input(kR).to_double_vector();
  const std::vector<double> bias = values_or_zeros(ctx, kB, a.directions * 2 * rows);
  const std::vector<double> initial_h = values_or_zeros(ctx, kInitialH, state_size);
  // GRU and RNN have no inputs initial_c and P: their cells ignore these zeros.
  const std::vector<double> initial_c = op.has_cell_state
                                            ? values_or_zeros(ctx, kInitialC, state_size)
                                            : std::vector<double>(state_size, 0.0);
  const int64_t peephole_size = a.directions * 3 * a.hidden;
  const std::vector<double> peepholes = op.has_cell_state
                                            ? values_or_zeros(ctx, kPeepholes, peephole_size)
                                            : std::vector<double>(peephole_size, 0.0);
  const std::vector<int64_t> lengths =
      ctx.has_input(kSequenceLens) ? read_lengths(ctx, ctx.input(kSequenceLens), dims.seq)
                                   : std::vector<int64_t>(dims.batch, dims.seq);

  std::vector<double> y(num_elements(dims.y_shape()), 0.0);
  std::vector<double> y_h(state_size, 0.0), y_c(state_size, 0.0);
  const size_t per_direction = a.per_direction;
  for (int64_t d = 0; d < a.directions; ++d) {
    auto slice = [d](const std::vector<double>& all, int64_t size) {
      return std::span<const double>(all).subspan(d * size, size);
    };
    const CellParameters cell{
        .hidden = a.hidden,
        .input_size = dims.input,
        .w = slice(w, rows * dims.input),
        .r = slice(r, rows * a.hidden),
        .wb = std::span<const double>(bias).subspan(2 * d * rows, rows),
        .rb = std::span<const double>(bias).subspan((2 * d + 1) * rows, rows),
        .p = slice(peepholes, 3 * a.hidden),
        .activations = std::span<const Activation>(a.activations).subspan(d * per_direction,
                                                                          per_direction),
        .clip = a.clip,
        .linear_before_reset = a.linear_before_reset,
        .input_forget = a.input_forget};
    const bool backward = a.backward(d);
    for (int64_t b = 0; b < dims.batch; ++b) {
      const int64_t state = dims.state_offset(d, b);
      std::vector<double> h(initial_h.begin() + state, initial_h.begin() + state + a.hidden);
      std::vector<double> c(initial_c.begin() + state, initial_c.begin() + state + a.hidden);
      const int64_t length = lengths[b];
      for (int64_t step = 0; step < length; ++step) {
        const int64_t t = backward ? length - 1 - step : step;
        op.step(cell, std::span<const double>(x).subspan(dims.x_offset(t, b), dims.input), h, c);
        std::copy(h.begin(), h.end(), y.begin() + dims.y_offset(t, d, b));
      }
      if (length == 0) continue;  // Y_h and Y_c stay zero
      std::copy(h.begin(), h.end(), y_h.begin() + state);
      std::copy(c.begin(), c.end(), y_c.begin() + state);
    }
  }

  const std::vector<double>* results[] = {&y, &y_h, &y_c};
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    const TensorType& type = ctx.output_type(i);
    outputs.push_back(Tensor::from_vector<double>(type.shape, *results[i]).cast(type.dtype));
  }
  return outputs;
}

OpSchema recurrent_schema(std::string name, const RecurrentOp& op) {
  const int inputs = op.has_cell_state ? 8 : 6;
  const int outputs = op.has_cell_state ? 3 : 2;
  return {.name = std::move(name),
          .min_opset = 7,
          .min_inputs = 3,
          .max_inputs = inputs,
          .min_outputs = 0,
          .max_outputs = outputs,
          .fusion = FusionKind::opaque,
          .shape_rule = [&op](const ShapeContext& ctx) { return recurrent_shape(ctx, op); },
          .kernel = [&op](const KernelContext& ctx) { return recurrent_kernel(ctx, op); }};
}

}  // namespace

void register_rnn_ops(OpRegistry& registry) {
  registry.add(recurrent_schema("LSTM", kLstm));
  registry.add(recurrent_schema("GRU", kGru));
  registry.add(recurrent_schema("RNN", kRnn));
}

}  // namespace minic
