// Tests of expand-recurrent (src/passes/graph/expand_recurrent.cpp): LSTM, GRU and RNN
// nodes become Scans over their cells and compute what the reference kernel computes, on
// random inputs, for every activation function, direction, layout and optional input; the
// nodes it must leave alone stay; inside a compiled model the bodies run as compiled code.
// Course module 2.
#include <fmt/format.h>

#include "minic/driver/compile.h"
#include "minic/passes/graph/expand_recurrent.h"
#include "pass_test_util.h"

using namespace minic;
using namespace minic::testing;

namespace {

// The reference kernel computes in double, the cell in the model's f32: a few roundings.
const Tolerance kTolerance{1e-4, 1e-5};

// Expands `text`'s graph, checks its outputs on random inputs against the reference
// kernel's, and that `scans` Scans replace the recurrent node.
void check_expands(const std::string& text, int scans, uint64_t seed = 1) {
  INFO(text);
  Graph graph = graph_from_text(text);
  check_pass_preserves_outputs(graph, expand_recurrent, seed, kTolerance);
  CHECK(count_op(graph, "Scan") == scans);
  CHECK(count_op(graph, "LSTM") + count_op(graph, "GRU") + count_op(graph, "RNN") == 0);
}

// An RNN over 4 steps of a batch of 2, hidden 3, with `attributes` and reading `inputs`
// (after X, W, R) of the graph's extra `declared` inputs.
std::string rnn_graph(const std::string& attributes, const std::string& inputs = "",
                      const std::string& declared = "") {
  return fmt::format(
      R"(graph g(%x: f32[4,2,5], %w: f32[1,3,5], %r: f32[1,3,3]{}) -> (%y: f32[4,1,2,3], %y_h: f32[1,2,3]) opset 17 {{
  %y, %y_h = RNN(%x, %w, %r{}) {{hidden_size=3{}}}
  return %y, %y_h
}})",
      declared, inputs, attributes);
}

}  // namespace

TEST_CASE("expand-recurrent writes every activation function of RNN as ops", "[passes]") {
  const char* activations[] = {
      R"(activations=["Relu"])",
      R"(activations=["Tanh"])",
      R"(activations=["Sigmoid"])",
      R"(activations=["Affine"], activation_alpha=[0.7], activation_beta=[-0.2])",
      R"(activations=["LeakyRelu"], activation_alpha=[0.3])",
      R"(activations=["ThresholdedRelu"], activation_alpha=[0.4])",
      R"(activations=["ScaledTanh"], activation_alpha=[1.5], activation_beta=[0.5])",
      R"(activations=["HardSigmoid"], activation_alpha=[0.3], activation_beta=[0.4])",
      R"(activations=["Elu"], activation_alpha=[0.8])",
      R"(activations=["Softsign"])",
      R"(activations=["Softplus"])",
  };
  for (const char* activation : activations)
    check_expands(rnn_graph(std::string(", ") + activation), 1);
}

TEST_CASE("expand-recurrent keeps RNN's bias, initial state, clip and directions", "[passes]") {
  check_expands(rnn_graph(", clip=0.5", ", %b, _, %h0", ", %b: f32[1,6], %h0: f32[1,2,3]"), 1);
  check_expands(rnn_graph(R"(, direction="reverse")", ", %b", ", %b: f32[1,6]"), 1);
  // sequence_lens equal to the sequence length everywhere changes nothing.
  const std::string full_length =
      R"(graph g(%x: f32[4,2,5], %w: f32[1,3,5], %r: f32[1,3,3]) -> (%y_h: f32[1,2,3]) opset 17 {
  %lengths = const i32[2] dense<[4, 4]>
  %y, %y_h = RNN(%x, %w, %r, _, %lengths) {hidden_size=3}
  return %y_h
})";
  check_expands(full_length, 1);
}

TEST_CASE("expand-recurrent turns LSTM into a Scan per direction", "[passes]") {
  const std::string declared =
      "%x: {0}[3,2,4], %w: {0}[{1},8,4], %r: {0}[{1},8,2], %b: {0}[{1},16], %h0: {0}[{1},2,2], "
      "%c0: {0}[{1},2,2], %p: {0}[{1},6]";
  struct Case {
    const char* dtype;
    int directions;
    const char* attributes;
    const char* inputs;
  };
  const Case cases[] = {
      {"f32", 1, "", "%x, %w, %r"},
      {"f32", 1, R"(, direction="reverse", input_forget=1)", "%x, %w, %r, %b, _, %h0, %c0, %p"},
      {"f32", 2, R"(, direction="bidirectional", clip=0.8)", "%x, %w, %r, %b, _, %h0, %c0, %p"},
      {"f64", 2,
       R"(, direction="bidirectional", activations=["HardSigmoid", "Softsign", "Elu", "Sigmoid", "Tanh", "Tanh"])",
       "%x, %w, %r, %b, _, _, %c0"},
  };
  for (const Case& c : cases) {
    const std::string text = fmt::format(
        R"(graph g({0}) -> (%y: {1}[3,{2},2,2], %y_h: {1}[{2},2,2], %y_c: {1}[{2},2,2]) opset 17 {{
  %y, %y_h, %y_c = LSTM({3}) {{hidden_size=2{4}}}
  return %y, %y_h, %y_c
}})",
        fmt::format(fmt::runtime(declared), c.dtype, c.directions), c.dtype, c.directions, c.inputs,
        c.attributes);
    check_expands(text, c.directions);
  }
}

TEST_CASE("expand-recurrent turns GRU into a Scan with or without linear_before_reset",
          "[passes]") {
  for (int linear_before_reset : {0, 1}) {
    for (const char* direction : {"forward", "bidirectional"}) {
      const int dirs = std::string(direction) == "bidirectional" ? 2 : 1;
      // Layout 1: batch first.
      const std::string text = fmt::format(
          R"(graph g(%x: f32[2,5,3], %w: f32[{0},12,3], %r: f32[{0},12,4], %b: f32[{0},24], %h0: f32[2,{0},4]) -> (%y: f32[2,5,{0},4], %y_h: f32[2,{0},4]) opset 22 {{
  %y, %y_h = GRU(%x, %w, %r, %b, _, %h0) {{hidden_size=4, layout=1, direction="{1}", linear_before_reset={2}}}
  return %y, %y_h
}})",
          dirs, direction, linear_before_reset);
      check_expands(text, dirs, 7);
    }
  }
}

TEST_CASE("expand-recurrent leaves what a Scan cannot compute to the reference kernel",
          "[passes]") {
  const char* texts[] = {
      // Sequence lengths known only when the model runs.
      R"(graph g(%x: f32[3,2,2], %w: f32[1,2,2], %r: f32[1,2,2], %n: i32[2]) -> (%y_h: f32[1,2,2]) opset 17 {
  %y, %y_h = RNN(%x, %w, %r, _, %n) {hidden_size=2}
  return %y_h
})",
      // Sequences shorter than the input.
      R"(graph g(%x: f32[3,2,2], %w: f32[1,2,2], %r: f32[1,2,2]) -> (%y_h: f32[1,2,2]) opset 17 {
  %n = const i32[2] dense<[3, 1]>
  %y, %y_h = RNN(%x, %w, %r, _, %n) {hidden_size=2}
  return %y_h
})",
      // Opset 8: no Scan with axes and directions.
      R"(graph g(%x: f32[3,2,2], %w: f32[1,2,2], %r: f32[1,2,2]) -> (%y_h: f32[1,2,2]) opset 8 {
  %y, %y_h = RNN(%x, %w, %r) {hidden_size=2}
  return %y_h
})",
      // f16: the cell would compute in f16.
      R"(graph g(%x: f16[3,2,2], %w: f16[1,2,2], %r: f16[1,2,2]) -> (%y_h: f16[1,2,2]) opset 17 {
  %y, %y_h = RNN(%x, %w, %r) {hidden_size=2}
  return %y_h
})",
  };
  for (const char* text : texts) {
    INFO(text);
    Graph graph = graph_from_text(text);
    const std::string before = print_graph(graph);
    expand_recurrent(graph);
    CHECK(print_graph(graph) == before);
  }
}

TEST_CASE("an expanded LSTM with constant weights compiles its cell and its projections",
          "[passes][driver]") {
  // The weights as constants, as exported models have them: after the default pipeline the
  // blocks of W and R are constants, and the Scans' bodies run as compiled code.
  std::mt19937 random(5);
  std::uniform_real_distribution<float> value(-0.5f, 0.5f);
  auto constant = [&](const char* name, Shape shape) {
    std::string values;
    for (int64_t i = 0; i < num_elements(shape); ++i) {
      values += fmt::format("{}{}", i ? ", " : "", value(random));
    }
    return fmt::format("  %{} = const f32[{}] dense<[{}]>\n", name, fmt::join(shape, ","), values);
  };
  const std::string text = "graph g(%x: f32[6,1,3]) -> (%y: f32[6,2,1,4]) opset 17 {\n" +
                           constant("w", {2, 16, 3}) + constant("r", {2, 16, 4}) +
                           constant("b", {2, 32}) +
                           R"(  %y = LSTM(%x, %w, %r, %b) {hidden_size=4, direction="bidirectional"}
  return %y
})";
  Graph reference = graph_from_text(text);
  Graph graph = graph_from_text(text);
  std::unique_ptr<CompiledModel> model = compile_model(std::move(graph));
  CHECK(count_op(model->graph(), "Scan") == 2);
  for (const Node* node : model->graph().nodes()) {
    if (node->op != "Scan") continue;
    // The captures R_gᵀ, folded to constants.
    for (size_t i = node->inputs().size() - 4; i < node->inputs().size(); ++i) {
      CHECK(node->input(i)->is_constant());
    }
  }
  const std::vector<Tensor> inputs = random_inputs(reference, 11);
  const std::vector<Tensor> expected = interpret(reference, inputs);
  const std::vector<Tensor> actual = model->run(inputs);
  REQUIRE(actual.size() == 1);
  TensorComparison comparison = compare_tensors(actual[0], expected[0], kTolerance);
  INFO(describe(comparison));
  CHECK(comparison.ok());
  CHECK(model->compiled_bodies() == 2);  // one cell per direction
}
