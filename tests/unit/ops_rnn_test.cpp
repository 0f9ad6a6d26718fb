// Unit tests for the recurrent ops LSTM, GRU and RNN: one-unit networks whose results are
// worked out by hand in the comments, the activations, and the errors for bad attributes
// and shapes. Course module 2. (tests/models/recurrent_ort.py compares many random
// attribute combinations with onnxruntime.)
#include "ops_test_util.h"

#include <cmath>

using namespace minic;
using namespace minic::test;

namespace {

using Names = std::vector<std::string>;
using Floats = std::vector<float>;

const TensorType kScalarSteps{DType::f32, {2, 1, 1}};  // X: 2 steps, batch 1, input 1
const TensorType kOneByOne{DType::f32, {1, 1, 1}};     // W or R of one gate, one unit

// An RNN with one unit, W = 2, R = 1 and Relu: h_t = relu(2 x_t + h_{t-1}).
OneNode relu_rnn(Attributes attributes, const std::vector<TensorType>& inputs) {
  attributes["activations"] = Names{"Relu"};
  return OneNode(14, "RNN", inputs, std::move(attributes), {}, 2);
}

}  // namespace

// --- RNN --------------------------------------------------------------------------------------

TEST_CASE("RNN forward: each step feeds the last hidden state back", "[ops][rnn]") {
  // x = [1, 2]: h1 = relu(2 * 1 + 0) = 2, h2 = relu(2 * 2 + 2) = 6.
  OneNode g = relu_rnn({}, {kScalarSteps, kOneByOne, kOneByOne});
  auto outputs = g.run_all({floats({2, 1, 1}, {1, 2}), floats({1, 1, 1}, {2}),
                            floats({1, 1, 1}, {1})});
  require_values(outputs[0], {2, 1, 1, 1}, {2, 6});
  require_values(outputs[1], {1, 1, 1}, {6});
}

TEST_CASE("RNN reverse runs from the last step; bidirectional does both", "[ops][rnn]") {
  // Reverse: h at t = 1 is relu(2 * 2) = 4, then at t = 0 relu(2 * 1 + 4) = 6; Y stays
  // indexed by time: [6, 4].
  OneNode reverse = relu_rnn({{"direction", std::string("reverse")}},
                             {kScalarSteps, kOneByOne, kOneByOne});
  auto outputs = reverse.run_all({floats({2, 1, 1}, {1, 2}), floats({1, 1, 1}, {2}),
                                  floats({1, 1, 1}, {1})});
  require_values(outputs[0], {2, 1, 1, 1}, {6, 4});
  require_values(outputs[1], {1, 1, 1}, {6});

  // Both directions with the same weights: Y[t][d] = [[2, 6], [6, 4]], Y_h = [6, 6].
  const TensorType two{DType::f32, {2, 1, 1}};
  OneNode both = relu_rnn({{"direction", std::string("bidirectional")}},
                          {kScalarSteps, two, two});
  outputs = both.run_all({floats({2, 1, 1}, {1, 2}), floats({2, 1, 1}, {2, 2}),
                          floats({2, 1, 1}, {1, 1})});
  require_values(outputs[0], {2, 2, 1, 1}, {2, 6, 6, 4});
  require_values(outputs[1], {2, 1, 1}, {6, 6});
}

TEST_CASE("RNN with layout 1 and sequence_lens: a short sequence stops early", "[ops][rnn]") {
  // Batch-first X: batch 0 is [1, 2], batch 1 is [3, 4] with length 1. Batch 0 gives
  // [2, 6] as above; batch 1 gives relu(2 * 3) = 6 and then zero past its end.
  // Y is [batch, seq, dirs, hidden], Y_h [batch, dirs, hidden].
  OneNode g = relu_rnn({{"layout", int64_t{1}}},
                       {{DType::f32, {2, 2, 1}}, kOneByOne, kOneByOne, {DType::f32, {1, 2}},
                        {DType::i32, {2}}});
  Tensor lengths = int64s({2}, {2, 1}).cast(DType::i32);
  auto outputs = g.run_all({floats({2, 2, 1}, {1, 2, 3, 4}), floats({1, 1, 1}, {2}),
                            floats({1, 1, 1}, {1}), floats({1, 2}, {0, 0}), lengths});
  require_values(outputs[0], {2, 2, 1, 1}, {2, 6, 6, 0});
  require_values(outputs[1], {2, 1, 1}, {6, 6});
}

TEST_CASE("RNN with the bias and initial_h; hidden_size comes from R", "[ops][rnn]") {
  // h1 = relu(2 * 1 + 1 * 3 + Wb 0.5 + Rb 0.5) = 6 with initial_h = 3 (no hidden_size).
  OneNode g(14, "RNN",
            {{DType::f32, {1, 1, 1}}, kOneByOne, kOneByOne, {DType::f32, {1, 2}},
             {DType::i32, {1}}, {DType::f32, {1, 1, 1}}},
            {{"activations", Names{"Relu"}}}, {}, 2);
  auto outputs = g.run_all({floats({1, 1, 1}, {1}), floats({1, 1, 1}, {2}),
                            floats({1, 1, 1}, {1}), floats({1, 2}, {0.5f, 0.5f}),
                            int64s({1}, {1}).cast(DType::i32), floats({1, 1, 1}, {3})});
  require_values(outputs[1], {1, 1, 1}, {6});
}

TEST_CASE("RNN in float64 and float16", "[ops][rnn]") {
  for (DType dtype : {DType::f64, DType::f16}) {
    const TensorType steps{dtype, {2, 1, 1}};
    const TensorType weight{dtype, {1, 1, 1}};
    OneNode g = relu_rnn({}, {steps, weight, weight});
    auto outputs = g.run_all({floats({2, 1, 1}, {1, 2}).cast(dtype),
                              floats({1, 1, 1}, {2}).cast(dtype),
                              floats({1, 1, 1}, {1}).cast(dtype)});
    REQUIRE(outputs[0].dtype() == dtype);
    require_values(outputs[0], {2, 1, 1, 1}, {2, 6});
  }
}

TEST_CASE("the recurrent activations and their alpha and beta", "[ops][rnn]") {
  // With W = 1 and R = 0, h_t = f(x_t): Y lists f at x = -2, 0.5, 3.
  struct Case {
    std::string name;
    Floats alpha, beta;
    std::vector<double> expected;
  };
  auto all = [](double (*f)(double)) { return std::vector<double>{f(-2), f(0.5), f(3)}; };
  const std::vector<Case> cases = {
      {"Relu", {}, {}, {0, 0.5, 3}},
      {"Tanh", {}, {}, all([](double x) { return std::tanh(x); })},
      {"Sigmoid", {}, {}, all([](double x) { return 1 / (1 + std::exp(-x)); })},
      {"Affine", {2}, {1}, {-3, 2, 7}},                    // 2x + 1
      {"LeakyRelu", {0.1f}, {}, {-0.2, 0.5, 3}},
      {"LeakyRelu", {}, {}, {-0.02, 0.5, 3}},              // alpha defaults to 0.01
      {"ThresholdedRelu", {1}, {}, {0, 0, 3}},
      {"ScaledTanh", {2}, {0.5f}, all([](double x) { return 2 * std::tanh(0.5 * x); })},
      {"HardSigmoid", {0.2f}, {0.5f}, {0.1, 0.6, 1}},      // clamp(0.2x + 0.5, 0, 1)
      {"Elu", {1}, {}, {std::exp(-2.0) - 1, 0.5, 3}},
      {"Softsign", {}, {}, {-2.0 / 3, 1.0 / 3, 0.75}},     // x / (1 + |x|)
      {"softplus", {}, {}, all([](double x) { return std::log(1 + std::exp(x)); })},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    Attributes attributes = {{"activations", Names{c.name}}};
    if (!c.alpha.empty()) attributes["activation_alpha"] = c.alpha;
    if (!c.beta.empty()) attributes["activation_beta"] = c.beta;
    OneNode g(14, "RNN", {{DType::f32, {3, 1, 1}}, kOneByOne, kOneByOne}, attributes);
    Tensor y = g.run({floats({3, 1, 1}, {-2, 0.5f, 3}), floats({1, 1, 1}, {1}),
                      floats({1, 1, 1}, {0})});
    require_values(y, {3, 1, 1, 1}, c.expected, 1e-6);
  }
}

// --- GRU --------------------------------------------------------------------------------------

TEST_CASE("GRU: the reset gate before or after the product with Rh", "[ops][gru]") {
  // Identity activations (Affine 1, 0), one unit, x = 1, initial_h = 2, only Rbh = 1 in B:
  //   z = Wz x + Rz h = 0.5,   r = Wr x + Rr h = 0.25 * 2 = 0.5
  //   linear_before_reset 0: n = Wh x + Rh (r h) + Rbh = 1 + 1 + 1 = 3
  //   linear_before_reset 1: n = Wh x + r (Rh h + Rbh) = 1 + 0.5 * 3 = 2.5
  //   H = (1 - z) n + z h = 0.5 n + 1: 2.5 and 2.25.
  for (int64_t linear : {0, 1}) {
    OneNode g(14, "GRU",
              {{DType::f32, {1, 1, 1}}, {DType::f32, {1, 3, 1}}, {DType::f32, {1, 3, 1}},
               {DType::f32, {1, 6}}, {DType::i32, {1}}, {DType::f32, {1, 1, 1}}},
              {{"hidden_size", int64_t{1}},
               {"linear_before_reset", linear},
               {"activations", Names{"Affine", "Affine"}},
               {"activation_alpha", Floats{1, 1}},
               {"activation_beta", Floats{0, 0}}},
              {}, 2);
    auto outputs = g.run_all({floats({1, 1, 1}, {1}), floats({1, 3, 1}, {0.5f, 0, 1}),
                              floats({1, 3, 1}, {0, 0.25f, 1}), floats({1, 6}, {0, 0, 0, 0, 0, 1}),
                              int64s({1}, {1}).cast(DType::i32), floats({1, 1, 1}, {2})});
    require_values(outputs[1], {1, 1, 1}, {linear ? 2.25 : 2.5});
  }
}

// --- LSTM -------------------------------------------------------------------------------------

namespace {

// An LSTM with one unit and identity activations: x = 1, W (i, o, f, c) = [0.5, 2, 0.25, 3],
// R = 0, initial_c = 4, and P as given (zeros when `peepholes` is empty).
std::vector<Tensor> identity_lstm(Attributes attributes, Floats peepholes) {
  attributes["activations"] = Names{"Affine", "Affine", "Affine"};
  attributes["activation_alpha"] = Floats{1, 1, 1};
  attributes["activation_beta"] = Floats{0, 0, 0};
  const TensorType state{DType::f32, {1, 1, 1}};
  OneNode g(14, "LSTM",
            {{DType::f32, {1, 1, 1}}, {DType::f32, {1, 4, 1}}, {DType::f32, {1, 4, 1}},
             {DType::f32, {1, 8}}, {DType::i32, {1}}, state, state, {DType::f32, {1, 3}}},
            attributes, {}, 3);
  if (peepholes.empty()) peepholes = {0, 0, 0};
  return g.run_all({floats({1, 1, 1}, {1}), floats({1, 4, 1}, {0.5f, 2, 0.25f, 3}),
                    floats({1, 4, 1}, {0, 0, 0, 0}), floats({1, 8}, Floats(8, 0)),
                    int64s({1}, {1}).cast(DType::i32), floats({1, 1, 1}, {0}),
                    floats({1, 1, 1}, {4}), floats({1, 3}, peepholes)});
}

}  // namespace

TEST_CASE("LSTM: gates, cell state and the outputs Y, Y_h, Y_c", "[ops][lstm]") {
  // i = 0.5, f = 0.25, c~ = 3: C = 0.25 * 4 + 0.5 * 3 = 2.5; o = 2: H = 2 * 2.5 = 5.
  auto outputs = identity_lstm({}, {});
  require_values(outputs[0], {1, 1, 1, 1}, {5});
  require_values(outputs[1], {1, 1, 1}, {5});
  require_values(outputs[2], {1, 1, 1}, {2.5});
}

TEST_CASE("LSTM peepholes: i and f see C_{t-1}, o sees C_t", "[ops][lstm]") {
  // P (i, o, f) = [0.1, 0.2, 0.1]: i = 0.5 + 0.4 = 0.9, f = 0.25 + 0.4 = 0.65,
  // C = 0.65 * 4 + 0.9 * 3 = 5.3, o = 2 + 0.2 * 5.3 = 3.06, H = 3.06 * 5.3 = 16.218.
  auto outputs = identity_lstm({}, {0.1f, 0.2f, 0.1f});
  require_values(outputs[1], {1, 1, 1}, {16.218}, 1e-4);
  require_values(outputs[2], {1, 1, 1}, {5.3}, 1e-5);
}

TEST_CASE("LSTM input_forget couples f to 1 - i", "[ops][lstm]") {
  // f = 1 - 0.5: C = 0.5 * 4 + 0.5 * 3 = 3.5, H = 2 * 3.5 = 7.
  auto outputs = identity_lstm({{"input_forget", int64_t{1}}}, {});
  require_values(outputs[1], {1, 1, 1}, {7});
}

TEST_CASE("LSTM clip bounds the gates' pre-activations, not C_t before h", "[ops][lstm]") {
  // clip 1: i = 0.5, f = 0.25, c~ = clip(3) = 1, C = 1 + 0.5 = 1.5, o = clip(2) = 1,
  // H = 1 * h(1.5) = 1.5.
  auto outputs = identity_lstm({{"clip", 1.0f}}, {});
  require_values(outputs[1], {1, 1, 1}, {1.5});
  require_values(outputs[2], {1, 1, 1}, {1.5});
}

// --- errors -----------------------------------------------------------------------------------

TEST_CASE("recurrent ops reject bad attributes", "[ops][rnn]") {
  const std::vector<TensorType> inputs = {kScalarSteps, kOneByOne, kOneByOne};
  auto fails_with = [&](Attributes attributes, const char* message, int opset = 14) {
    OneNode g(opset, "RNN", inputs, std::move(attributes));
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("RNN node 'n'") && Catch::Contains(message));
  };
  fails_with({{"direction", std::string("sideways")}}, "not forward, reverse or bidirectional");
  fails_with({{"layout", int64_t{2}}}, "layout must be 0 or 1");
  fails_with({{"layout", int64_t{0}}}, "exists from opset 14 on", 13);
  fails_with({{"hidden_size", int64_t{2}}}, "hidden_size is 2 but R");
  fails_with({{"activations", Names{"Gelu"}}}, "unknown activation 'Gelu'");
  fails_with({{"activations", Names{"Relu", "Tanh", "Tanh"}}}, "has 3 names");
  fails_with({{"activations", Names{"Relu"}}, {"activation_alpha", Floats{1}}},
             "but the activations take 0 and 0");
  fails_with({{"clip", -1.0f}}, "clip must be positive");
  OneNode lstm(14, "LSTM", {kScalarSteps, {DType::f32, {1, 4, 1}}, {DType::f32, {1, 4, 1}}},
               {{"input_forget", int64_t{2}}});
  REQUIRE_THROWS_WITH(lstm.infer(), Catch::Contains("input_forget must be 0 or 1"));
}

TEST_CASE("recurrent ops reject mismatched shapes and types", "[ops][rnn]") {
  auto fails_with = [](const std::vector<TensorType>& inputs, const char* message) {
    OneNode g(14, "GRU", inputs);
    REQUIRE_THROWS_WITH(g.infer(), Catch::Contains("GRU node 'n'") && Catch::Contains(message));
  };
  const TensorType w{DType::f32, {1, 3, 1}};
  fails_with({{DType::f32, {2, 1}}, w, w}, "input X must have rank 3");
  fails_with({{DType::i32, {2, 1, 1}}, w, w}, "takes floating-point tensors");
  fails_with({kScalarSteps, {DType::f32, {1, 3, 2}}, w}, "input W is f32[1,3,2]");
  fails_with({kScalarSteps, {DType::f32, {1, 1, 1}}, kOneByOne}, "input W is f32[1,1,1]");
  fails_with({kScalarSteps, w, w, {DType::f32, {1, 3}}}, "input B is f32[1,3]");
  fails_with({kScalarSteps, w, w, {DType::f32, {1, 6}}, {DType::f32, {1}}},
             "input sequence_lens is f32[1]");
  fails_with({kScalarSteps, w, w, {DType::f32, {1, 6}}, {DType::i32, {1}},
              {DType::f32, {1, 2, 1}}},
             "input initial_h is f32[1,2,1]");
}

TEST_CASE("recurrent ops reject a sequence length past X's", "[ops][rnn]") {
  OneNode g = relu_rnn({}, {kScalarSteps, kOneByOne, kOneByOne, {DType::f32, {1, 2}},
                            {DType::i32, {1}}});
  REQUIRE_THROWS_WITH(g.run_all({floats({2, 1, 1}, {1, 2}), floats({1, 1, 1}, {2}),
                                 floats({1, 1, 1}, {1}), floats({1, 2}, {0, 0}),
                                 int64s({1}, {3}).cast(DType::i32)}),
                      Catch::Contains("sequence_lens holds 3, outside [0, 2]"));
}
