// The main body's memory: footprints and strides (feature_memory.h). Course module 5.
//
// Both work from interval bounds: each loop variable is given the range of values it takes
// (all its iterations if the loop varies, its first otherwise), and loop::bound_of
// (include/minic/ir/loop/analysis.h) bounds every index.
//
// Chapter: docs/module5-autotuning.md#3-features
#include "feature_memory.h"

#include "minic/ir/loop/analysis.h"

#include <algorithm>
#include <map>
#include <string>

namespace minic::autotune {

std::optional<IndexParts> index_parts(const loop::Expr& index) {
  if (const auto* ramp = index.as<loop::Ramp>()) {
    std::optional<int64_t> stride = loop::as_const_int(ramp->stride);
    if (!stride) return std::nullopt;
    return IndexParts{ramp->base, *stride, ramp->lanes};
  }
  if (const auto* broadcast = index.as<loop::Broadcast>()) {
    return IndexParts{broadcast->value, 0, broadcast->lanes};
  }
  if (index.type().is_vector()) return std::nullopt;
  return IndexParts{index, 0, 1};
}

// The bytes the accesses touch while the innermost `varying` loops run (the others at
// their first iteration): per buffer, the union of the accessed ranges, but no more
// elements than the accesses can reach (a strided access touches few of its range).
double footprint(const std::vector<Access>& accesses, const std::vector<LoopInfo>& loops,
                 size_t varying) {
  loop::VarBounds bounds;
  for (size_t l = 0; l < loops.size(); ++l) {
    bool varies = l + varying >= loops.size();
    int64_t last = varies ? loops[l].min + loops[l].extent - 1 : loops[l].min;
    bounds[loops[l].var] = {loops[l].min, last};
  }
  struct Union {
    std::vector<loop::IntBound> ranges;
    double reachable = 0;
    int element_bytes = 4;
  };
  std::map<std::string, Union> by_buffer;  // by name: deterministic order
  for (const Access& access : accesses) {
    Union& entry = by_buffer[access.buffer->name];
    entry.element_bytes = dtype_size(access.buffer->dtype);
    double reachable = 1;
    for (size_t d = 0; d < access.indices->size(); ++d) {
      std::optional<IndexParts> parts = index_parts((*access.indices)[d]);
      loop::IntBound range = parts ? loop::bound_of(parts->base, bounds) : loop::IntBound{};
      if (!range.is_bounded()) range = {0, access.buffer->shape[d] - 1};  // all of it
      int64_t lanes = parts ? parts->lanes : (*access.indices)[d].type().lanes;
      if (parts) {
        int64_t reach = parts->stride * (parts->lanes - 1);
        range = {range.min + std::min<int64_t>(reach, 0), range.max + std::max<int64_t>(reach, 0)};
      }
      // The iterations of the varying loops the index uses (all of them if it is unknown).
      double iterations = 1;
      for (const LoopInfo& info : loops) {
        bool varies = bounds[info.var].min != bounds[info.var].max;
        bool used = !parts || loop::uses_var(parts->base, info.var);
        if (varies && used) iterations *= static_cast<double>(info.extent);
      }
      double span = static_cast<double>(range.max - range.min + 1);
      reachable *= std::min(span, iterations * static_cast<double>(lanes));
      if (entry.ranges.size() <= d) entry.ranges.push_back(range);
      entry.ranges[d] = {std::min(entry.ranges[d].min, range.min),
                         std::max(entry.ranges[d].max, range.max)};
    }
    entry.reachable += reachable;
  }
  double bytes = 0;
  for (const auto& [name, entry] : by_buffer) {
    double span = 1;
    for (const loop::IntBound& range : entry.ranges) {
      span *= static_cast<double>(range.max - range.min + 1);
    }
    bytes += std::min(span, entry.reachable) * entry.element_bytes;
  }
  return bytes;
}

// How far (in elements) an access moves from one iteration of `loop` to the next;
// nullopt if the bounds cannot tell.
std::optional<int64_t> stride_in(const Access& access, const std::vector<LoopInfo>& loops,
                                 const LoopInfo& loop) {
  loop::VarBounds at;
  for (const LoopInfo& info : loops) at[info.var] = loop::IntBound::single(info.min);
  int64_t stride = 0;
  for (size_t d = 0; d < access.indices->size(); ++d) {
    std::optional<IndexParts> parts = index_parts((*access.indices)[d]);
    if (!parts) return std::nullopt;
    loop::IntBound first = loop::bound_of(parts->base, at);
    at[loop.var] = loop::IntBound::single(loop.min + 1);
    loop::IntBound second = loop::bound_of(parts->base, at);
    at[loop.var] = loop::IntBound::single(loop.min);
    if (!first.is_single() || !second.is_single()) return std::nullopt;
    int64_t dimension_stride = d < access.buffer->strides.size() ? access.buffer->strides[d] : 1;
    stride += (second.min - first.min) * dimension_stride;
  }
  return stride;
}

}  // namespace minic::autotune
