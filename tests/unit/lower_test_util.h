// Helpers for the tests of lowering (lower_test.cpp, lower_onnx_test.cpp): a lowered
// kernel must print and parse back to the same text, keep its loads and stores inside its
// blocks' regions, and, run by the loop interpreter, compute what the reference kernel of
// its node computes. Course module 3.
#pragma once

#include "loop_test_util.h"
#include "target_test_util.h"

#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/interpreter.h"
#include "minic/ir/loop/parser.h"
#include "minic/ir/loop/printer.h"
#include "minic/ir/loop/verifier.h"
#include "minic/ir/loop/visitor.h"
#include "minic/lower/lower.h"
#include "minic/ops/shape_inference.h"
#include "minic/runtime/compare.h"
#include "minic/runtime/interpreter.h"

#include <catch2/catch.hpp>

#include <random>
#include <set>
#include <string>
#include <vector>

namespace minic::testing {

// The sampling rule for the light models: the loop interpreter runs about a million block
// instances in a few seconds, so kernels whose blocks run more often than this (most
// convolutions at 224x224) are lowered, verified and round-tripped but not run.
inline constexpr int64_t kMaxBlockRuns = 1'000'000;

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

inline int64_t block_runs(const loop::PrimFunc& func) {
  BlockRunCounter counter;
  counter.visit(func.body);
  return counter.runs;
}

// Empty if print(parse(print(f))) == print(f), else why not.
inline std::string round_trip_problem(const loop::PrimFunc& func) {
  std::string text = loop::print_func(func);
  loop::LoopModule parsed = loop::parse_loop_module(text, func.name);
  if (parsed.functions.size() != 1) return "the text parses to another number of functions";
  if (loop::print_func(parsed.functions[0]) != text) return "the parsed text prints otherwise";
  return "";
}

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

inline std::string region_problem(const loop::PrimFunc& func) {
  RegionChecker checker;
  checker.visit(func.body);
  return checker.problem;
}

// Runs `func` (lowered from `node`) on the node's input tensors; returns its outputs.
inline std::vector<Tensor> run_lowered(const loop::PrimFunc& func, const Node& node,
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

struct ModelCounts {
  int kernels = 0;   // lowered, verified and round-tripped
  int compared = 0;  // also run and compared with the reference kernels
};

// A random tensor of `type`: floats uniform in [-2, 2), integers and bools in [0, 4) and
// {0, 1} (small enough to be valid indices).
inline Tensor random_tensor(const TensorType& type, std::mt19937& random) {
  if (is_float(type.dtype)) return loop::test::uniform_tensor(type.shape, random).cast(type.dtype);
  Tensor values(DType::i64, type.shape);
  std::uniform_int_distribution<int64_t> pick(0, type.dtype == DType::boolean ? 1 : 3);
  for (int64_t& value : values.values<int64_t>()) value = pick(random);
  return values.cast(type.dtype);
}

// The reference result of `node` on `inputs`: its kernel, or for a fused node its body
// run by the graph interpreter.
inline std::vector<Tensor> reference_outputs(const Node& node, int opset,
                                      const std::vector<const Tensor*>& inputs) {
  if (!node.is_fused()) return evaluate_node(node, opset, inputs);
  std::vector<Tensor> body_inputs;
  for (const Tensor* input : inputs) body_inputs.push_back(*input);
  return interpret(*node.body, body_inputs);
}

// Every kernel of `graph` lowered, verified, round-tripped and its regions checked; the
// ones the loop interpreter runs quickly also run on random inputs (constants keep their
// values) and are compared with the reference. Problems are appended to `problems`.
inline ModelCounts check_kernels(const Graph& graph, const std::string& model,
                          std::vector<std::string>& problems) {
  ModelCounts counts;
  std::mt19937 random(7);
  for (const Node* node : graph.nodes()) {
    std::string where = model + ", " + node->describe();
    try {
      loop::PrimFunc func = lower_node(*node, graph.opset, testing::avx512());
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

// check_kernels on `graph` finds no problem, and compares every node with its reference.
inline void require_kernels_agree(const Graph& graph) {
  std::vector<std::string> problems;
  ModelCounts counts = check_kernels(graph, graph.name, problems);
  CAPTURE(problems);
  REQUIRE(problems.empty());
  REQUIRE(counts.compared == static_cast<int>(graph.num_nodes()));
}

}  // namespace minic::testing
