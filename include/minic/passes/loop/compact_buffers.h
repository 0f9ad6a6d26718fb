// compact-buffers: shrink an allocation to the part of it one loop iteration uses, and
// allocate it inside that loop.
//
// Course module 4 (memory hierarchy). cache_write and compute_at give a block a staging
// buffer of the whole tensor's shape, allocated around the whole function, although each
// iteration of a tile loop uses only a tile of it. This pass finds the innermost statement
// that holds every access of an allocated buffer, computes the region the accesses cover
// there (a minimum that depends on the loops outside, and a constant extent per
// dimension), and replaces the buffer with one of that extent, indexed relative to the
// minimum. A tile-sized local buffer is what code generation can keep in registers.
//
//   before:  alloc C_local: f32[256,256] local {
//              for i.0 in 0..32 {
//                for i.1 in 0..8 { C_local[i.0 * 8 + i.1, j] = ... }
//                for i.1 in 0..8 { C[i.0 * 8 + i.1, j] = C_local[i.0 * 8 + i.1, j] }
//              }
//            }
//   after:   for i.0 in 0..32 {
//              alloc C_local: f32[8,256] local {
//                for i.1 in 0..8 { C_local[i.1, j] = ... }
//                for i.1 in 0..8 { C[i.0 * 8 + i.1, j] = C_local[i.1, j] }
//              }
//            }
//
// Runs after lower-blocks (a function with blocks is left as it is). A dimension whose
// accesses do not all start at the same place, or whose indices are not increasing in the
// inner loops, keeps its whole extent. Allocations bound to GPU threads are left alone.
//
// Chapter: docs/module4-schedules.md#3-loop-passes
#pragma once

#include "minic/ir/loop/stmt.h"

namespace minic::loop {

PrimFunc compact_buffers(PrimFunc func);

}  // namespace minic::loop
