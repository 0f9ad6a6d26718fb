// The `expand-recurrent` pass: an LSTM, GRU or RNN node becomes a Scan over time whose
// body is one step of its cell, written in ordinary ops, with the input's share of every
// gate computed for all time steps at once before the Scan.
//
// Course module 2 (graph rewriting), with module 3's point about where the work is. The
// recurrent ops' reference kernel (src/ops/rnn.cpp) computes one scalar at a time in
// double. Written out, a cell step is a few small matrix products and elementwise ops
// that the compiler already fuses and schedules, and the part that does not depend on the
// state, X times W, is one matrix product over the whole sequence:
//
//   per direction d and gate g (W_g, R_g: gate g's rows of W[d] and R[d]):
//     x_g = X · W_gᵀ + Wb_g (+ Rb_g)        [seq, batch, hidden], before the Scan, with X
//                                           taken as a matrix of seq * batch rows
//   Scan over t with body (h, [c,] x_g at t...) -> (h', [c',] h'), where for LSTM
//     i = f(x_i + h·R_iᵀ + P_i⊙c)    f_t = f(x_f + h·R_fᵀ + P_f⊙c)  (f_t = 1 - i: input_forget)
//     c' = f_t⊙c + i⊙g(x_c + h·R_cᵀ)   o = f(x_o + h·R_oᵀ + P_o⊙c')   h' = o⊙h(c')
//   GRU: z = f(x_z + h·R_zᵀ), r = f(x_r + h·R_rᵀ),
//        n = g(x_h + (r⊙h)·R_hᵀ)  or, with linear_before_reset, g(x_h + r⊙(h·R_hᵀ + Rb_h)),
//        h' = (1 - z)⊙n + z⊙h
//   RNN: h' = f(x_i + h·R_iᵀ)
//
// with clip, when set, applied to each pre-activation (Clip) before f and g, as the
// reference kernel does. The recurrent bias Rb_g is added outside the Scan except for
// GRU's h gate under linear_before_reset, where r multiplies it. Gate g's blocks of W, R,
// B and P are cut out by ops in the outer graph (Reshape to one block per row, Gather,
// Transpose): for weights that are constants, as in every exported model, fold-constants
// turns them into constants of their own, and for weights given as inputs they run once
// per inference. The body reads R_gᵀ, P and Rb_h as captures (its last inputs, see
// src/ops/subgraph.h). The driver compiles the body once for its input types and runs it
// at each step (src/driver/compiled_bodies.cpp); the projections are MatMuls like any
// other. Y is the Scan's stacked h' (a backward direction scans and stacks in reverse, so
// row t of Y is still time t); Y_h and Y_c are its final states. Each direction's
// results are reshaped to have the direction axis and, for bidirectional, concatenated
// along it.
//
// What the pass leaves to the reference kernel, and why:
//   - sequence_lens other than a constant equal to the sequence length everywhere: a
//     Scan runs every sequence to the same length;
//   - a sequence of length 0 (ONNX's Y_h is then zero, a Scan's final state its initial
//     one), shapes not known, element types other than f32 and f64 (the reference kernel
//     computes in double; f16 products would lose more than it does);
//   - opset below 9 (Scan's axes and directions came in opset 9), and ThresholdedRelu
//     below opset 10 (the operator's first version).
//
// Precondition: the graph verifies and its values have types.
// Invariant: the graph computes the same outputs, up to rounding (the body computes in
// the model's element type); the node's outputs keep their names.
//
// Before:
//   %y, %y_h = RNN(%x, %w, %r) {hidden_size=4} : f32[5,1,2,4], f32[1,2,4]   // %x: f32[5,2,3]
// After (the blocks of %w and %r cut out as %y_wt_i and %y_rt_i, %y_h0 zeros):
//   %y_x_rows = Reshape(%x, %y_x_rows_shape) : f32[10,3]
//   %y_xw_i = MatMul(%y_x_rows, %y_wt_i) : f32[10,4]
//   %y_x_i = Reshape(%y_xw_i, %y_x_i_shape) : f32[5,2,4]
//   %y_h_final, %y_steps = Scan(%y_h0, %y_x_i, %y_rt_i) {body=graph rnn_forward(
//       %h: ?, %x_i: ?, %r_i: ?) -> (%h_next: ?, %h_next: ?) {
//         %hr_i = MatMul(%h, %r_i) : ?
//         %pre_i = Add(%x_i, %hr_i) : ?
//         %h_next = Tanh(%pre_i) : ?
//         return %h_next, %h_next
//       }, captures=1, num_scan_inputs=1} : f32[2,4], f32[5,2,4]
//   %y = Reshape(%y_steps, %y_dir_shape) : f32[5,1,2,4]
//   %y_h = Reshape(%y_h_final, %y_h_dir_shape) : f32[1,2,4]
//
// Chapter: docs/module2-graph-passes.md#5-recurrent-ops-as-a-scan-over-their-cell-expand-recurrent
#include "minic/passes/graph/expand_recurrent.h"

#include <map>

#include "graph_edit.h"
#include "minic/ops/recurrent.h"
#include "minic/passes/pass_registry.h"
#include "recurrent_cell.h"

namespace minic {

namespace {

// The inputs of LSTM, GRU and RNN, by position.
enum : size_t { kX, kW, kR, kB, kSequenceLens, kInitialH, kInitialC, kPeepholes };

// What the rewrite needs from a node it can expand.
struct Recurrence {
  RecurrentForm form;
  DType dtype;
  int64_t seq = 0, batch = 0, input = 0;
};

// The node's form where the pass can expand it (see the header), nullopt where not.
std::optional<Recurrence> match_recurrence(const Graph& graph, const Node& node) {
  if (node.op != "LSTM" && node.op != "GRU" && node.op != "RNN") return std::nullopt;
  if (graph.opset < 9) return std::nullopt;
  const Value* x = node.input(kX);
  if (!x->has_type || x->type.rank() != 3) return std::nullopt;
  if (x->type.dtype != DType::f32 && x->type.dtype != DType::f64) return std::nullopt;
  Recurrence rec;
  rec.form = read_recurrent_form(NodeContext(node, graph.opset), node.input(kR)->type);
  const Shape& shape = x->type.shape;
  rec.dtype = x->type.dtype;
  rec.seq = shape[rec.form.batch_first ? 1 : 0];
  rec.batch = shape[rec.form.batch_first ? 0 : 1];
  rec.input = shape[2];
  if (rec.seq == 0) return std::nullopt;
  if (node.has_input(kSequenceLens)) {
    const std::optional<std::vector<int64_t>> lengths =
        edit::constant_ints(node.input(kSequenceLens));
    if (!lengths) return std::nullopt;
    for (int64_t length : *lengths) {
      if (length != rec.seq) return std::nullopt;
    }
  }
  for (const Activation& activation : rec.form.activations) {
    if (activation.kind == Activation::Kind::thresholded_relu && graph.opset < 10) {
      return std::nullopt;
    }
  }
  return rec;
}

// Rewrites `node` (matched as `rec`) in the outer graph: the projections, one Scan per
// direction, and the reshapes and concatenations that give the outputs their shapes.
class Expansion {
 public:
  Expansion(Graph& graph, Node& node, const Recurrence& rec)
      : graph_(graph), node_(node), rec_(rec), form_(rec.form) {
    base_ = node.output(0)->name();
  }

  void run() {
    const int64_t hidden = form_.hidden;
    // Per direction: the final h (and c) [batch, hidden] and the stacked h of every step.
    std::vector<Value*> final_h, final_c, steps;
    for (int64_t d = 0; d < form_.directions; ++d) {
      std::vector<Value*> inputs = {initial_state(kInitialH, d, "h0")};
      if (form_.has_cell_state) inputs.push_back(initial_state(kInitialC, d, "c0"));
      for (int64_t g = 0; g < form_.gates; ++g) inputs.push_back(projection(d, g));
      CellBody cell = build_cell(node_.op, form_, d, rec_.dtype, graph_.opset, cell_weights(d));
      Attributes attributes = scan_attributes(d, std::move(cell.body));
      inputs.insert(inputs.end(), cell.captures.begin(), cell.captures.end());
      attributes["captures"] = static_cast<int64_t>(cell.captures.size());
      Node* scan = graph_.add_node("Scan", inputs, scan_output_names(), attributes);
      const TensorType state = type({rec_.batch, hidden});
      std::vector<TensorType> types = {state};
      if (form_.has_cell_state) types.push_back(state);
      types.push_back(form_.batch_first ? type({rec_.batch, rec_.seq, hidden})
                                        : type({rec_.seq, rec_.batch, hidden}));
      for (size_t i = 0; i < types.size(); ++i) set_type(scan->output(i), types[i]);
      final_h.push_back(scan->output(0));
      if (form_.has_cell_state) final_c.push_back(scan->output(1));
      steps.push_back(scan->outputs().back());
    }
    // Y: [seq, dirs, batch, hidden], or [batch, seq, dirs, hidden] with layout 1.
    const Shape y_one = form_.batch_first ? Shape{rec_.batch, rec_.seq, 1, hidden}
                                          : Shape{rec_.seq, 1, rec_.batch, hidden};
    // Y_h, Y_c: [dirs, batch, hidden], or [batch, dirs, hidden].
    const Shape state_one =
        form_.batch_first ? Shape{rec_.batch, 1, hidden} : Shape{1, rec_.batch, hidden};
    std::vector<Value*> results = {
        with_direction_axis(steps, y_one, form_.batch_first ? 2 : 1, ""),
        with_direction_axis(final_h, state_one, form_.batch_first ? 1 : 0, "_h")};
    if (form_.has_cell_state) {
      results.push_back(with_direction_axis(final_c, state_one, form_.batch_first ? 1 : 0, "_c"));
    }
    replace_outputs(results);
  }

 private:
  // x_g = X · W_gᵀ + bias_g for direction d, where the bias is Wb_g plus Rb_g unless the
  // body adds Rb_g itself (GRU's h gate under linear_before_reset). X is taken as a matrix
  // of seq * batch rows, so that the product is a 2-D MatMul by a weight (with its bias,
  // a Gemm once fuse-matmul-bias has run), then given back its first two axes.
  Value* projection(int64_t d, int64_t g) {
    const int64_t hidden = form_.hidden, gates = form_.gates;
    const std::string suffix = direction_suffix(d) + "_" + gate_names(gates)[g];
    Value* w = transposed(block(kW, gates, d * gates + g, "w" + suffix), "wt" + suffix);
    const Shape& shape = node_.input(kX)->type.shape;
    const TensorType rows = type({shape[0] * shape[1], hidden});
    Value* product = add("MatMul", {x_rows(), w}, "_xw" + suffix, rows);
    if (node_.has_input(kB)) {
      // B holds Wb for every direction's gates, then Rb: 2 * gates blocks per direction.
      Value* bias = block(kB, 2 * gates, 2 * d * gates + g, "wb" + suffix);
      const bool body_adds_rb = gates == 3 && form_.linear_before_reset && g == 2;
      if (!body_adds_rb) {
        Value* rb = block(kB, 2 * gates, (2 * d + 1) * gates + g, "rb" + suffix);
        bias = add("Add", {bias, rb}, "_b" + suffix, type({hidden}));
      }
      product = add("Add", {product, bias}, "_xwb" + suffix, rows);
    }
    return reshape(product, {shape[0], shape[1], hidden}, "_x" + suffix);
  }

  // X as a matrix [seq * batch, input], made once.
  Value* x_rows() {
    if (!x_rows_) {
      const Shape& shape = node_.input(kX)->type.shape;
      x_rows_ = reshape(node_.input(kX), {shape[0] * shape[1], shape[2]}, "_x_rows");
    }
    return x_rows_;
  }

  Value* reshape(Value* value, const Shape& shape, const std::string& suffix) {
    Value* dims = graph_.add_constant(
        graph_.unique_name(base_ + suffix + "_shape"),
        Tensor::from_vector<int64_t>({static_cast<int64_t>(shape.size())}, shape));
    return add("Reshape", {value, dims}, suffix, type(shape));
  }

  // What direction d's cell reads besides the states and the projections.
  CellWeights cell_weights(int64_t d) {
    const int64_t gates = form_.gates;
    CellWeights weights;
    for (int64_t g = 0; g < gates; ++g) {
      const std::string suffix = direction_suffix(d) + "_" + gate_names(gates)[g];
      weights.r.push_back(transposed(block(kR, gates, d * gates + g, "r" + suffix), "rt" + suffix));
    }
    if (form_.has_cell_state && node_.has_input(kPeepholes)) {
      const char* names[] = {"_i", "_o", "_f"};
      for (int64_t k = 0; k < 3; ++k) {
        weights.p.push_back(block(kPeepholes, 3, 3 * d + k, "p" + direction_suffix(d) + names[k]));
      }
    }
    if (gates == 3 && form_.linear_before_reset && node_.has_input(kB)) {
      weights.rb_h =
          block(kB, 2 * gates, (2 * d + 1) * gates + 2, "rb" + direction_suffix(d) + "_h");
    }
    return weights;
  }

  // Block k of `hidden` rows of input `index` (W, R, B or P, whose axis 1, or for B and P
  // axis 1 of [dirs, ...], holds `per_direction` such blocks for each direction): the input
  // reshaped once to [dirs * per_direction, hidden, ...], then row k of that.
  Value* block(size_t index, int64_t per_direction, int64_t k, const std::string& name) {
    Value* input = node_.input(index);
    const Shape& shape = input->type.shape;
    Shape blocks = {shape[0] * per_direction, form_.hidden};
    if (shape.size() == 3) blocks.push_back(shape[2]);
    auto [it, inserted] = reshaped_.try_emplace(index, nullptr);
    if (inserted) it->second = reshape(input, blocks, "_" + input->name() + "_blocks");
    Value* position = graph_.add_constant(graph_.unique_name(base_ + "_" + name + "_index"),
                                          Tensor::from_vector<int64_t>({}, {k}));
    return add("Gather", {it->second, position}, "_" + name,
               type(Shape(blocks.begin() + 1, blocks.end())), {{"axis", int64_t{0}}});
  }

  // A matrix transposed.
  Value* transposed(Value* matrix, const std::string& name) {
    const Shape& shape = matrix->type.shape;
    return add("Transpose", {matrix}, "_" + name, type({shape[1], shape[0]}),
               {{"perm", std::vector<int64_t>{1, 0}}});
  }

  // Direction d's part of initial_h or initial_c ([batch, hidden]), zeros where omitted.
  Value* initial_state(size_t index, int64_t d, const std::string& name) {
    const Shape shape = {rec_.batch, form_.hidden};
    const std::string hint = base_ + "_" + name + direction_suffix(d);
    if (!node_.has_input(index)) {
      return edit::add_constant_from_doubles(graph_, hint, rec_.dtype, shape,
                                             std::vector<double>(rec_.batch * form_.hidden, 0));
    }
    Value* position = graph_.add_constant(graph_.unique_name(hint + "_index"),
                                          Tensor::from_vector<int64_t>({}, {d}));
    return add("Gather", {node_.input(index), position}, "_" + name + direction_suffix(d),
               type(shape), {{"axis", static_cast<int64_t>(form_.batch_first ? 1 : 0)}});
  }

  Attributes scan_attributes(int64_t d, GraphAttribute body) const {
    const auto gates = static_cast<size_t>(form_.gates);
    Attributes attributes = {{"body", std::move(body)}, {"num_scan_inputs", form_.gates}};
    if (form_.batch_first) {
      attributes["scan_input_axes"] = std::vector<int64_t>(gates, 1);
      attributes["scan_output_axes"] = std::vector<int64_t>{1};
    }
    if (form_.backward(d)) {
      attributes["scan_input_directions"] = std::vector<int64_t>(gates, 1);
      attributes["scan_output_directions"] = std::vector<int64_t>{1};
    }
    return attributes;
  }

  std::vector<std::string> scan_output_names() const {
    std::vector<std::string> names = {graph_.unique_name(base_ + "_h_final")};
    if (form_.has_cell_state) names.push_back(graph_.unique_name(base_ + "_c_final"));
    names.push_back(graph_.unique_name(base_ + "_steps"));
    return names;
  }

  // Each direction's `parts` reshaped to `one` (the direction axis of size 1 added), then
  // concatenated along `axis` where there are two. `suffix` names the output: "" for Y,
  // "_h" for Y_h, "_c" for Y_c.
  Value* with_direction_axis(const std::vector<Value*>& parts, const Shape& one, int64_t axis,
                             const std::string& suffix) {
    std::vector<Value*> reshaped;
    for (Value* part : parts) reshaped.push_back(reshape(part, one, suffix + "_dir"));
    if (reshaped.size() == 1) return reshaped[0];
    Shape both = one;
    both[axis] = 2;
    return add("Concat", reshaped, suffix + "_dirs", type(both), {{"axis", axis}});
  }

  // The node's outputs read `results` instead, and the node goes; each result takes the
  // name of the output it replaces.
  void replace_outputs(const std::vector<Value*>& results) {
    std::vector<std::pair<Value*, std::string>> renames;
    for (size_t i = 0; i < node_.outputs().size(); ++i) {
      Value* output = node_.output(i);
      graph_.replace_all_uses_with(output, results[i]);
      renames.emplace_back(results[i], output->name());
    }
    graph_.erase_node(&node_);
    graph_.remove_unused_values();
    for (auto& [value, name] : renames) {
      if (graph_.find_value(value->name()) == value) graph_.rename_value(value, name);
    }
  }

  Value* add(const std::string& op, std::vector<Value*> inputs, const std::string& suffix,
             const TensorType& result, Attributes attributes = {}) {
    Node* node =
        graph_.add_node(op, std::move(inputs), {graph_.unique_name(base_ + suffix)}, attributes);
    set_type(node->output(0), result);
    return node->output(0);
  }

  static void set_type(Value* value, const TensorType& type) {
    value->type = type;
    value->has_type = true;
  }

  TensorType type(Shape shape) const { return {rec_.dtype, std::move(shape)}; }

  std::string direction_suffix(int64_t d) const {
    return form_.directions == 2 ? (d == 0 ? "_fw" : "_bw") : "";
  }

  Graph& graph_;
  Node& node_;
  const Recurrence& rec_;
  const RecurrentForm& form_;
  std::string base_;                   // the name the new values are named after: Y's
  std::map<size_t, Value*> reshaped_;  // W, R, B, P by input index, as blocks (see block)
  Value* x_rows_ = nullptr;            // see x_rows
};

}  // namespace

void expand_recurrent(Graph& graph) {
  bool changed = false;
  for (Node* node : graph.nodes()) {
    const std::optional<Recurrence> rec = match_recurrence(graph, *node);
    if (!rec) continue;
    Expansion(graph, *node, *rec).run();
    changed = true;
  }
  // The new nodes were appended after the nodes that read the recurrent ops' results.
  if (changed) graph.sort_topologically();
}

MINIC_REGISTER_GRAPH_PASS("expand-recurrent", expand_recurrent,
                          "LSTM, GRU and RNN -> input projections and a Scan over their cell");

}  // namespace minic
