// The Catch2 tests of exercise m5-unroll-knob (test.mgraph runs them with lit, the seed of
// the hidden kernels given by --rng-seed).
//
// Kernels lowered from one-op graphs, a few fixed and more drawn from the seed (elementwise
// ops and reductions of random shapes and axes, a MatMul, a Softmax), each with its search
// space for an AVX-512 CPU. For every kernel:
//   - each block's "unroll" knob has the values the README gives, found from the block's
//     loops in the default schedule (the loop it unrolls, its extent), and a block without
//     such a loop has no knob;
//   - the default point still gives the default schedule, trace for trace;
//   - every value of every unroll knob, the other knobs at their defaults, gives a kernel
//     that computes the same on the loop interpreter, with one more unrolled loop of that
//     extent than the default schedule has (for values above 1).
#include "minic/autotune/search_space.h"
#include "minic/codegen/llvm.h"
#include "minic/ir/graph/text.h"
#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/interpreter.h"
#include "minic/ir/loop/printer.h"
#include "minic/ir/loop/visitor.h"
#include "minic/lower/lower.h"
#include "minic/passes/pass_manager.h"
#include "minic/runtime/compare.h"
#include "minic/schedule/block_roles.h"
#include "minic/schedule/primitives.h"
#include "minic/schedule/rules.h"

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <random>

using namespace minic;
using namespace minic::autotune;

namespace {

const Target& avx512() {
  static const Target target = codegen::cpu_target("skylake-avx512");
  return target;
}

// The kernels of a graph of one op on `x` (and `w` for a MatMul); `op_line` may read the
// constant %axes, `axes`.
std::vector<loop::PrimFunc> kernels_of(const std::string& op_line, const std::string& x_type,
                                       const std::string& w_type = "", int64_t axes = 0) {
  std::string params = "%x: " + x_type + (w_type.empty() ? "" : ", %w: " + w_type);
  Graph graph = parse_graph(fmt::format(
      "graph g({}) -> (%y: ?) opset 18 {{\n  %axes = const i64[1] dense<[{}]>\n  {}\n"
      "  return %y\n}}\n", params, axes, op_line));
  run_passes(graph, {"infer-shapes"}, avx512());
  return lower_graph(graph, avx512()).functions;
}

// One-op kernels drawn from `seed`: elementwise and reductions of random shapes and axes.
std::vector<loop::PrimFunc> random_kernels(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&rng](int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(rng);
  };
  std::vector<loop::PrimFunc> kernels;
  for (int k = 0; k < 6; ++k) {
    std::vector<int64_t> shape;
    for (int64_t d = 0, rank = pick(1, 3); d < rank; ++d) shape.push_back(pick(1, 5) * pick(1, 24));
    std::string type = fmt::format("f32[{}]", fmt::join(shape, ","));
    const int64_t axis = pick(0, static_cast<int64_t>(shape.size()) - 1);
    switch (pick(0, 3)) {
      case 0: kernels.push_back(kernels_of("%y = Exp(%x)", type).at(0)); break;
      case 1: kernels.push_back(kernels_of("%y = Sigmoid(%x)", type).at(0)); break;
      case 2:
        kernels.push_back(kernels_of(fmt::format("%y = ReduceMax(%x, %axes) {{keepdims={}}}",
                                                 pick(0, 1)), type, "", axis).at(0));
        break;
      default:
        kernels.push_back(
            kernels_of(fmt::format("%y = Softmax(%x) {{axis={}}}", axis), type).at(0));
    }
  }
  return kernels;
}

std::vector<loop::PrimFunc> fixed_kernels() {
  return {kernels_of("%y = Exp(%x)", "f32[64,256]").at(0),
          kernels_of("%y = ReduceSum(%x, %axes) {keepdims=1}", "f32[64,256]", "", 1).at(0),
          kernels_of("%y = ReduceSum(%x, %axes) {keepdims=0}", "f32[24,256]", "", 0).at(0),
          kernels_of("%y = MatMul(%x, %w)", "f32[64,128]", "f32[128,96]").at(0),
          kernels_of("%y = Softmax(%x) {axis=1}", "f32[8,100]").at(0)};
}

// The README's values for `block` as the default schedule `sch` left it (fewer than two:
// no knob).
std::vector<std::vector<int64_t>> expected_values(schedule::Schedule sch,
                                                  const std::string& block) {
  std::vector<schedule::LoopRef> loops = sch.get_loops(sch.get_block(block));
  if (loops.empty()) return {};
  size_t at = loops.size() - 1;
  if (schedule::kind_of(sch, loops[at]) == loop::ForKind::vectorized) {
    if (at == 0) return {};
    --at;
  }
  const int64_t extent = schedule::extent_of(sch, loops[at]);
  if (schedule::kind_of(sch, loops[at]) != loop::ForKind::serial || extent < 2) return {};
  std::vector<std::vector<int64_t>> values = {{1}};
  for (int64_t factor : {2, 4, 8}) {
    if (extent % factor == 0) values.push_back({factor});
  }
  return values;
}

// How many unrolled loops of extent `extent` the function has.
int unrolled_loops(const loop::PrimFunc& func, int64_t extent) {
  struct Count : loop::IRVisitor {
    int64_t extent = 0;
    int count = 0;
    void visit_For(const loop::For* node) override {
      if (node->for_kind == loop::ForKind::unrolled && loop::as_const_int(node->extent) == extent) {
        ++count;
      }
      IRVisitor::visit_For(node);
    }
  } counter;
  counter.extent = extent;
  counter.visit(func.body);
  return counter.count;
}

// `scheduled` computes what `func` does on the loop interpreter, on random arguments.
void check_same_results(const loop::PrimFunc& func, const loop::PrimFunc& scheduled) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> value(-1, 1);
  std::vector<Tensor> expected, actual;
  for (const loop::Buffer& param : func.params) {
    if (param->dtype == DType::f32) {
      std::vector<float> data(static_cast<size_t>(num_elements(param->shape)));
      for (float& x : data) x = value(rng);
      expected.push_back(Tensor::from_vector<float>(param->shape, data));
    } else {
      expected.push_back(Tensor(TensorType{param->dtype, param->shape}));  // a reduction's axes
    }
    actual.push_back(expected.back());
  }
  std::vector<Tensor*> expected_args, actual_args;
  for (size_t i = 0; i < expected.size(); ++i) {
    expected_args.push_back(&expected[i]);
    actual_args.push_back(&actual[i]);
  }
  loop::run_func(func, expected_args);
  loop::run_func(scheduled, actual_args);
  for (size_t i = 0; i < expected.size(); ++i) {
    TensorComparison comparison = compare_tensors(actual[i], expected[i], Tolerance{});
    INFO(func.params[i]->name << ": " << describe(comparison));
    CHECK(comparison.ok());
  }
}

void check_kernel(const loop::PrimFunc& func) {
  INFO("kernel:\n" << loop::print_func(func));
  SearchSpace space(func, avx512());
  schedule::Schedule by_default = space.schedule(space.default_point());
  CHECK(schedule::print_trace(by_default.trace()) ==
        schedule::print_trace(schedule::default_cpu_trace(func, avx512())));
  // The blocks of the kernel as lowered: those the rules of the space schedule (a rule may
  // add blocks of its own, as rfactor's partial sums, which get no knobs).
  for (const std::string& block : schedule::get_block_names(func)) {
    INFO("block " << block);
    std::vector<std::vector<int64_t>> expected = expected_values(by_default, block);
    const Knob* knob = nullptr;
    for (const Knob& k : space.knobs()) {
      if (k.name == block + ".unroll") knob = &k;
    }
    if (expected.size() < 2) {
      CHECK(knob == nullptr);
      continue;
    }
    REQUIRE(knob != nullptr);
    CHECK(knob->choices == expected);
    CHECK(space.default_point().at(knob->name) == std::vector<int64_t>{1});
    for (const std::vector<int64_t>& value : knob->choices) {
      INFO("unroll " << value.at(0));
      Decisions point = space.default_point();
      point[knob->name] = value;
      loop::PrimFunc scheduled = space.apply(point);
      check_same_results(func, scheduled);
      if (value.at(0) > 1) {
        CHECK(unrolled_loops(scheduled, value.at(0)) ==
              unrolled_loops(by_default.func(), value.at(0)) + 1);
      }
    }
  }
}

}  // namespace

TEST_CASE("the unroll knob of fixed kernels", "[m5-unroll-knob]") {
  int offered = 0;
  for (const loop::PrimFunc& func : fixed_kernels()) {
    check_kernel(func);
    SearchSpace space(func, avx512());
    for (const Knob& knob : space.knobs()) offered += knob.name.ends_with(".unroll");
  }
  CHECK(offered >= 4);  // Exp's, a ReduceSum's, and both reductions of Softmax
}

TEST_CASE("the unroll knob of kernels drawn from the seed", "[m5-unroll-knob]") {
  const uint64_t seed = Catch::rngSeed();
  INFO("seed " << seed);
  for (const loop::PrimFunc& func : random_kernels(seed)) check_kernel(func);
}
