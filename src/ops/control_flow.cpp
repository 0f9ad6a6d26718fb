// If and Loop: ops whose attributes are graphs. Course module 2.
//
// If runs one of two bodies, then_branch or else_branch, on a boolean condition; their
// outputs are its outputs. Loop runs its body again and again:
//
//   for (i = 0; (M absent or i < M) && (cond absent or cond); ++i)
//     cond, carried..., scan_i... = body(i, cond, carried..., captures...)
//
// Its inputs are M (the most iterations, optional), cond (optional), the initial carried
// values, then the captures (see subgraph.h); its outputs are the final carried values,
// then every scan value of every iteration stacked along a new first axis.
//
// minic compiles for static shapes, and these ops are where that shows most:
//   - If's outputs have the types both branches agree on; where they differ, or a branch
//     cannot be typed without knowing which one runs, the condition's value decides, and
//     the graph is specialised to it (as for Reshape's shape).
//   - A carried value keeps its type from iteration to iteration.
//   - A scan output's number of rows must be known before running: M, when the body hands
//     its condition on unchanged; otherwise the shape rule runs the loop on the inputs'
//     values (which must then be known, as for NonZero) and the graph is specialised.
//     The same holds for a scan output whose row shape depends on values in the body.
// Both ops run on their reference kernels, which run the bodies with BodyRunner: as
// compiled code inside a compiled model, where the body's shapes allow (BodyEvaluator).
//
// Chapter: docs/module2-graph-ir.md#control-flow-if-loop-scan
#include <limits>

#include "subgraph.h"

namespace minic {

namespace {

constexpr int kManyInputs = std::numeric_limits<int>::max();

bool read_condition(const NodeContext& ctx, const Tensor& value, std::string_view what) {
  if (value.dtype() != DType::boolean || value.num_elements() != 1) {
    ctx.fail("{} must be one bool, not {}", what, type_string(value.type()));
  }
  return value.as_int64(0) != 0;
}

// --- If ---------------------------------------------------------------------------------

// The types of the captures (the node's inputs after the condition) and their values
// where they are settled.
struct Captures {
  std::vector<TensorType> types;
  std::vector<const Tensor*> values;
};

Captures if_captures(const ShapeContext& ctx) {
  size_t count = capture_count(ctx, 1);
  if (ctx.num_inputs() != 1 + count) {
    ctx.fail("has {} inputs; If takes its condition and the {} values its branches read",
             ctx.num_inputs(), count);
  }
  Captures captures;
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    captures.types.push_back(ctx.input_type(i));
    captures.values.push_back(ctx.settled_value(i));
  }
  return captures;
}

// The branch's output types, typed with the captures' settled values, or where that
// fails with every value a shape rule can know (specialising the graph to given inputs,
// as for a Reshape reading a shape computed from one).
std::vector<TensorType> branch_types(const ShapeContext& ctx, std::string_view branch,
                                     const Captures& captures) {
  const Graph& body = ctx.get_graph(branch);
  std::unique_ptr<Graph> typed;
  try {
    typed = type_body(ctx, body, captures.types, captures.values);
  } catch (const InternalError&) {
    throw;
  } catch (const Error&) {
    std::vector<const Tensor*> known;
    for (size_t i = 1; i < ctx.num_inputs(); ++i) known.push_back(ctx.known_value(i));
    if (known == captures.values) throw;
    typed = type_body(ctx, body, captures.types, known);
  }
  return output_types(*typed);
}

std::vector<TensorType> if_shape(const ShapeContext& ctx) {
  const TensorType& condition = ctx.input_type(0);
  if (condition.dtype != DType::boolean || condition.num_elements() != 1) {
    ctx.fail("its condition must be one bool, not {}", type_string(condition));
  }
  for (std::string_view branch : {"then_branch", "else_branch"}) {
    size_t count = ctx.get_graph(branch).outputs().size();
    if (count != ctx.num_outputs()) {
      ctx.fail("its {} returns {} values, but the node has {} outputs", branch, count,
               ctx.num_outputs());
    }
  }
  Captures captures = if_captures(ctx);
  if (const Tensor* value = ctx.settled_value(0)) {
    bool which = read_condition(ctx, *value, "its condition");
    return branch_types(ctx, which ? "then_branch" : "else_branch", captures);
  }
  // Both branches, when both can be typed and agree; else the condition must be known.
  try {
    std::vector<TensorType> then_types = branch_types(ctx, "then_branch", captures);
    if (then_types == branch_types(ctx, "else_branch", captures)) return then_types;
  } catch (const InternalError&) {
    throw;
  } catch (const Error&) {
    // one branch needs to know it is the one that runs
  }
  bool which = read_condition(ctx, ctx.input_value(0), "its condition");
  return branch_types(ctx, which ? "then_branch" : "else_branch", captures);
}

std::vector<Tensor> if_kernel(const KernelContext& ctx) {
  bool which = read_condition(ctx, ctx.input(0), "its condition");
  const Graph& branch = ctx.get_graph(which ? "then_branch" : "else_branch");
  std::vector<TensorType> types;
  std::vector<const Tensor*> values;
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    types.push_back(ctx.input(i).type());
    values.push_back(&ctx.input(i));
  }
  return BodyRunner(ctx, branch, types, values, ctx.bodies()).run(values);
}

// --- Loop -------------------------------------------------------------------------------

int64_t read_trip_count(const NodeContext& ctx, const Tensor& value) {
  if (value.dtype() != DType::i64 || value.num_elements() != 1) {
    ctx.fail("its trip count M must be one int64, not {}", type_string(value.type()));
  }
  return value.as_int64(0);
}

// How a Loop node's inputs and its body's outputs divide.
struct LoopLayout {
  size_t carried = 0;   // initial values in, final values out
  size_t scans = 0;     // body outputs stacked into node outputs
  size_t captures = 0;  // last inputs of the node and of the body
};

LoopLayout loop_layout(const NodeContext& ctx) {
  const Graph& body = ctx.get_graph("body");
  LoopLayout layout;
  layout.captures = capture_count(ctx, 0);
  if (ctx.num_inputs() < 2 + layout.captures) {
    ctx.fail("has {} inputs; Loop takes M and cond first (either may be omitted, as '')",
             ctx.num_inputs() - layout.captures);
  }
  layout.carried = ctx.num_inputs() - 2 - layout.captures;
  if (body.outputs().size() < 1 + layout.carried) {
    ctx.fail(
        "its body returns {} values; it must return the condition and the {} carried values "
        "first",
        body.outputs().size(), layout.carried);
  }
  layout.scans = body.outputs().size() - 1 - layout.carried;
  if (ctx.num_outputs() != layout.carried + layout.scans) {
    ctx.fail("has {} outputs, but its body gives {} carried and {} scan values", ctx.num_outputs(),
             layout.carried, layout.scans);
  }
  for (size_t i = 0; i < layout.carried + layout.captures; ++i) {
    if (!ctx.has_input(2 + i)) ctx.fail("input {} is required but missing", 2 + i);
  }
  return layout;
}

struct LoopRun {
  std::vector<Tensor> carried;
  std::vector<std::vector<Tensor>> scans;  // per scan output, its row of each iteration
  const Graph* typed = nullptr;            // the body typed once, if it could be
};

// Runs the loop on `inputs` (null for an omitted M or cond), its body through `bodies`
// where given. `runner` is kept by the caller, since the typed body it holds outlives the
// run.
LoopRun run_loop(const NodeContext& ctx, const LoopLayout& layout,
                 std::span<const Tensor* const> inputs, BodyEvaluator* bodies,
                 std::unique_ptr<BodyRunner>& runner) {
  if (!inputs[0] && !inputs[1]) {
    ctx.fail("has neither a trip count (M) nor a condition, so it would never end");
  }
  std::optional<int64_t> trips;
  if (inputs[0]) trips = read_trip_count(ctx, *inputs[0]);
  bool condition = !inputs[1] || read_condition(ctx, *inputs[1], "its condition cond");

  // The body's inputs: the iteration number, the condition, the carried values, the
  // captures; the captures are the same in every iteration.
  std::vector<TensorType> body_types = {{DType::i64, {}}, {DType::boolean, {}}};
  std::vector<const Tensor*> fixed(2 + layout.carried, nullptr);
  for (size_t i = 2; i < inputs.size(); ++i) body_types.push_back(inputs[i]->type());
  for (size_t i = 2 + layout.carried; i < inputs.size(); ++i) fixed.push_back(inputs[i]);
  runner = std::make_unique<BodyRunner>(ctx, ctx.get_graph("body"), body_types, fixed, bodies);
  LoopRun run;
  run.typed = runner->typed();
  for (size_t i = 0; i < layout.carried; ++i) run.carried.push_back(*inputs[2 + i]);
  run.scans.resize(layout.scans);
  for (int64_t i = 0; (!trips || i < *trips) && condition; ++i) {
    Tensor iteration = Tensor::scalar<int64_t>(i);
    Tensor cond = Tensor::scalar<bool>(condition);
    std::vector<const Tensor*> args = {&iteration, &cond};
    for (const Tensor& value : run.carried) args.push_back(&value);
    args.insert(args.end(), inputs.begin() + 2 + layout.carried, inputs.end());
    std::vector<Tensor> outputs = runner->run(args);
    condition = read_condition(ctx, outputs[0], "the condition its body returns");
    for (size_t c = 0; c < layout.carried; ++c) {
      if (outputs[1 + c].type() != run.carried[c].type()) {
        ctx.fail(
            "carried value {} changes from {} to {} in iteration {}; minic needs it to keep "
            "its type",
            c, type_string(run.carried[c].type()), type_string(outputs[1 + c].type()), i);
      }
      run.carried[c] = std::move(outputs[1 + c]);
    }
    for (size_t k = 0; k < layout.scans; ++k) {
      std::vector<Tensor>& rows = run.scans[k];
      Tensor& row = outputs[1 + layout.carried + k];
      if (!rows.empty() && row.type() != rows[0].type()) {
        ctx.fail(
            "scan output {} changes from {} to {} in iteration {}; minic needs it to keep "
            "its type",
            k, type_string(rows[0].type()), type_string(row.type()), i);
      }
      rows.push_back(std::move(row));
    }
  }
  return run;
}

// True if the body returns its condition input unchanged (or the constant true), so that a
// loop with a trip count runs exactly M times whenever it starts.
bool hands_condition_on(const Graph& typed) {
  const Value* out = typed.outputs()[0];
  const Value* in = typed.inputs()[1];
  if (out == in) return true;
  if (out->producer() && out->producer()->op == "Identity" && out->producer()->input(0) == in) {
    return true;
  }
  return out->constant && out->constant->num_elements() == 1 && out->constant->as_int64(0) != 0;
}

std::vector<TensorType> loop_shape(const ShapeContext& ctx) {
  LoopLayout layout = loop_layout(ctx);
  // The body's inputs as in run_loop; only the captures' values may be known.
  std::vector<TensorType> body_types = {{DType::i64, {}}, {DType::boolean, {}}};
  std::vector<const Tensor*> known(2 + layout.carried, nullptr);
  for (size_t i = 2; i < ctx.num_inputs(); ++i) body_types.push_back(ctx.input_type(i));
  for (size_t i = 2 + layout.carried; i < ctx.num_inputs(); ++i) {
    known.push_back(ctx.settled_value(i));
  }
  std::vector<TensorType> carried(body_types.begin() + 2, body_types.begin() + 2 + layout.carried);
  // Null where its shapes depend on values that change: then it runs below.
  std::unique_ptr<Graph> typed = try_type_body(ctx, ctx.get_graph("body"), body_types, known);
  if (typed) {
    std::vector<TensorType> body = output_types(*typed);
    for (size_t c = 0; c < layout.carried; ++c) {
      if (body[1 + c] != carried[c]) {
        ctx.fail(
            "its body turns carried value {} from {} into {}; minic needs it to keep its "
            "type",
            c, type_string(carried[c]), type_string(body[1 + c]));
      }
    }
    if (layout.scans == 0) return carried;
    if (ctx.has_input(0) && hands_condition_on(*typed)) {
      int64_t trips = std::max<int64_t>(read_trip_count(ctx, ctx.input_value(0)), 0);
      if (ctx.has_input(1) && !read_condition(ctx, ctx.input_value(1), "its condition cond")) {
        trips = 0;
      }
      std::vector<TensorType> types = carried;
      for (size_t k = 0; k < layout.scans; ++k) {
        TensorType row = body[1 + layout.carried + k];
        row.shape.insert(row.shape.begin(), trips);
        types.push_back(row);
      }
      return types;
    }
  }
  // Without scan outputs the types are the carried values' (the kernel checks that each
  // iteration keeps them).
  if (layout.scans == 0) return carried;
  // The loop's shape follows from running it: every input's value must be known.
  std::vector<const Tensor*> values;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    values.push_back(ctx.has_input(i) ? &ctx.input_value(i) : nullptr);
  }
  std::unique_ptr<BodyRunner> runner;
  LoopRun run = run_loop(ctx, layout, values, nullptr, runner);
  std::vector<TensorType> types = carried;
  for (size_t k = 0; k < layout.scans; ++k) {
    const std::vector<Tensor>& rows = run.scans[k];
    TensorType row;
    if (!rows.empty()) {
      row = rows[0].type();
    } else if (run.typed) {
      row = run.typed->outputs()[1 + layout.carried + k]->type;
    } else {
      ctx.fail(
          "runs no iteration, and the shape of scan output {} depends on values inside "
          "its body, so it is not known",
          k);
    }
    row.shape.insert(row.shape.begin(), static_cast<int64_t>(rows.size()));
    types.push_back(row);
  }
  return types;
}

std::vector<Tensor> loop_kernel(const KernelContext& ctx) {
  LoopLayout layout = loop_layout(ctx);
  std::vector<const Tensor*> inputs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    inputs.push_back(ctx.has_input(i) ? &ctx.input(i) : nullptr);
  }
  std::unique_ptr<BodyRunner> runner;
  LoopRun run = run_loop(ctx, layout, inputs, ctx.bodies(), runner);
  std::vector<Tensor> outputs = std::move(run.carried);
  for (size_t k = 0; k < layout.scans; ++k) {
    const std::vector<Tensor>& rows = run.scans[k];
    outputs.push_back(rows.empty() ? ctx.make_output(layout.carried + k) : stack_rows(rows, 0));
  }
  return outputs;
}

}  // namespace

void register_control_flow_ops(OpRegistry& registry) {
  registry.add({.name = "If",
                .min_opset = 1,
                .max_inputs = kManyInputs,
                .max_outputs = kManyInputs,
                .fusion = FusionKind::opaque,
                .shape_rule = if_shape,
                .kernel = if_kernel,
                .graph_attributes = {"then_branch", "else_branch"}});
  registry.add({.name = "Loop",
                .min_opset = 1,
                .min_inputs = 0,
                .max_inputs = kManyInputs,
                .max_outputs = kManyInputs,
                .fusion = FusionKind::opaque,
                .shape_rule = loop_shape,
                .kernel = loop_kernel,
                .graph_attributes = {"body"}});
}

}  // namespace minic
