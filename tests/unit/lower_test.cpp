// Lowering graph kernels to loop IR (src/ops/compute*.cpp, src/ops/lower.cpp), tested
// differentially. Course module 3.
//
//   - every ONNX backend node test that the reference interpreter passes
//     (tests/onnx/expected_pass.txt) and whose ops all have compute rules: each node
//     lowered, the functions run by the loop interpreter in graph order, the outputs
//     compared with ONNX's expected outputs at the conformance runner's tolerances;
//   - every kernel of the nine light models after the default pipeline: lowered,
//     verified, printed and parsed back to the same text; and, where the loop interpreter
//     can run it quickly (see kMaxBlockRuns), run on random inputs and compared with the
//     reference kernels of the same node;
//   - small hand-made graphs: fusion inlines producers, reductions keep buffers, errors.
#include "loop_test_util.h"

#include "minic/frontend/onnx.h"
#include "minic/ir/graph_text.h"
#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/interpreter.h"
#include "minic/ir/loop/parser.h"
#include "minic/ir/loop/printer.h"
#include "minic/ir/loop/verifier.h"
#include "minic/ir/loop/visitor.h"
#include "minic/ops/compute.h"
#include "minic/ops/lower.h"
#include "minic/ops/shape_inference.h"
#include "minic/passes/pass_manager.h"
#include "minic/runtime/compare.h"
#include "minic/runtime/interpreter.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <unordered_map>

using namespace minic;
namespace fs = std::filesystem;

namespace {

// The sampling rule for the light models: the loop interpreter runs about a million block
// instances in a few seconds, so kernels whose blocks run more often than this (most
// convolutions at 224x224) are lowered, verified and round-tripped but not run.
constexpr int64_t kMaxBlockRuns = 1'000'000;

// How many times the blocks of `func` run: the product of the loop extents around each.
class BlockRunCounter : public loop::IRVisitor {
 public:
  int64_t runs = 0;
  void visit_For(const loop::For* node) override {
    auto extent = loop::as_const_int(node->extent);
    int64_t saved = scale_;
    scale_ *= extent ? *extent : 1;
    loop::IRVisitor::visit_For(node);
    scale_ = saved;
  }
  void visit_Block(const loop::Block* node) override {
    runs += scale_;
    loop::IRVisitor::visit_Block(node);
  }

 private:
  int64_t scale_ = 1;
};

int64_t block_runs(const loop::PrimFunc& func) {
  BlockRunCounter counter;
  counter.visit(func.body);
  return counter.runs;
}

// Empty if print(parse(print(f))) == print(f), else why not.
std::string round_trip_problem(const loop::PrimFunc& func) {
  std::string text = loop::print_func(func);
  loop::LoopModule parsed = loop::parse_loop_module(text, func.name);
  if (parsed.functions.size() != 1) return "the text parses to another number of functions";
  if (loop::print_func(parsed.functions[0]) != text) return "the parsed text prints otherwise";
  return "";
}

// Runs `func` (lowered from `node`) on the node's input tensors; returns its outputs.
std::vector<Tensor> run_lowered(const loop::PrimFunc& func, const Node& node,
                                const std::vector<const Tensor*>& inputs) {
  std::vector<Tensor> arguments;
  std::set<const Value*> seen;
  for (size_t k = 0; k < node.inputs().size(); ++k) {
    if (!node.input(k) || !seen.insert(node.input(k)).second) continue;
    arguments.push_back(*inputs[k]);
  }
  for (const Value* output : node.outputs()) arguments.emplace_back(output->type);
  std::vector<Tensor*> pointers;
  for (Tensor& argument : arguments) pointers.push_back(&argument);
  loop::run_func(func, pointers);
  return std::vector<Tensor>(arguments.end() - node.outputs().size(), arguments.end());
}

// The node tests the reference interpreter passes (tests/onnx/expected_pass.txt).
std::vector<std::string> passing_node_tests() {
  std::ifstream file(fs::path(MINIC_SOURCE_DIR) / "tests" / "onnx" / "expected_pass.txt");
  std::vector<std::string> names;
  for (std::string line; std::getline(file, line);) {
    if (!line.empty() && line[0] != '#') names.push_back(line);
  }
  return names;
}

std::string region_problem(const loop::PrimFunc& func);

struct NodeCaseResult {
  bool lowered = false;  // false: an op has no compute rule
  std::string problem;   // empty when the outputs match
};

// One node test: import as the conformance runner does, lower every node, run them in
// order with the loop interpreter, compare the graph outputs.
NodeCaseResult run_node_case(const fs::path& folder) {
  NodeCaseResult result;
  const std::string model = (folder / "model.onnx").string();
  OnnxModelSummary summary = summarize_onnx(model);
  OnnxImportOptions options;
  for (size_t k = 0; k < summary.inputs.size(); ++k) {
    fs::path file = folder / "test_data_set_0" / fmt::format("input_{}.pb", k);
    if (!fs::exists(file)) break;
    options.known_inputs[summary.inputs[k].name] = read_tensor_proto(file.string());
  }
  Graph graph = import_onnx(model, options);
  for (const Node* node : graph.nodes()) {
    if (!can_lower(*node)) return result;
  }
  result.lowered = true;
  try {
    std::unordered_map<const Value*, Tensor> values;
    for (const Value* input : graph.inputs()) {
      values[input] = options.known_inputs.at(input->name());
    }
    for (const Node* node : graph.nodes()) {
      loop::PrimFunc func;
      try {
        func = lower_node(*node, graph.opset);
      } catch (const NoComputeRule&) {
        // A rule may refuse a form of its op (a Cast to float8): no rule for that form.
        result.lowered = false;
        return result;
      }
      std::string problem = round_trip_problem(func);
      if (problem.empty()) problem = region_problem(func);
      if (!problem.empty()) {
        result.problem = node->describe() + ": " + problem;
        return result;
      }
      std::vector<const Tensor*> inputs;
      for (const Value* input : node->inputs()) {
        inputs.push_back(!input            ? nullptr
                         : input->constant ? input->constant.get()
                                           : &values.at(input));
      }
      std::vector<Tensor> outputs = run_lowered(func, *node, inputs);
      for (size_t k = 0; k < outputs.size(); ++k) values[node->output(k)] = std::move(outputs[k]);
    }
    for (size_t k = 0; k < graph.outputs().size(); ++k) {
      fs::path file = folder / "test_data_set_0" / fmt::format("output_{}.pb", k);
      const Value* output = graph.outputs()[k];
      const Tensor& actual = output->constant ? *output->constant : values.at(output);
      TensorComparison comparison =
          compare_tensors(actual, read_tensor_proto(file.string()), Tolerance{1e-3, 1e-7});
      if (!comparison.ok()) {
        result.problem = fmt::format("output {}: {}", k, describe(comparison));
        return result;
      }
    }
  } catch (const Error& error) {
    result.problem = error.what();
  }
  return result;
}

}  // namespace

TEST_CASE("every ONNX node test with compute rules runs lowered", "[lower][onnx]") {
  fs::path root = fs::path(MINIC_SHARED_DIR) / "onnx" / "node";
  int lowered = 0;
  int without_rule = 0;
  std::vector<std::string> problems;
  for (const std::string& name : passing_node_tests()) {
    NodeCaseResult result = run_node_case(root / name);
    if (!result.lowered) {
      ++without_rule;
      continue;
    }
    ++lowered;
    if (!result.problem.empty()) problems.push_back(name + ": " + result.problem);
  }
  // The failures one a line, for reading when the check below fails.
  std::ofstream(fs::temp_directory_path() / "minic-lower-node-failures.txt")
      << fmt::format("{}\n", fmt::join(problems, "\n"));
  WARN(lowered << " node tests lowered and compared, " << without_rule
                << " have an op without a compute rule, " << problems.size() << " failed");
  CAPTURE(problems);
  CHECK(problems.empty());
  CHECK(lowered >= 400);
}

namespace {

struct ModelCounts {
  int kernels = 0;   // lowered, verified and round-tripped
  int compared = 0;  // also run and compared with the reference kernels
};

// A random tensor of `type`: floats uniform in [-2, 2), integers and bools in [0, 4) and
// {0, 1} (small enough to be valid indices).
Tensor random_tensor(const TensorType& type, std::mt19937& random) {
  if (is_float(type.dtype)) return loop::test::uniform_tensor(type.shape, random).cast(type.dtype);
  Tensor values(DType::i64, type.shape);
  std::uniform_int_distribution<int64_t> pick(0, type.dtype == DType::boolean ? 1 : 3);
  for (int64_t& value : values.values<int64_t>()) value = pick(random);
  return values.cast(type.dtype);
}

// The reference result of `node` on `inputs`: its kernel, or for a fused node its body
// run by the graph interpreter.
std::vector<Tensor> reference_outputs(const Node& node, int opset,
                                      const std::vector<const Tensor*>& inputs) {
  if (!node.is_fused()) return evaluate_node(node, opset, inputs);
  std::vector<Tensor> body_inputs;
  for (const Tensor* input : inputs) body_inputs.push_back(*input);
  return interpret(*node.body, body_inputs);
}

// Every kernel of `graph` lowered, verified, round-tripped and its regions checked; the
// ones the loop interpreter runs quickly also run on random inputs (constants keep their
// values) and are compared with the reference. Problems are appended to `problems`.
ModelCounts check_kernels(const Graph& graph, const std::string& model,
                          std::vector<std::string>& problems) {
  ModelCounts counts;
  std::mt19937 random(7);
  for (const Node* node : graph.nodes()) {
    std::string where = model + ", " + node->describe();
    try {
      loop::PrimFunc func = lower_node(*node, graph.opset);
      loop::verify_func(func);
      std::string problem = round_trip_problem(func);
      if (problem.empty()) problem = region_problem(func);
      if (!problem.empty()) fail("{}", problem);
      ++counts.kernels;
      if (block_runs(func) > kMaxBlockRuns) continue;
      std::vector<Tensor> random_inputs;
      random_inputs.reserve(node->inputs().size());
      std::vector<const Tensor*> inputs;
      for (const Value* input : node->inputs()) {
        if (!input) {
          inputs.push_back(nullptr);
        } else if (input->constant) {
          inputs.push_back(input->constant.get());
        } else {
          random_inputs.push_back(random_tensor(input->type, random));
          inputs.push_back(&random_inputs.back());
        }
      }
      std::vector<Tensor> expected = reference_outputs(*node, graph.opset, inputs);
      std::vector<Tensor> actual = run_lowered(func, *node, inputs);
      for (size_t k = 0; k < actual.size(); ++k) {
        TensorComparison comparison =
            compare_tensors(actual[k], expected[k], Tolerance{1e-3, 1e-5});
        if (!comparison.ok()) fail("output {}: {}", k, describe(comparison));
      }
      ++counts.compared;
    } catch (const Error& error) {
      problems.push_back(where + ": " + error.what());
    }
  }
  return counts;
}

}  // namespace

TEST_CASE("every kernel of the light models lowers, and the small ones run", "[lower][onnx]") {
  fs::path root = fs::path(MINIC_SHARED_DIR) / "onnx" / "light-models";
  ModelCounts total;
  std::vector<std::string> problems;
  for (const char* name : {"bvlc_alexnet", "densenet121", "inception_v1", "inception_v2",
                           "resnet50", "shufflenet", "squeezenet", "vgg19", "zfnet512"}) {
    Graph graph = import_onnx((root / fmt::format("light_{}.onnx", name)).string());
    run_passes(graph, default_pipeline());
    ModelCounts counts = check_kernels(graph, name, problems);
    int seen = counts.kernels + static_cast<int>(problems.size());
    CHECK(seen >= static_cast<int>(graph.num_nodes()));
    total.kernels += counts.kernels;
    total.compared += counts.compared;
  }
  // The example MLP (examples/models), whose kernels are all small enough to run.
  Graph mlp = import_onnx(MINIC_SOURCE_DIR "/examples/models/mlp.onnx");
  run_passes(mlp, default_pipeline());
  ModelCounts counts = check_kernels(mlp, "mlp", problems);
  CHECK(counts.compared == static_cast<int>(mlp.num_nodes()));
  WARN(total.kernels << " kernels of the light models lowered, verified and round-tripped; "
                     << total.compared << " of them run and compared");
  CAPTURE(problems);
  CHECK(problems.empty());
  CHECK(total.compared >= 200);
}

// --- small hand-made graphs ---------------------------------------------------------------------

namespace {

// Empty if every load and store of every block lies in the block's regions: a dimension's
// range is the whole extent, or the one index every access uses. Else the first problem.
class RegionChecker : public loop::IRVisitor {
 public:
  std::string problem;

  void visit_Block(const loop::Block* node) override {
    block_ = node;
    loop::IRVisitor::visit_Block(node);
  }
  void visit_Load(const loop::Load* node) override {
    check(node->buffer, node->indices, block_->reads, "read");
    loop::IRVisitor::visit_Load(node);
  }
  void visit_Store(const loop::Store* node) override {
    check(node->buffer, node->indices, block_->writes, "write");
    loop::IRVisitor::visit_Store(node);
  }

 private:
  void check(const loop::Buffer& buffer, const std::vector<loop::Expr>& indices,
             const std::vector<loop::BufferRegion>& regions, const char* what) {
    if (!problem.empty() || !block_) return;
    for (const loop::BufferRegion& region : regions) {
      if (region.buffer != buffer) continue;
      for (size_t d = 0; d < indices.size(); ++d) {
        const loop::Range& range = region.region[d];
        auto min = loop::as_const_int(range.min);
        auto extent = loop::as_const_int(range.extent);
        bool whole = min == 0 && extent == buffer->shape[d];
        bool point = extent == 1 && loop::print_expr(range.min) == loop::print_expr(indices[d]);
        if (!whole && !point) {
          problem = fmt::format("block {}: a {} of {} at {} is outside its region", block_->name,
                                what, buffer->name, loop::print_expr(indices[d]));
        }
      }
      return;
    }
    problem = fmt::format("block {}: {} has no {} region", block_->name, buffer->name, what);
  }

  const loop::Block* block_ = nullptr;
};

std::string region_problem(const loop::PrimFunc& func) {
  RegionChecker checker;
  checker.visit(func.body);
  return checker.problem;
}

// How many blocks and allocations a function has.
struct Structure {
  int blocks = 0;
  int allocations = 0;
};

class StructureCounter : public loop::IRVisitor {
 public:
  Structure counts;
  void visit_Block(const loop::Block* node) override {
    ++counts.blocks;
    loop::IRVisitor::visit_Block(node);
  }
  void visit_Allocate(const loop::Allocate* node) override {
    ++counts.allocations;
    loop::IRVisitor::visit_Allocate(node);
  }
};

Structure structure(const loop::PrimFunc& func) {
  StructureCounter counter;
  counter.visit(func.body);
  return counter.counts;
}

// Parses `text`, runs the default pipeline, lowers every kernel and checks each against the
// reference on random inputs. Returns the functions.
std::vector<loop::PrimFunc> lower_and_check(const std::string& text) {
  Graph graph = parse_graph(text);
  infer_shapes(graph);
  run_passes(graph, default_pipeline());
  std::vector<std::string> problems;
  ModelCounts counts = check_kernels(graph, graph.name, problems);
  CAPTURE(problems);
  REQUIRE(problems.empty());
  REQUIRE(counts.compared == static_cast<int>(graph.num_nodes()));
  std::vector<loop::PrimFunc> functions;
  for (const Node* node : graph.nodes()) {
    functions.push_back(lower_node(*node, graph.opset));
    CHECK(region_problem(functions.back()).empty());
  }
  return functions;
}

}  // namespace

TEST_CASE("a fused elementwise chain is one block with its producers inlined", "[lower]") {
  auto functions = lower_and_check(R"(
graph chain(%x: f32[3,5], %b: f32[5]) -> (%y: f32[3,5]) opset 17 {
  %s = Add(%x, %b)
  %t = Mul(%s, %s)
  %u = Sigmoid(%t)
  %y = Relu(%u)
  return %y
}
)");
  REQUIRE(functions.size() == 1);
  CHECK(structure(functions[0]).blocks == 1);
  CHECK(structure(functions[0]).allocations == 0);
  CHECK(functions[0].params.size() == 3);
}

TEST_CASE("anchors and reductions keep buffers; epilogues are stages after them", "[lower]") {
  auto functions = lower_and_check(R"(
graph net(%x: f32[1,2,6,6], %w: f32[3,2,3,3], %b: f32[3], %r: f32[1,3,3,3])
    -> (%y: f32[1,3,3,3], %p: f32[1,3,3,3]) opset 17 {
  %c = Conv(%x, %w, %b) {kernel_shape=[3,3], pads=[1,1,1,1], strides=[2,2]}
  %a = Add(%c, %r)
  %y = Relu(%a)
  %p = Softmax(%y) {axis=1}
  return %y, %p
}
)");
  REQUIRE(functions.size() == 2);
  // The zero-bordered input, Conv (a reduction into a buffer), then bias + residual + Relu
  // in one stage.
  CHECK(structure(functions[0]).blocks == 3);
  CHECK(structure(functions[0]).allocations == 2);
  // Softmax: max and sum of exponentials in buffers, the division into the output.
  CHECK(structure(functions[1]).blocks == 3);
  CHECK(structure(functions[1]).allocations == 2);
}

TEST_CASE("fused groups with several outputs write each of them", "[lower]") {
  auto functions = lower_and_check(R"(
graph g(%x: f32[2,6], %z: f32[2,3])
    -> (%a: f32[2,3], %b: f32[2,3], %r: f32[2,3], %s: f32[2,3]) opset 18 {
  %0 = Relu(%x)
  %a, %b = Split(%0) {axis=1, num_outputs=2}
  %w = const f32[3,3] splat<0.5>
  %m = MatMul(%z, %w)
  %r = Relu(%m)
  %s = Add(%r, %z)
  return %a, %b, %r, %s
}
)");
  CHECK(functions.size() == 3);
  CHECK(structure(functions[0]).blocks == 2);  // one stage per output
}

TEST_CASE("an expression that doubles at every op is kept in buffers", "[lower]") {
  std::string text = "graph square(%x: f32[4]) -> (%y: f32[4]) opset 17 {\n  %v0 = Relu(%x)\n";
  for (int k = 1; k <= 12; ++k) text += fmt::format("  %v{} = Mul(%v{}, %v{})\n", k, k - 1, k - 1);
  text += "  %y = Relu(%v12)\n  return %y\n}\n";
  auto functions = lower_and_check(text);
  REQUIRE(functions.size() == 1);
  CHECK(structure(functions[0]).allocations >= 1);
  CHECK(loop::print_func(functions[0]).size() < 20'000);
}

TEST_CASE("lowering names the op without a compute rule and the node", "[lower]") {
  // Every op has a rule; a Cast to float8 is a form of one that has none.
  Graph graph = parse_graph(R"(
graph g(%x: f32[4]) -> (%y: f8e4m3fn[4]) opset 17 {
  %r = Relu(%x)
  %y = Cast(%r) {to=17} @"layer/cast"
  return %y
}
)");
  infer_shapes(graph);
  CHECK(has_compute_rule("Relu"));
  const Node* cast = graph.nodes()[1];
  CHECK_THROWS_WITH(lower_node(*cast, graph.opset),
                    Catch::Contains("no compute rule for op Cast (node 'layer/cast')"));
  CHECK_THROWS_AS(lower_node(*cast, graph.opset), NoComputeRule);
  CHECK_THROWS_WITH(lower_graph(graph), Catch::Contains("no compute rule for op Cast"));
  std::vector<const Node*> skipped;
  loop::LoopModule module = lower_graph(graph, &skipped);
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0] == cast);
  REQUIRE(module.functions.size() == 1);
  CHECK(module.functions[0].name == "Relu_r");
  CHECK(kernel_name(*cast) == "layer_cast");
}

TEST_CASE("a rule refusing a form of its op gives NoComputeRule, and lower_graph skips it",
          "[lower]") {
  Graph graph = parse_graph(R"(
graph g(%x: f32[1,1,4,4]) -> (%y: f32[1,1,2,2], %i: i64[1,1,2,2], %q: f8e4m3fn[1,1,4,4]) opset 17 {
  %y, %i = MaxPool(%x) {kernel_shape=[2,2], strides=[2,2]}
  %q = Cast(%x) {to=17}
  return %y, %i, %q
}
)");
  infer_shapes(graph);
  for (const Node* node : graph.nodes()) {
    CHECK(can_lower(*node));  // the ops have rules ...
    CHECK_THROWS_AS(lower_node(*node, graph.opset), NoComputeRule);  // ... not these forms
  }
  std::vector<const Node*> skipped;
  CHECK(lower_graph(graph, &skipped).functions.empty());
  CHECK(skipped.size() == 2);
}

TEST_CASE("kernel names are identifiers, unique within a module", "[lower]") {
  Graph graph = parse_graph(R"(
graph g(%x: f32[4]) -> (%y: f32[4]) opset 17 {
  %a = Relu(%x) @"0/relu"
  %b = Relu(%a) @"0/relu!"
  %y = Neg(%b)
  return %y
}
)");
  infer_shapes(graph);
  loop::LoopModule module = lower_graph(graph);
  REQUIRE(module.functions.size() == 3);
  CHECK(module.functions[0].name == "k_0_relu");
  CHECK(module.functions[1].name == "k_0_relu_1");
  CHECK(module.functions[2].name == "Neg_y");
  std::string text = loop::print_module(module);
  CHECK(loop::print_module(loop::parse_loop_module(text, "module")) == text);
}

TEST_CASE("the trigonometric and hyperbolic rules agree with their kernels", "[lower]") {
  std::string text = "graph trig(%x: f32[3,4], %h: f16[5]) -> (";
  std::string body;
  std::string outputs;
  int count = 0;
  for (const char* op : {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh",
                         "Acosh", "Atanh"}) {
    text += fmt::format("{}%y{}: f32[3,4], %z{}: f16[5]", count == 0 ? "" : ", ", count, count);
    body += fmt::format("  %y{} = {}(%x)\n  %z{} = {}(%h)\n", count, op, count, op);
    outputs += fmt::format("{}%y{}, %z{}", count == 0 ? "" : ", ", count, count);
    ++count;
  }
  text += ") opset 17 {\n" + body + "  return " + outputs + "\n}\n";
  auto functions = lower_and_check(text);
  CHECK(functions.size() == 2 * static_cast<size_t>(count));
}

TEST_CASE("the Hardmax rule agrees with its kernel for both forms of the axis", "[lower]") {
  for (int opset : {11, 13}) {
    for (int axis : {0, 1, -1}) {
      CAPTURE(opset, axis);
      lower_and_check(fmt::format(R"(
graph hardmax(%x: f32[3,4,5]) -> (%y: f32[3,4,5]) opset {} {{
  %y = Hardmax(%x) {{axis={}}}
  return %y
}}
)",
                                  opset, axis));
    }
  }
}

TEST_CASE("the BitShift rule agrees with its kernel", "[lower]") {
  lower_and_check(R"(
graph shifts(%a: u8[2,3], %b: u8[3], %c: u32[4], %d: u64[4]) -> (%l: u8[2,3], %r: u8[2,3],
             %s: u32[4], %t: u64[4]) opset 17 {
  %l = BitShift(%a, %b) {direction="LEFT"}
  %r = BitShift(%a, %b) {direction="RIGHT"}
  %c2 = Add(%c, %c)
  %d2 = Add(%d, %d)
  %s = BitShift(%c, %c2) {direction="LEFT"}
  %t = BitShift(%d, %d2) {direction="RIGHT"}
  return %l, %r, %s, %t
}
)");
}

TEST_CASE("the Einsum rule agrees with its kernel for every form of equation", "[lower]") {
  auto functions = lower_and_check(R"(
graph einsums(%m: f32[3,4], %s: f32[4,4], %b: f32[2,3,3], %x: f32[2,1,3,4], %w: f32[3,4,5],
              %u: f32[3], %v: f32[5], %h: f16[3,4], %e: f16[4,2], %g: bf16[4,2], %n: i32[3,4],
              %p: i32[4,2], %c: f32[2,4], %q: f32[4,1], %z: f32[])
    -> (%transpose: f32[4,3], %trace: f32[], %diagonal: f32[4], %batch_diagonal: f32[2,3],
        %ellipsis: f32[2,3,3,5], %outer: f32[3,5], %total: f32[], %implicit: f32[3,5],
        %one_side: f32[3], %chain: f32[3,1], %half: f16[3,2], %brain: bf16[2,4],
        %integer: i32[3,2], %scalar: f32[]) opset 17 {
  %transpose = Einsum(%m) {equation="ij->ji"}
  %trace = Einsum(%s) {equation="ii"}
  %diagonal = Einsum(%s) {equation="ii->i"}
  %batch_diagonal = Einsum(%b) {equation="bii->bi"}
  %ellipsis = Einsum(%x, %w) {equation="...ij,...jk->...ik"}
  %outer = Einsum(%u, %v) {equation="i,j->ij"}
  %total = Einsum(%m) {equation="ij->"}
  %implicit = Einsum(%m, %w) {equation="ij,kjl"}
  %one_side = Einsum(%m, %c) {equation="ij,kj->i"}
  %chain = Einsum(%m, %s, %q) {equation="ij, jk, kl -> il"}
  %half = Einsum(%h, %e) {equation="ij,jk->ik"}
  %brain = Einsum(%g) {equation="ji"}
  %integer = Einsum(%n, %p) {equation="ij,jk->ik"}
  %scalar = Einsum(%z, %u) {equation=",i->"}
  return %transpose, %trace, %diagonal, %batch_diagonal, %ellipsis, %outer, %total, %implicit,
         %one_side, %chain, %half, %brain, %integer, %scalar
}
)");
  REQUIRE(functions.size() == 14);
  // No summed letter: one elementwise stage; summed letters: a reduction with an init; a
  // half-precision sum: a float32 buffer and a conversion stage.
  CHECK(structure(functions[0]).blocks == 1);
  CHECK(loop::print_func(functions[0]).find("init") == std::string::npos);
  CHECK(structure(functions[1]).blocks == 1);
  CHECK(loop::print_func(functions[1]).find("init {") != std::string::npos);
  CHECK(structure(functions[10]).blocks == 2);
  CHECK(structure(functions[10]).allocations == 1);
}
