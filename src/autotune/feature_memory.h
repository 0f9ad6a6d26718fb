// What the features read off the main body's memory accesses: the bytes they touch inside
// each level of its loop nest, and how far each moves per iteration. Internal to
// src/autotune (features.cpp). Course module 5.
//
// For C[i, j] += A[i, k] * B[k, j] under loops i, j, k (extents 64, 64, 64, f32):
//   footprint(accesses, loops, 1)  -- only k varies: C one element, A a row of 64, B a
//                                     column of 64 -> (1 + 64 + 64) * 4 bytes
//   stride_in(B access, loops, k)  -- 64: B moves a row per iteration of k
//
// Chapter: docs/module5-autotuning.md#3-features
#pragma once

#include "minic/ir/loop/stmt.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace minic::autotune {

// A loop around the main body.
struct LoopInfo {
  const loop::Var* var = nullptr;
  int64_t min = 0;
  int64_t extent = 1;
  loop::ForKind kind = loop::ForKind::serial;
};

// An index as base + stride * lane: a ramp's parts, a broadcast's value, a scalar itself;
// nullopt for other vector indices.
struct IndexParts {
  loop::Expr base;
  int64_t stride = 0;
  int lanes = 1;
};

std::optional<IndexParts> index_parts(const loop::Expr& index);

// One access of the main body: a buffer and its indices.
struct Access {
  loop::Buffer buffer;
  const std::vector<loop::Expr>* indices;
};

// The bytes the accesses touch while the innermost `varying` loops run (the others at
// their first iteration): per buffer, the union of the accessed ranges, but no more
// elements than the accesses can reach (a strided access touches few of its range).
double footprint(const std::vector<Access>& accesses, const std::vector<LoopInfo>& loops,
                 size_t varying);

// How far (in elements) an access moves from one iteration of `loop` to the next;
// nullopt if the bounds cannot tell.
std::optional<int64_t> stride_in(const Access& access, const std::vector<LoopInfo>& loops,
                                 const LoopInfo& loop);

}  // namespace minic::autotune
