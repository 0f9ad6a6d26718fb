// Tests of compiled control-flow bodies (src/driver/compiled_bodies.cpp): inside a
// compiled model, a Loop, Scan or If body whose shapes follow from its input types runs as
// compiled code, compiled once for those types; a body whose shapes need a value runs on
// the reference kernels. Either way the model computes what the interpreter computes.
// Course module 1.
#include <catch2/catch.hpp>

#include "minic/driver/compile.h"
#include "minic/ir/graph/text.h"
#include "minic/ops/shape_inference.h"
#include "minic/runtime/compare.h"
#include "minic/runtime/interpreter.h"

using namespace minic;

namespace {

Graph typed_graph(const char* text) {
  Graph graph = parse_graph(text, "<bodies test>");
  infer_shapes(graph);
  return graph;
}

// Runs `inputs` through the compiled model and the interpreter; they must agree.
void require_agrees(CompiledModel& model, const Graph& reference,
                    const std::vector<Tensor>& inputs) {
  std::vector<Tensor> expected = interpret(reference, inputs);
  std::vector<Tensor> actual = model.run(inputs);
  REQUIRE(actual.size() == expected.size());
  for (size_t k = 0; k < actual.size(); ++k) {
    TensorComparison comparison = compare_tensors(actual[k], expected[k], {1e-5, 1e-6});
    INFO("output " << k << ": " << describe(comparison));
    REQUIRE(comparison.ok());
  }
}

Tensor floats(Shape shape, std::vector<float> values) {
  return Tensor::from_vector<float>(std::move(shape), values);
}

}  // namespace

TEST_CASE("a Loop body of fixed shapes runs as compiled code, compiled once", "[driver][control]") {
  // h = tanh(h * w + x) for 6 steps, each h kept: a small recurrence.
  const char* text =
      R"(graph g(%h0: f32[4], %w: f32[4], %x: f32[4]) -> (%h: f32[4], %hs: f32[6,4]) opset 17 {
  %m = const i64[] dense<[6]>
  %h, %hs = Loop(%m, _, %h0, %w, %x) {body=graph step(%i: ?, %c: ?, %h: ?, %w: ?, %x: ?) -> (%c: ?, %n: ?, %n: ?) {
      %hw = Mul(%h, %w) : ?
      %s = Add(%hw, %x) : ?
      %n = Tanh(%s) : ?
      return %c, %n, %n
    }, captures=2} : f32[4], f32[6,4]
  return %h, %hs
})";
  Graph reference = typed_graph(text);
  std::unique_ptr<CompiledModel> model = compile_model(typed_graph(text));
  REQUIRE(model->compiled_bodies() == 0);  // bodies compile when they first run
  require_agrees(*model, reference,
                 {floats({4}, {0, 1, -1, 0.5f}), floats({4}, {0.5f, -2, 1, 3}),
                  floats({4}, {0.1f, 0.2f, -0.3f, 0})});
  REQUIRE(model->compiled_bodies() == 1);
  require_agrees(
      *model, reference,
      {floats({4}, {1, 1, 1, 1}), floats({4}, {1, 0, -1, 2}), floats({4}, {0, 0, 0, 0})});
  REQUIRE(model->compiled_bodies() == 1);  // the same body and types: compiled once
}

TEST_CASE("a Loop body that slices at the iteration number runs on reference kernels",
          "[driver][control]") {
  const char* text = R"(graph g(%x: f32[5]) -> (%acc: f32[1]) opset 17 {
  %m = const i64[] dense<[5]>
  %zero = const f32[1] dense<[0.0]>
  %acc = Loop(%m, _, %zero, %x) {body=graph step(%i: ?, %c: ?, %a: ?, %x: ?) -> (%c: ?, %n: ?) {
      %one = const i64[] dense<[1]>
      %axes = const i64[1] dense<[0]>
      %e = Add(%i, %one) : ?
      %s0 = Unsqueeze(%i, %axes) : ?
      %s1 = Unsqueeze(%e, %axes) : ?
      %r = Slice(%x, %s0, %s1) : ?
      %sq = Mul(%r, %r) : ?
      %n = Add(%a, %sq) : ?
      return %c, %n
    }, captures=1} : f32[1]
  return %acc
})";
  Graph reference = typed_graph(text);
  std::unique_ptr<CompiledModel> model = compile_model(typed_graph(text));
  require_agrees(*model, reference, {floats({5}, {1, 2, 3, -1, 0.5f})});
  REQUIRE(model->compiled_bodies() == 0);
}

TEST_CASE("Scan and If bodies compile, each branch for itself, one returning its input",
          "[driver][control]") {
  const char* text = R"(graph g(%c: bool[], %s0: f32[3], %xs: f32[4,3]) -> (%y: f32[3]) opset 17 {
  %s, %rows = Scan(%s0, %xs) {body=graph step(%s: ?, %x: ?) -> (%n: ?, %n: ?) {
      %p = Mul(%s, %x) : ?
      %n = Add(%p, %x) : ?
      return %n, %n
    }, num_scan_inputs=1} : f32[3], f32[4,3]
  %y = If(%c, %s) {captures=1, else_branch=graph e(%s: ?) -> (%s: ?) {
      return %s
    }, then_branch=graph t(%s: ?) -> (%o: ?) {
      %o = Sigmoid(%s) : ?
      return %o
    }} : f32[3]
  return %y
})";
  Graph reference = typed_graph(text);
  std::unique_ptr<CompiledModel> model = compile_model(typed_graph(text));
  Tensor s0 = floats({3}, {0.5f, -1, 2});
  Tensor xs = floats({4, 3}, {1, 0.5f, -0.5f, 0.25f, 1, 2, -1, 0, 0.5f, 2, -2, 1});
  require_agrees(*model, reference, {Tensor::scalar<bool>(true), s0, xs});
  REQUIRE(model->compiled_bodies() == 2);  // the Scan body and the then-branch
  require_agrees(*model, reference, {Tensor::scalar<bool>(false), s0, xs});
  REQUIRE(model->compiled_bodies() == 3);
}

TEST_CASE("two Scans that do not need each other run side by side, their buffers apart",
          "[driver][control]") {
  // A forward and a backward recurrence over the same rows, as a bidirectional RNN has;
  // the backward one's input (its own Mul) comes after the forward Scan in graph order.
  const char* text =
      R"(graph g(%s0: f32[3], %xs: f32[5,3], %w: f32[3]) -> (%y: f32[5,3], %z: f32[5,3]) opset 17 {
  %a = Mul(%xs, %w) : f32[5,3]
  %s, %y = Scan(%s0, %a) {body=graph step(%s: ?, %x: ?) -> (%n: ?, %n: ?) {
      %p = Mul(%s, %x) : ?
      %n = Tanh(%p) : ?
      return %n, %n
    }, num_scan_inputs=1} : f32[3], f32[5,3]
  %b = Add(%xs, %w) : f32[5,3]
  %t, %z = Scan(%s0, %b) {body=graph back(%s: ?, %x: ?) -> (%n: ?, %n: ?) {
      %q = Add(%s, %x) : ?
      %n = Sigmoid(%q) : ?
      return %n, %n
    }, num_scan_inputs=1, scan_input_directions=[1]} : f32[3], f32[5,3]
  return %y, %z
})";
  Graph reference = typed_graph(text);
  CompileOptions options;
  options.threads = 2;
  std::unique_ptr<CompiledModel> model = compile_model(typed_graph(text), options);
  // The plan: both Muls and Adds first, then the two Scans, the second beside the first.
  const runtime::ExecutionPlan& plan = model->plan();
  REQUIRE(plan.steps.size() == 4);
  CHECK(plan.steps[2].op == "Scan");
  CHECK(plan.steps[3].op == "Scan");
  CHECK_FALSE(plan.steps[2].beside_previous);
  CHECK(plan.steps[3].beside_previous);
  // The intermediates of the two Scans (a and b, read while both run) share no bytes.
  auto range_of = [&](const std::string& name) {
    for (const runtime::PlanBuffer& buffer : plan.buffers) {
      if (buffer.name == name) {
        return std::pair{buffer.arena_offset, buffer.arena_offset + buffer.type.num_bytes()};
      }
    }
    FAIL("no buffer " << name);
    return std::pair<int64_t, int64_t>{0, 0};
  };
  auto [a_begin, a_end] = range_of("a");
  auto [b_begin, b_end] = range_of("b");
  CHECK((a_end <= b_begin || b_end <= a_begin));
  // Run at once on two threads, the Scans compute what the interpreter does, every time.
  Tensor s0 = floats({3}, {0.5f, -1, 2});
  Tensor xs = floats({5, 3}, {1, 0.5f, -0.5f, 0.25f, 1, 2, -1, 0, 0.5f, 2, -2, 1, 0, 1, -1});
  Tensor w = floats({3}, {0.5f, 2, -1});
  for (int run = 0; run < 20; ++run) require_agrees(*model, reference, {s0, xs, w});
  CHECK(model->compiled_bodies() == 2);
}
