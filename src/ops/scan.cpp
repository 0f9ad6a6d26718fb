// Scan: a body run once for each position along an axis of its scan inputs. Course
// module 2.
//
// Inputs: the N initial states, then the M scan inputs (num_scan_inputs), then the
// captures (see subgraph.h). At each position t (counted from the end for an input whose
// scan_input_directions is 1) the body takes the states, row t of every scan input along
// its scan_input_axes axis, and the captures, and returns the next states and K scan
// values. The outputs are the final states, then each scan value's rows stacked along its
// scan_output_axes axis (in reverse order where scan_output_directions is 1).
//
//   states = initial
//   for t in 0 .. T-1:  states, scan_t... = body(states, rows t of the scan inputs, captures)
//
// Opset 8's form has a batch axis first on every input and output and scans axis 1, each
// batch element on its own: it takes an optional sequence_lens first (minic needs every
// sequence to be the whole length) and `directions` for the scan inputs.
//
// The number of positions T comes from the inputs' shapes, so the output shapes are known
// once the body is typed; a body whose shapes depend on the values it is given is run by
// the shape rule on the inputs' values, as Loop's is (control_flow.cpp).
//
// Chapter: docs/module2-graph-ir.md#control-flow-if-loop-scan
#include <algorithm>
#include <limits>

#include "subgraph.h"

namespace minic {

namespace {

// How a Scan node's inputs and outputs divide, with its axes normalised.
struct ScanLayout {
  size_t first = 0;  // the index of the first state: 1 in opset 8 (after sequence_lens)
  size_t states = 0;
  size_t scan_inputs = 0;
  size_t scan_outputs = 0;
  size_t captures = 0;
  bool batched = false;  // opset 8: a batch axis 0 on every input and output
  std::vector<int64_t> input_axes, output_axes;
  std::vector<bool> input_reverse, output_reverse;
};

std::vector<bool> read_directions(const NodeContext& ctx, std::string_view name, size_t count) {
  std::vector<int64_t> values = ctx.get_ints(name, std::vector<int64_t>(count, 0));
  if (values.size() != count) {
    ctx.fail("attribute {} has {} entries for {} values", name, values.size(), count);
  }
  std::vector<bool> reverse;
  for (int64_t value : values) {
    if (value != 0 && value != 1) ctx.fail("attribute {} holds {}; it must be 0 or 1", name, value);
    reverse.push_back(value == 1);
  }
  return reverse;
}

std::vector<int64_t> read_axes(const NodeContext& ctx, std::string_view name, size_t count) {
  std::vector<int64_t> axes = ctx.get_ints(name, std::vector<int64_t>(count, 0));
  if (axes.size() != count) {
    ctx.fail("attribute {} has {} entries for {} values", name, axes.size(), count);
  }
  return axes;
}

ScanLayout scan_layout(const NodeContext& ctx) {
  const Graph& body = ctx.get_graph("body");
  ScanLayout layout;
  layout.batched = ctx.opset() < 9;
  layout.first = layout.batched ? 1 : 0;
  layout.captures = capture_count(ctx, layout.first);
  int64_t scan_inputs = ctx.get_int("num_scan_inputs");
  size_t own = ctx.num_inputs() - layout.captures - layout.first;
  if (scan_inputs < 1 || static_cast<size_t>(scan_inputs) > own) {
    ctx.fail("num_scan_inputs is {}, but the node has {} state and scan inputs", scan_inputs, own);
  }
  layout.scan_inputs = static_cast<size_t>(scan_inputs);
  layout.states = own - layout.scan_inputs;
  if (body.outputs().size() < layout.states || ctx.num_outputs() != body.outputs().size()) {
    ctx.fail(
        "has {} outputs and its body returns {}; both must be the {} states, then the scan "
        "outputs",
        ctx.num_outputs(), body.outputs().size(), layout.states);
  }
  layout.scan_outputs = body.outputs().size() - layout.states;
  for (size_t i = layout.first; i < layout.first + own + layout.captures; ++i) {
    if (!ctx.has_input(i)) ctx.fail("input {} is required but missing", i);
  }
  if (layout.batched) {
    layout.input_reverse = read_directions(ctx, "directions", layout.scan_inputs);
    layout.input_axes.assign(layout.scan_inputs, 0);
    layout.output_reverse.assign(layout.scan_outputs, false);
    layout.output_axes.assign(layout.scan_outputs, 0);
  } else {
    layout.input_reverse = read_directions(ctx, "scan_input_directions", layout.scan_inputs);
    layout.input_axes = read_axes(ctx, "scan_input_axes", layout.scan_inputs);
    layout.output_reverse = read_directions(ctx, "scan_output_directions", layout.scan_outputs);
    layout.output_axes = read_axes(ctx, "scan_output_axes", layout.scan_outputs);
  }
  return layout;
}

// The scan's length T, checking that every scan input has it along its axis, and the
// axes normalised to the inputs' ranks. `types` are one scan's state, scan and capture
// input types (no batch axis).
int64_t scan_length(const NodeContext& ctx, ScanLayout& layout, std::span<const TensorType> types) {
  int64_t length = -1;
  for (size_t m = 0; m < layout.scan_inputs; ++m) {
    const TensorType& type = types[layout.states + m];
    int64_t& axis = layout.input_axes[m];
    axis = ctx.normalize_axis(axis, type.rank());
    if (length >= 0 && type.shape[axis] != length) {
      ctx.fail("scan input {} has {} positions along axis {}, but scan input 0 has {}", m,
               type.shape[axis], axis, length);
    }
    length = type.shape[axis];
  }
  return length;
}

// The body's input types for the scan's `types`: the scan inputs without their axis.
std::vector<TensorType> body_types(const ScanLayout& layout, std::span<const TensorType> types) {
  std::vector<TensorType> body(types.begin(), types.end());
  for (size_t m = 0; m < layout.scan_inputs; ++m) {
    Shape& shape = body[layout.states + m].shape;
    shape.erase(shape.begin() + layout.input_axes[m]);
  }
  return body;
}

// The scan's outputs from the body's output types and the length.
std::vector<TensorType> scan_output_types(const NodeContext& ctx, ScanLayout& layout,
                                          std::span<const TensorType> body, int64_t length) {
  std::vector<TensorType> types(body.begin(), body.end());
  for (size_t k = 0; k < layout.scan_outputs; ++k) {
    TensorType& row = types[layout.states + k];
    int64_t& axis = layout.output_axes[k];
    axis = ctx.normalize_axis(axis, row.rank() + 1);
    row.shape.insert(row.shape.begin() + axis, length);
  }
  return types;
}

// One scan (no batch axis) on `inputs`: states, scan inputs, captures.
std::vector<Tensor> run_scan(const NodeContext& ctx, ScanLayout layout,
                             std::span<const Tensor* const> inputs, BodyEvaluator* bodies) {
  std::vector<TensorType> types;
  for (const Tensor* input : inputs) types.push_back(input->type());
  int64_t length = scan_length(ctx, layout, types);
  std::vector<const Tensor*> fixed(inputs.size(), nullptr);
  for (size_t i = layout.states + layout.scan_inputs; i < inputs.size(); ++i) fixed[i] = inputs[i];
  const std::vector<TensorType> body_inputs = body_types(layout, types);
  BodyRunner runner(ctx, ctx.get_graph("body"), body_inputs, fixed, bodies);

  std::vector<Tensor> states;
  for (size_t s = 0; s < layout.states; ++s) states.push_back(*inputs[s]);
  std::vector<std::vector<Tensor>> rows(layout.scan_outputs);
  // Each position's slices of the scan inputs, in tensors made once and refilled.
  std::vector<Tensor> slices;
  for (size_t m = 0; m < layout.scan_inputs; ++m) {
    slices.emplace_back(body_inputs[layout.states + m]);
  }
  std::vector<const Tensor*> args;
  for (int64_t t = 0; t < length; ++t) {
    for (size_t m = 0; m < layout.scan_inputs; ++m) {
      int64_t position = layout.input_reverse[m] ? length - 1 - t : t;
      take_row_into(*inputs[layout.states + m], layout.input_axes[m], position, slices[m]);
    }
    args.clear();
    for (const Tensor& state : states) args.push_back(&state);
    for (const Tensor& slice : slices) args.push_back(&slice);
    args.insert(args.end(), inputs.begin() + layout.states + layout.scan_inputs, inputs.end());
    std::vector<Tensor> outputs = runner.run(args);
    for (size_t s = 0; s < layout.states; ++s) {
      if (outputs[s].type() != states[s].type()) {
        ctx.fail("state {} changes from {} to {} at position {}; minic needs it to keep its type",
                 s, type_string(states[s].type()), type_string(outputs[s].type()), t);
      }
      states[s] = std::move(outputs[s]);
    }
    for (size_t k = 0; k < layout.scan_outputs; ++k) {
      if (!rows[k].empty() && outputs[layout.states + k].type() != rows[k][0].type()) {
        ctx.fail("scan output {} changes type at position {}; minic needs it to keep its type", k,
                 t);
      }
      rows[k].push_back(std::move(outputs[layout.states + k]));
    }
  }
  std::vector<Tensor> results = std::move(states);
  for (size_t k = 0; k < layout.scan_outputs; ++k) {
    if (layout.output_reverse[k]) std::reverse(rows[k].begin(), rows[k].end());
    if (!rows[k].empty()) {
      int64_t axis = ctx.normalize_axis(layout.output_axes[k], rows[k][0].rank() + 1);
      results.push_back(stack_rows(rows[k], axis));
      continue;
    }
    // No positions: an empty tensor of the row type the typed body gives.
    if (!runner.typed()) {
      ctx.fail(
          "scans no positions, and the shape of scan output {} depends on values inside "
          "its body, so it is not known",
          k);
    }
    std::vector<TensorType> body = output_types(*runner.typed());
    results.push_back(Tensor(scan_output_types(ctx, layout, body, 0)[layout.states + k]));
  }
  return results;
}

// Opset 8: every sequence must be the whole length.
void check_sequence_lens(const NodeContext& ctx, const Tensor* lens, int64_t length) {
  if (!lens) return;
  for (int64_t i = 0; i < lens->num_elements(); ++i) {
    if (lens->as_int64(i) != length) {
      ctx.fail(
          "sequence_lens[{}] is {}; minic runs Scan 8 only on sequences of the whole "
          "length {}",
          i, lens->as_int64(i), length);
    }
  }
}

// The whole node on `inputs`: one scan, or (opset 8) one scan per batch element; the body
// runs through `bodies` where given.
std::vector<Tensor> scan_values(const NodeContext& ctx, std::span<const Tensor* const> inputs,
                                BodyEvaluator* bodies) {
  ScanLayout layout = scan_layout(ctx);
  std::span<const Tensor* const> own = inputs.subspan(layout.first);
  if (!layout.batched) return run_scan(ctx, layout, own, bodies);
  size_t batched = layout.states + layout.scan_inputs;  // the captures have no batch axis
  int64_t batch = own[0]->rank() > 0 ? own[0]->shape()[0] : 0;
  std::vector<std::vector<Tensor>> per_batch;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Tensor> rows;
    for (size_t i = 0; i < batched; ++i) {
      if (own[i]->rank() == 0 || own[i]->shape()[0] != batch) {
        ctx.fail("input {} has no batch axis of size {}", layout.first + i, batch);
      }
      rows.push_back(take_row(*own[i], 0, b));
    }
    std::vector<const Tensor*> args;
    for (const Tensor& row : rows) args.push_back(&row);
    args.insert(args.end(), own.begin() + batched, own.end());
    check_sequence_lens(ctx, inputs[0], rows[layout.states].shape()[0]);
    per_batch.push_back(run_scan(ctx, layout, args, bodies));
  }
  if (per_batch.empty()) ctx.fail("has a batch of size 0");
  std::vector<Tensor> results;
  for (size_t o = 0; o < per_batch[0].size(); ++o) {
    std::vector<Tensor> rows;
    for (std::vector<Tensor>& outputs : per_batch) rows.push_back(std::move(outputs[o]));
    results.push_back(stack_rows(rows, 0));
  }
  return results;
}

std::vector<TensorType> scan_shape(const ShapeContext& ctx) {
  ScanLayout layout = scan_layout(ctx);
  std::vector<TensorType> types;
  std::vector<const Tensor*> known;
  for (size_t i = layout.first; i < ctx.num_inputs(); ++i) {
    TensorType type = ctx.input_type(i);
    bool batch_axis = layout.batched && i < layout.first + layout.states + layout.scan_inputs;
    if (batch_axis) {
      if (type.rank() == 0) ctx.fail("input {} has no batch axis", i);
      type.shape.erase(type.shape.begin());
    }
    types.push_back(type);
    bool capture = i >= layout.first + layout.states + layout.scan_inputs;
    known.push_back(capture ? ctx.settled_value(i) : nullptr);
  }
  int64_t length = scan_length(ctx, layout, types);
  // Null where its shapes depend on the values it is given: then it runs below.
  std::unique_ptr<Graph> typed =
      try_type_body(ctx, ctx.get_graph("body"), body_types(layout, types), known);
  if (!typed) {
    std::vector<const Tensor*> values;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      values.push_back(ctx.has_input(i) ? &ctx.input_value(i) : nullptr);
    }
    std::vector<TensorType> result;
    for (const Tensor& output : scan_values(ctx, values, nullptr)) result.push_back(output.type());
    return result;
  }
  std::vector<TensorType> body = output_types(*typed);
  for (size_t s = 0; s < layout.states; ++s) {
    if (body[s] != types[s]) {
      ctx.fail("its body turns state {} from {} into {}; minic needs it to keep its type", s,
               type_string(types[s]), type_string(body[s]));
    }
  }
  std::vector<TensorType> result = scan_output_types(ctx, layout, body, length);
  if (layout.batched) {
    for (TensorType& type : result)
      type.shape.insert(type.shape.begin(), ctx.input_type(1).shape[0]);
  }
  return result;
}

std::vector<Tensor> scan_kernel(const KernelContext& ctx) {
  std::vector<const Tensor*> inputs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    inputs.push_back(ctx.has_input(i) ? &ctx.input(i) : nullptr);
  }
  return scan_values(ctx, inputs, ctx.bodies());
}

}  // namespace

void register_scan_ops(OpRegistry& registry) {
  registry.add({.name = "Scan",
                .min_opset = 8,
                .max_inputs = std::numeric_limits<int>::max(),
                .max_outputs = std::numeric_limits<int>::max(),
                .fusion = FusionKind::opaque,
                .shape_rule = scan_shape,
                .kernel = scan_kernel,
                .graph_attributes = {"body"}});
}

}  // namespace minic
