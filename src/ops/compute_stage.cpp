// From stages to loop nests: the KernelBuilder, the loop nest of one stage, and the
// regions a block reads and writes.
//
// Course module 3. Invariant: every block emitted here passes loop::verify_func, and its
// reads/writes regions cover every element it loads or stores, in its own iteration
// variables. Algorithm for one stage of shape [d0, d1] with a reduction over [e0]:
//   1. one loop per axis (i0, i1), then one per reduction axis (k0), outermost first;
//   2. one block, its iteration variables the stage's own (v0, v1 spatial, r0 reduce),
//      each bound to its loop; the stage's value, written in v0, v1, r0, is its body;
//   3. a reduction stores the reducer's identity in `init` and combines in the body;
//   4. regions: per buffer and dimension, the one index every access uses when it is
//      provably inside the buffer, else the whole dimension.
//
//   for i0 in 0..4 {
//     for i1 in 0..8 {
//       for k0 in 0..16 {
//         block sum(v0 = spatial(4) i0, v1 = spatial(8) i1, r0 = reduce(16) k0) {
//           reads(X[v0, v1, r0], S[v0, v1]) writes(S[v0, v1])
//           init { S[v0, v1] = 0.0 }
//           S[v0, v1] = S[v0, v1] + X[v0, v1, r0]
//         }
//   ...
#include "compute_stage.h"

#include "minic/ir/loop/analysis.h"
#include "minic/ir/loop/printer.h"
#include "minic/ir/loop/visitor.h"

#include <limits>
#include <map>

namespace minic {

using loop::Buffer;
using loop::Expr;
using loop::Stmt;

namespace {

// Every load of a block's body, grouped by buffer in the order first seen.
class LoadCollector : public loop::IRVisitor {
 public:
  std::vector<Buffer> order;
  std::map<const loop::BufferNode*, std::vector<const loop::Load*>> loads;

  void visit_Load(const loop::Load* node) override {
    auto [it, inserted] = loads.try_emplace(node->buffer.get());
    if (inserted) order.push_back(node->buffer);
    it->second.push_back(node);
    loop::IRVisitor::visit_Load(node);
  }
};

// The region covering `accesses` (index lists) of `buffer` (step 4).
loop::BufferRegion cover(const Buffer& buffer,
                         const std::vector<const std::vector<Expr>*>& accesses,
                         const loop::VarBounds& bounds) {
  loop::BufferRegion region{buffer, {}};
  for (size_t d = 0; d < buffer->shape.size(); ++d) {
    const Expr& first = (*accesses.front())[d];
    bool same = true;
    std::string text = loop::print_expr(first);
    for (const auto* access : accesses) same = same && loop::print_expr((*access)[d]) == text;
    loop::IntBound bound = loop::bound_of(first, bounds);
    bool inside = bound.min >= 0 && bound.max < buffer->shape[d];
    if (same && inside) {
      region.region.push_back({first, index(1)});
    } else {
      region.region.push_back({index(0), index(buffer->shape[d])});
    }
  }
  return region;
}

}  // namespace

Expr reducer_identity(Reducer reducer, DType dtype) {
  loop::DataType type{dtype, 1};
  switch (reducer) {
    case Reducer::sum: return constant(dtype, 0);
    case Reducer::product: return constant(dtype, 1);
    case Reducer::max:
    case Reducer::min: {
      bool is_max = reducer == Reducer::max;
      if (is_float(dtype)) {
        double infinity = std::numeric_limits<double>::infinity();
        return loop::FloatImm::make(is_max ? -infinity : infinity, type);
      }
      Expr result;
      visit_dtype(dtype, [&]<typename T>() {
        if constexpr (std::is_integral_v<T>) {
          T limit = is_max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
          // An unsigned 64-bit limit wraps to -1 here; the interpreter reads it back as u64.
          result = loop::IntImm::make(static_cast<int64_t>(limit), type);
        }
      });
      if (!result) internal_fail("no {} identity for {}",
                                 reducer == Reducer::max ? "max" : "min", dtype_name(dtype));
      return result;
    }
  }
  return constant(dtype, 0);
}

Expr reducer_combine(Reducer reducer, Expr accumulated, Expr value) {
  switch (reducer) {
    case Reducer::sum: return accumulated + value;
    case Reducer::product: return accumulated * value;
    case Reducer::max: return loop::max(accumulated, value);
    case Reducer::min: return loop::min(accumulated, value);
  }
  return accumulated;
}

Stmt make_loop_nest(const StageNode& stage, const Buffer& output, const std::string& block_name) {
  // Steps 1 and 2: the loops and the iteration variables bound to them.
  std::vector<loop::IterVar> iter_vars;
  std::vector<std::pair<Expr, int64_t>> loops;
  loop::VarBounds bounds;
  auto add_axis = [&](const Expr& axis, int64_t extent, loop::IterKind kind, const char* prefix,
                      size_t d) {
    Expr loop_var = loop::Var::make(fmt::format("{}{}", prefix, d));
    iter_vars.push_back({axis, extent, kind, loop_var});
    loops.emplace_back(loop_var, extent);
    bounds[axis.as<loop::Var>()] = {0, extent - 1};
  };
  for (size_t d = 0; d < stage.axes.size(); ++d) {
    add_axis(stage.axes[d], stage.type.shape[d], loop::IterKind::spatial, "i", d);
  }
  for (size_t d = 0; d < stage.reduce_axes.size(); ++d) {
    add_axis(stage.reduce_axes[d], stage.reduce_extents[d], loop::IterKind::reduce, "k", d);
  }

  // Step 3: the body, and the init of a reduction.
  Stmt init;
  Stmt body;
  if (stage.reducer) {
    Expr identity = reducer_identity(*stage.reducer, stage.type.dtype);
    init = loop::Store::make(output, stage.axes, identity);
    Expr accumulated = loop::Load::make(output, stage.axes);
    body = loop::Store::make(output, stage.axes,
                             reducer_combine(*stage.reducer, accumulated, stage.value));
  } else {
    body = loop::Store::make(output, stage.axes, stage.value);
  }

  // Step 4: the regions.
  LoadCollector collector;
  collector.visit(body);
  std::vector<loop::BufferRegion> reads;
  for (const Buffer& buffer : collector.order) {
    std::vector<const std::vector<Expr>*> accesses;
    for (const loop::Load* load : collector.loads[buffer.get()]) accesses.push_back(&load->indices);
    reads.push_back(cover(buffer, accesses, bounds));
  }
  std::vector<loop::BufferRegion> writes = {cover(output, {&stage.axes}, bounds)};

  Stmt nest = loop::Block::make({.name = block_name,
                                 .iter_vars = std::move(iter_vars),
                                 .reads = std::move(reads),
                                 .writes = std::move(writes),
                                 .init = init,
                                 .body = body});
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
    nest = loop::For::make(it->first, index(0), index(it->second), loop::ForKind::serial, nest);
  }
  return nest;
}

// --- KernelBuilder -------------------------------------------------------------------------

std::string KernelBuilder::unique_name(const std::string& hint) {
  std::string name = hint.empty() ? "t" : hint;
  for (int k = 1; names_.count(name); ++k) name = fmt::format("{}_{}", hint, k);
  names_.insert(name);
  return name;
}

ComputeTensor KernelBuilder::add_input(const std::string& name, const TensorType& type) {
  auto stage = std::make_shared<StageNode>();
  stage->name = name;
  stage->type = type;
  stage->buffer = loop::BufferNode::make(unique_name(name), type.dtype, type.shape);
  stage->builder = this;
  params_.push_back(stage->buffer);
  return ComputeTensor(std::move(stage));
}

Buffer KernelBuilder::add_output(const std::string& name, const TensorType& type) {
  Buffer buffer = loop::BufferNode::make(unique_name(name), type.dtype, type.shape);
  params_.push_back(buffer);
  return buffer;
}

ComputeTensor KernelBuilder::add_stage(std::shared_ptr<StageNode> stage) {
  stage->builder = this;
  return ComputeTensor(std::move(stage));
}

void KernelBuilder::bind(const ComputeTensor& tensor, const Buffer& output) {
  StageNode& stage = *tensor.node();
  if (!stage.buffer && !stage.target && stage.is_stage()) stage.target = output;
}

void KernelBuilder::write(const ComputeTensor& tensor, const Buffer& output) {
  StageNode& stage = *tensor.node();
  if (stage.buffer == output) return;
  if (!stage.buffer && stage.is_stage() && (!stage.target || stage.target == output)) {
    stage.target = output;
    materialize(stage);
    return;
  }
  // A parameter, or a stage already written elsewhere: copy it.
  auto copy = std::make_shared<StageNode>();
  copy->name = "copy";
  copy->type = tensor.type();
  for (size_t d = 0; d < copy->type.shape.size(); ++d) {
    copy->axes.push_back(loop::Var::make(fmt::format("v{}", d)));
  }
  copy->value = tensor(copy->axes);
  copy->target = output;
  copy->builder = this;
  materialize(*copy);
}

Buffer KernelBuilder::materialize(StageNode& stage) {
  if (stage.buffer) return stage.buffer;
  if (stage.target) {
    stage.buffer = stage.target;
  } else {
    stage.buffer = loop::BufferNode::make(unique_name(stage.name), stage.type.dtype,
                                          stage.type.shape);
    temporaries_.push_back(stage.buffer);
  }
  // A tensor without elements needs no loops (and a loop of extent 0 binds nothing).
  if (stage.type.num_elements() > 0) {
    stages_.push_back(make_loop_nest(stage, stage.buffer, unique_block_name(stage.name)));
  }
  return stage.buffer;
}

std::string KernelBuilder::unique_block_name(const std::string& hint) {
  std::string name = hint.empty() ? "stage" : hint;
  for (int k = 1; block_names_.count(name); ++k) name = fmt::format("{}_{}", hint, k);
  block_names_.insert(name);
  return name;
}

loop::PrimFunc KernelBuilder::finish(const std::string& name) {
  Stmt body = stages_.empty() ? loop::Evaluate::make(index(0)) : loop::Seq::make(stages_);
  for (auto it = temporaries_.rbegin(); it != temporaries_.rend(); ++it) {
    body = loop::Allocate::make(*it, body);
  }
  return loop::PrimFunc{name, params_, body};
}

}  // namespace minic
