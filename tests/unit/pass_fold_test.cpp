// The passes fold-batchnorm and fold-conv-affine: every fold must keep the graph's outputs
// (the interpreter on random inputs, before and after) and leave the structure it promises;
// the cases that must not fold must leave the graph as it is. Then both, with simplify, on
// the ONNX light models, whose BatchNormalizations follow Convs (ResNet-50 has 53). Course
// module 2.
#include "pass_test_util.h"

#include "minic/frontend/onnx.h"
#include "minic/passes/graph/dce.h"
#include "minic/passes/graph/fold_batchnorm.h"
#include "minic/passes/graph/fold_constants.h"
#include "minic/passes/graph/fold_conv_affine.h"
#include "minic/passes/graph/simplify.h"

#include <cstring>
#include <random>

namespace minic {
namespace {

using testing::check_pass_preserves_outputs;
using testing::count_op;
using testing::graph_from_text;
using testing::PassCase;
using testing::run_case;

// "dense<[...]>" with `count` values drawn uniformly from [low, high): random constants for
// the text graphs, so that a fold that mixes up channels shows in the outputs.
std::string random_dense(int64_t count, uint64_t seed, double low = -1.0, double high = 1.0) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> real(low, high);
  std::string text = "dense<[";
  for (int64_t i = 0; i < count; ++i) {
    text += fmt::format("{}{:.4f}", i ? ", " : "", real(random));
  }
  return text + "]>";
}

// The constants of a BatchNormalization over `channels` channels, named %scale, %bias,
// %mean and %var (a positive variance), as text graph lines.
std::string batchnorm_params(int64_t channels, uint64_t seed) {
  return fmt::format(
      "  %scale = const f32[{0}] {1}\n  %bias = const f32[{0}] {2}\n"
      "  %mean = const f32[{0}] {3}\n  %var = const f32[{0}] {4}\n",
      channels, random_dense(channels, seed, 0.5, 2.0), random_dense(channels, seed + 1),
      random_dense(channels, seed + 2), random_dense(channels, seed + 3, 0.1, 2.0));
}

// --- fold-batchnorm --------------------------------------------------------------------------

// A BatchNormalization over `channels` channels reading %p, the result of `producer` (the
// lines defining %p), with output type `type`.
std::string with_batchnorm(const std::string& inputs, const std::string& type, int64_t channels,
                           const std::string& producer, uint64_t seed) {
  return fmt::format(
      "graph g({0}) -> (%y: {1}) opset 17 {{\n{2}{3}"
      "  %n = BatchNormalization(%p, %scale, %bias, %mean, %var) {{epsilon=0.001}}\n"
      "  %y = Relu(%n)\n  return %y\n}}",
      inputs, type, batchnorm_params(channels, seed), producer);
}

TEST_CASE("fold-batchnorm folds into Conv, Gemm and MatMul", "[passes][fold-batchnorm]") {
  const std::vector<PassCase> cases = {
      {"Conv without bias",
       with_batchnorm("%x: f32[1,3,5,5]", "f32[1,4,5,5]", 4,
                      fmt::format("  %w = const f32[4,3,1,1] {}\n  %p = Conv(%x, %w)\n",
                                  random_dense(12, 10)),
                      11),
       2, "BatchNormalization", 0},
      {"Conv with bias, groups, strides and pads",
       with_batchnorm("%x: f32[2,4,6,6]", "f32[2,6,3,3]", 6,
                      fmt::format("  %w = const f32[6,2,2,2] {}\n  %b = const f32[6] {}\n"
                                  "  %p = Conv(%x, %w, %b) {{group=2, pads=[1,1,0,0], "
                                  "strides=[2,2]}}\n",
                                  random_dense(48, 20), random_dense(6, 21)),
                      22),
       2, "BatchNormalization", 0},
      {"1-D Conv",
       with_batchnorm("%x: f32[1,2,7]", "f32[1,3,5]", 3,
                      fmt::format("  %w = const f32[3,2,3] {}\n  %p = Conv(%x, %w)\n",
                                  random_dense(18, 30)),
                      31),
       2, "BatchNormalization", 0},
      {"Gemm with C [N] and beta",
       with_batchnorm("%x: f32[3,4]", "f32[3,5]", 5,
                      fmt::format("  %w = const f32[4,5] {}\n  %c = const f32[5] {}\n"
                                  "  %p = Gemm(%x, %w, %c) {{alpha=0.5, beta=2.0}}\n",
                                  random_dense(20, 40), random_dense(5, 41)),
                      42),
       2, "BatchNormalization", 0},
      {"Gemm with transB and C [M, 1]",
       with_batchnorm("%x: f32[3,4]", "f32[3,5]", 5,
                      fmt::format("  %w = const f32[5,4] {}\n  %c = const f32[3,1] {}\n"
                                  "  %p = Gemm(%x, %w, %c) {{transB=1}}\n",
                                  random_dense(20, 50), random_dense(3, 51)),
                      52),
       2, "BatchNormalization", 0},
      {"Gemm with transA, transB, a scalar C",
       with_batchnorm("%x: f32[4,3]", "f32[3,5]", 5,
                      fmt::format("  %w = const f32[5,4] {}\n  %c = const f32[] dense<[0.7]>\n"
                                  "  %p = Gemm(%x, %w, %c) {{transA=1, transB=1}}\n",
                                  random_dense(20, 55)),
                      56),
       2, "BatchNormalization", 0},
      {"Gemm without C",
       with_batchnorm("%x: f32[3,4]", "f32[3,5]", 5,
                      fmt::format("  %w = const f32[4,5] {}\n  %p = Gemm(%x, %w)\n",
                                  random_dense(20, 60)),
                      61),
       2, "BatchNormalization", 0},
      {"MatMul (an Add of the bias takes the BatchNormalization's place)",
       with_batchnorm("%x: f32[3,4]", "f32[3,5]", 5,
                      fmt::format("  %w = const f32[4,5] {}\n  %p = MatMul(%x, %w)\n",
                                  random_dense(20, 70)),
                      71),
       3, "BatchNormalization", 0},
      {"MatMul + Add of a bias",
       with_batchnorm("%x: f32[3,4]", "f32[3,5]", 5,
                      fmt::format("  %w = const f32[4,5] {}\n  %b = const f32[1,5] {}\n"
                                  "  %m = MatMul(%x, %w)\n  %p = Add(%b, %m)\n",
                                  random_dense(20, 80), random_dense(5, 81)),
                      82),
       3, "BatchNormalization", 0},
  };
  for (const PassCase& test : cases) run_case(test, fold_batchnorm);
}

TEST_CASE("fold-batchnorm writes what cannot fold as x * s + t", "[passes][fold-batchnorm]") {
  const std::vector<PassCase> cases = {
      {"after a MaxPool",
       with_batchnorm("%x: f32[1,3,4,4]", "f32[1,3,3,3]", 3,
                      "  %p = MaxPool(%x) {kernel_shape=[2,2]}\n", 90),
       4, "BatchNormalization", 0},
      {"a Conv whose result has two readers",
       fmt::format("graph g(%x: f32[1,2,3,3]) -> (%y: f32[1,2,3,3], %z: f32[1,2,3,3]) opset 17 {{\n"
                   "{}  %w = const f32[2,2,1,1] {}\n  %p = Conv(%x, %w)\n"
                   "  %y = BatchNormalization(%p, %scale, %bias, %mean, %var)\n"
                   "  %z = Relu(%p)\n  return %y, %z\n}}",
                   batchnorm_params(2, 100), random_dense(4, 101)),
       4, "BatchNormalization", 0},
      {"a 3-D MatMul (the channel axis is not the column axis)",
       with_batchnorm("%x: f32[2,3,4]", "f32[2,3,5]", 3,
                      fmt::format("  %w = const f32[4,5] {}\n  %p = MatMul(%x, %w)\n",
                                  random_dense(20, 110)),
                      111),
       4, "BatchNormalization", 0},
  };
  for (const PassCase& test : cases) run_case(test, fold_batchnorm);

  // The Conv that another node reads keeps its weights.
  Graph graph = graph_from_text(cases[1].text);
  const Value* weight = graph.find_value("p")->producer()->input(1);
  fold_batchnorm(graph);
  CHECK(graph.find_value("p")->producer()->input(1) == weight);
  CHECK(graph.find_value("y")->producer()->op == "Add");
}

TEST_CASE("fold-batchnorm leaves a BatchNormalization with non-constant parameters",
          "[passes][fold-batchnorm]") {
  Graph graph = graph_from_text(R"(
graph g(%x: f32[1,2,3,3], %mean: f32[2]) -> (%y: f32[1,2,3,3]) opset 17 {
  %w = const f32[2,2,1,1] dense<[1.0, 2.0, 3.0, 4.0]>
  %scale = const f32[2] dense<[1.0, 2.0]>
  %bias = const f32[2] dense<[0.5, 0.25]>
  %var = const f32[2] dense<[1.0, 2.0]>
  %p = Conv(%x, %w)
  %y = BatchNormalization(%p, %scale, %bias, %mean, %var)
  return %y
})");
  std::string before = print_graph(graph);
  fold_batchnorm(graph);
  CHECK(print_graph(graph) == before);
}

// --- fold-conv-affine ----------------------------------------------------------------------

// A Conv [1,3,4,4] → [1,4,4,4] (with a bias if `bias`), then `after` reading %c.
std::string conv_then(bool bias, const std::string& constants, const std::string& after,
                      const std::string& output_type = "f32[1,4,4,4]") {
  return fmt::format(
      "graph g(%x: f32[1,3,4,4]) -> (%y: {0}) opset 17 {{\n  %w = const f32[4,3,3,3] "
      "resource<w>\n  %b = const f32[4] {1}\n{2}  %c = Conv(%x, %w{3}) {{pads=[1,1,1,1]}}\n{4}"
      "  return %y\n}}\n\nresources {{\n  w: \"{5}\"\n}}\n",
      output_type, random_dense(4, 200), constants, bias ? ", %b" : "", after,
      [] {
        // 108 floats of 1/64 .. 108/64, as little-endian hex.
        std::string hex;
        for (int i = 1; i <= 108; ++i) {
          float value = static_cast<float>(i) / 64.0f;
          uint32_t bits;
          std::memcpy(&bits, &value, 4);
          for (int b = 0; b < 4; ++b) hex += fmt::format("{:02x}", (bits >> (8 * b)) & 0xff);
        }
        return hex;
      }());
}

TEST_CASE("fold-conv-affine folds per-channel Mul and Add into the Conv",
          "[passes][fold-conv-affine]") {
  const std::string s4 = random_dense(4, 300, 0.5, 2.0);
  const std::vector<PassCase> cases = {
      {"Mul by [C,1,1]", conv_then(true, "  %s = const f32[4,1,1] " + s4 + "\n",
                                   "  %y = Mul(%c, %s)\n"),
       1, "Mul", 0},
      {"Mul by [1,C,1,1], constant first",
       conv_then(false, "  %s = const f32[1,4,1,1] " + s4 + "\n", "  %y = Mul(%s, %c)\n"), 1,
       "Mul", 0},
      {"Mul by a scalar", conv_then(true, "  %s = const f32[] dense<[-1.5]>\n",
                                    "  %y = Mul(%c, %s)\n"),
       1, "Mul", 0},
      {"Add of [C,1,1] (a bias is created)",
       conv_then(false, "  %t = const f32[4,1,1] " + s4 + "\n", "  %y = Add(%c, %t)\n"), 1,
       "Add", 0},
      {"Add of [1] to a Conv with bias",
       conv_then(true, "  %t = const f32[1] dense<[0.75]>\n", "  %y = Add(%t, %c)\n"), 1, "Add", 0},
      {"Sub of [C,1,1]",
       conv_then(true, "  %t = const f32[4,1,1] " + s4 + "\n", "  %y = Sub(%c, %t)\n"), 1,
       "Sub", 0},
      {"Mul then Add (a Caffe Scale layer)",
       conv_then(true, "  %s = const f32[4,1,1] " + s4 + "\n  %t = const f32[4,1,1] " +
                           random_dense(4, 301) + "\n",
                 "  %m = Mul(%c, %s)\n  %y = Add(%m, %t)\n"),
       1, "Add", 0},
  };
  for (const PassCase& test : cases) run_case(test, fold_conv_affine);
}

TEST_CASE("fold-conv-affine: cases that must not fold", "[passes][fold-conv-affine]") {
  const std::vector<PassCase> cases = {
      {"a constant that varies over space",
       conv_then(true, "  %s = const f32[4,4] " + random_dense(16, 400) + "\n",
                 "  %y = Mul(%c, %s)\n"),
       2, "Mul", 1},
      {"a broadcast that adds an axis",
       conv_then(true, "  %s = const f32[2,1,1,1,1] splat<2.0>\n", "  %y = Mul(%c, %s)\n",
                 "f32[2,1,4,4,4]"),
       2, "Mul", 1},
      {"a Conv result with two readers",
       conv_then(true, "  %s = const f32[4,1,1] splat<2.0>\n",
                 "  %m = Mul(%c, %s)\n  %y = Add(%m, %c)\n"),
       3, "Mul", 1},
      {"t - Conv", conv_then(true, "  %t = const f32[4,1,1] splat<2.0>\n", "  %y = Sub(%t, %c)\n"),
       2, "Sub", 1},
  };
  for (const PassCase& test : cases) run_case(test, fold_conv_affine);
}

// --- the light models ----------------------------------------------------------------------

// What the acceptance pipeline leaves of the ONNX light models: no BatchNormalization, Dropout
// or Identity, and the same outputs. ResNet-50's 53 BatchNormalizations each fold into the
// Conv before them. The interpreter runs a model twice, which for VGG-19 and ZFNet-512 (big
// fully connected layers) is too slow for a unit test: their Dropouts are checked by structure.
TEST_CASE("simplify, fold-batchnorm and fold-conv-affine on the light models",
          "[passes][models][heavy]") {
  const std::string dir = MINIC_ONNX_LIGHT_DIR "/";
  auto pipeline = [](Graph& graph) {
    simplify(graph);
    fold_constants(graph);
    fold_batchnorm(graph);
    fold_conv_affine(graph);
    eliminate_dead_code(graph);
  };
  for (const char* name : {"resnet50", "inception_v2", "shufflenet", "densenet121",
                           "squeezenet", "bvlc_alexnet", "inception_v1", "vgg19", "zfnet512"}) {
    INFO(name);
    Graph graph = import_onnx(dir + "light_" + name + ".onnx");
    const int convs = count_op(graph, "Conv");
    const int batchnorms = count_op(graph, "BatchNormalization");
    const std::string_view model = name;
    if (model == "vgg19" || model == "zfnet512") {
      pipeline(graph);
      verify_graph(graph);
    } else {
      check_pass_preserves_outputs(graph, pipeline);
    }
    CHECK(count_op(graph, "BatchNormalization") == 0);
    CHECK(count_op(graph, "Dropout") == 0);
    CHECK(count_op(graph, "Identity") == 0);
    CHECK(count_op(graph, "Conv") == convs);
    if (model == "resnet50") {
      CHECK(batchnorms == 53);
      CHECK(count_op(graph, "Mul") == 0);  // every one folded into its Conv
      CHECK(count_op(graph, "Add") == 0);
    }
    if (model == "inception_v2") {
      // Conv → BatchNormalization → Mul → Add: all of it is one Conv now.
      CHECK(count_op(graph, "Mul") == 0);
      CHECK(count_op(graph, "Add") == 0);
    }
  }
}

}  // namespace
}  // namespace minic
