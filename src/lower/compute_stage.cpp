// From stages to loop nests: the loop nest of one stage, and the regions a block reads
// and writes.
//
// Course module 3. Invariant: every block emitted here passes loop::verify_func, and its
// reads/writes regions cover every element it loads or stores, in its own iteration
// variables. Algorithm for one stage of shape [d0, d1] with a reduction over [e0]:
//   1. one loop per axis (i0, i1), then one per reduction axis (k0), outermost first;
//   2. one block, its iteration variables the stage's own (v0, v1 spatial, r0 reduce),
//      each bound to its loop; the stage's value, written in v0, v1, r0, is its body;
//   3. a reduction stores the reducer's identity in `init` and combines in the body;
//   4. regions: per buffer and dimension, the one index every access uses when it is
//      provably inside the buffer, else the whole dimension (loop::declared_regions, the
//      access analysis of include/minic/ir/loop/access.h).
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
//
// Chapter: docs/module3-loop-ir.md#5-lowering-compute-rules
#include "compute_stage.h"

#include "minic/ir/loop/access.h"

namespace minic {

using loop::Buffer;
using loop::Expr;
using loop::Stmt;

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

  // Step 4: the regions (loop::declared_regions).
  loop::DeclaredRegions regions = loop::declared_regions(body, bounds);

  Stmt nest = loop::Block::make({.name = block_name,
                                 .iter_vars = std::move(iter_vars),
                                 .reads = std::move(regions.reads),
                                 .writes = std::move(regions.writes),
                                 .init = init,
                                 .body = body});
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
    nest = loop::For::make(it->first, index(0), index(it->second), loop::ForKind::serial, nest);
  }
  return nest;
}

}  // namespace minic
