// One step of a recurrent op's cell, built as a graph: the body of the Scan that
// expand-recurrent makes of an LSTM, GRU or RNN (expand_recurrent.cpp has the equations
// and the rewrite around it). Course module 2.
//
// Chapter: docs/module2-graph-passes.md#5-recurrent-ops-as-a-scan-over-their-cell-expand-recurrent
#include "recurrent_cell.h"

#include <cctype>
#include <map>
#include <span>

#include "graph_edit.h"

namespace minic {

std::vector<std::string> gate_names(int64_t gates) {
  if (gates == 4) return {"i", "o", "f", "c"};
  if (gates == 3) return {"z", "r", "h"};
  return {"i"};
}

namespace {

// Builds one direction's cell as a Scan body: inputs the states h (and c), one scan input
// per gate (x_g at the current step), then the weights it reads from the outer graph
// (captures: R_gᵀ, P, Rb_h); results h' (and c'), then h' again as the scan output.
class CellBuilder {
 public:
  CellBuilder(const RecurrentForm& form, int64_t direction, DType dtype, int opset,
              const CellWeights& weights)
      : form_(form), weights_(weights), d_(direction), dtype_(dtype) {
    body_->opset = opset;
    activations_ = std::span<const Activation>(form_.activations)
                       .subspan(d_ * form_.per_direction, form_.per_direction);
  }

  GraphAttribute build(const std::string& op) {
    const std::vector<std::string> names = gate_names(form_.gates);
    std::string lower = op;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    body_->name = lower + (form_.backward(d_) ? "_backward" : "_forward");
    h_ = input("h");
    if (form_.has_cell_state) c_ = input("c");
    for (const std::string& gate : names) x_.push_back(input("x_" + gate));
    for (int64_t g = 0; g < form_.gates; ++g) r_.push_back(capture("r_" + names[g], weights_.r[g]));
    const char* peepholes[] = {"p_i", "p_o", "p_f"};
    for (size_t k = 0; k < weights_.p.size(); ++k)
      p_.push_back(capture(peepholes[k], weights_.p[k]));
    if (weights_.rb_h) rb_h_ = capture("rb_h", weights_.rb_h);
    if (op == "LSTM") build_lstm();
    if (op == "GRU") build_gru();
    if (op == "RNN") build_rnn();
    body_->add_output(h_next_);
    if (c_next_) body_->add_output(c_next_);
    body_->add_output(h_next_);
    return body_;
  }

  // The outer values the body's last inputs stand for, in order: the Scan's captures.
  std::vector<Value*> captures() const { return captures_; }

 private:
  // LSTM's gates in W's order.
  enum : size_t { kInput = 0, kOutput = 1, kForget = 2, kCell = 3 };

  void build_lstm() {
    // The peepholes P are in the order i, o, f.
    auto peephole = [&](const char* name, size_t k, Value* state, Value* pre) {
      if (p_.empty()) return pre;
      return node("Add", {pre, node("Mul", {state, p_[k]}, std::string("peep_") + name)},
                  std::string("pre_") + name);
    };
    Value* input_gate = activate(0, peephole("i", 0, c_, gate(kInput)), "i");
    Value* forget_gate = form_.input_forget ? node("Sub", {scalar("one", 1.0), input_gate}, "f")
                                            : activate(0, peephole("f", 2, c_, gate(kForget)), "f");
    Value* candidate = activate(1, gate(kCell), "g");
    c_next_ = node(
        "Add",
        {node("Mul", {forget_gate, c_}, "kept"), node("Mul", {input_gate, candidate}, "added")},
        "c_next");
    Value* output_gate = activate(0, peephole("o", 1, c_next_, gate(kOutput)), "o");
    // h(c') is not clipped: clip bounds the gates' pre-activations only (rnn_cells.cpp).
    h_next_ = node("Mul", {output_gate, activation(2, c_next_, "c_act")}, "h_next");
  }

  void build_gru() {
    enum : size_t { kUpdate = 0, kReset = 1, kHidden = 2 };
    Value* z = activate(0, gate(kUpdate), "z");
    Value* r = activate(0, gate(kReset), "r");
    Value* recurrent = nullptr;
    if (form_.linear_before_reset) {
      // Rb_h is added here, not in the projection: r multiplies it.
      Value* product = node("MatMul", {h_, r_[kHidden]}, "hr_h");
      if (rb_h_) product = node("Add", {product, rb_h_}, "hr_h_bias");
      recurrent = node("Mul", {r, product}, "reset_hr_h");
    } else {
      recurrent = node("MatMul", {node("Mul", {r, h_}, "reset_h"), r_[kHidden]}, "reset_h_r_h");
    }
    Value* n = activate(1, node("Add", {x_[kHidden], recurrent}, "pre_h"), "n");
    Value* keep = node("Mul", {z, h_}, "kept");
    Value* take = node("Mul", {node("Sub", {scalar("one", 1.0), z}, "one_minus_z"), n}, "added");
    h_next_ = node("Add", {take, keep}, "h_next");
  }

  void build_rnn() { h_next_ = activate(0, gate(0), "h_next"); }

  // Gate g's pre-activation without peepholes: x_g + h · R_gᵀ.
  Value* gate(size_t g) {
    const std::string name = gate_names(form_.gates)[g];
    return node("Add", {x_[g], node("MatMul", {h_, r_[g]}, "hr_" + name)}, "pre_" + name);
  }

  // Activation `which` of this direction applied to `pre`, clipped first where clip is set.
  Value* activate(size_t which, Value* pre, const std::string& name) {
    if (form_.clip) pre = clip(pre, *form_.clip);
    return activation(which, pre, name);
  }

  Value* clip(Value* x, double bound) {
    const std::string name = x->name() + "_clipped";
    if (body_->opset >= 11) {
      return node("Clip", {x, scalar("minus_clip", -bound), scalar("clip", bound)}, name);
    }
    return node("Clip", {x}, name,
                {{"min", static_cast<float>(-bound)}, {"max", static_cast<float>(bound)}});
  }

  // The function itself, as the ONNX operator of the same name or a product and a sum.
  Value* activation(size_t which, Value* x, const std::string& name) {
    const Activation& a = activations_[which];
    const float alpha = static_cast<float>(a.alpha), beta = static_cast<float>(a.beta);
    using Kind = Activation::Kind;
    switch (a.kind) {
      case Kind::relu:
        return node("Relu", {x}, name);
      case Kind::tanh:
        return node("Tanh", {x}, name);
      case Kind::sigmoid:
        return node("Sigmoid", {x}, name);
      case Kind::softsign:
        return node("Softsign", {x}, name);
      case Kind::softplus:
        return node("Softplus", {x}, name);
      case Kind::leaky_relu:
        return node("LeakyRelu", {x}, name, {{"alpha", alpha}});
      case Kind::thresholded_relu:
        return node("ThresholdedRelu", {x}, name, {{"alpha", alpha}});
      case Kind::elu:
        return node("Elu", {x}, name, {{"alpha", alpha}});
      case Kind::hard_sigmoid:
        return node("HardSigmoid", {x}, name, {{"alpha", alpha}, {"beta", beta}});
      case Kind::affine:
        return node(
            "Add",
            {node("Mul", {x, scalar("alpha", a.alpha)}, name + "_scaled"), scalar("beta", a.beta)},
            name);
      case Kind::scaled_tanh: {
        Value* inner =
            node("Tanh", {node("Mul", {x, scalar("beta", a.beta)}, name + "_in")}, name + "_tanh");
        return node("Mul", {inner, scalar("alpha", a.alpha)}, name);
      }
    }
    internal_fail("an activation kind expand-recurrent does not know");
  }

  Value* input(const std::string& name) {
    Value* value = body_->add_input(name, TensorType{});
    value->has_type = false;  // bodies are typed for the values they run on
    return value;
  }

  // A body input standing for the outer value `outer`.
  Value* capture(const std::string& name, Value* outer) {
    captures_.push_back(outer);
    return input(name);
  }

  Value* node(const std::string& op, std::vector<Value*> inputs, const std::string& name,
              Attributes attributes = {}) {
    return body_->add_node(op, std::move(inputs), {body_->unique_name(name)}, attributes)
        ->output(0);
  }

  Value* constant(const std::string& name, Shape shape, const std::vector<double>& values) {
    return edit::add_constant_from_doubles(*body_, name, dtype_, std::move(shape), values);
  }

  // A scalar constant of the body, one for each name and value however often it is read.
  Value* scalar(const std::string& name, double value) {
    Value*& scalar = scalars_[{name, value}];
    if (!scalar) scalar = constant(name, {}, {value});
    return scalar;
  }

  const RecurrentForm& form_;
  const CellWeights& weights_;
  int64_t d_;
  DType dtype_;
  std::span<const Activation> activations_;
  std::shared_ptr<Graph> body_ = std::make_shared<Graph>();
  std::vector<Value*> captures_;
  std::map<std::pair<std::string, double>, Value*> scalars_;
  Value* h_ = nullptr;
  Value* c_ = nullptr;
  std::vector<Value*> x_;  // one per gate
  std::vector<Value*> r_;  // R_gᵀ, one per gate
  std::vector<Value*> p_;  // P_i, P_o, P_f, where the node has P
  Value* rb_h_ = nullptr;
  Value* h_next_ = nullptr;
  Value* c_next_ = nullptr;
};

}  // namespace

CellBody build_cell(const std::string& op, const RecurrentForm& form, int64_t direction,
                    DType dtype, int opset, const CellWeights& weights) {
  CellBuilder builder(form, direction, dtype, opset, weights);
  GraphAttribute body = builder.build(op);
  return {std::move(body), builder.captures()};
}

}  // namespace minic
