// The host/device split: where a GPU-scheduled function's host code ends and its kernels
// begin. Course module 6.
//
// Host code is what the function's body is made of at the top: Seq (one statement after
// another) and Allocate of global buffers (scratch, allocated by the host). Every other
// statement there is one launch: a nest whose outer loops are bound to blockIdx, then
// threadIdx, or a statement that binds no loop, run by one thread. For each launch the
// split reads its grid and thread block (the largest extent bound to each axis, as the
// loop interpreter does), the shared memory it declares, and the buffers it uses.
//
// Chapter: docs/module6-cuda.md#the-hostdevice-split
#pragma once

#include "minic/ir/loop/stmt.h"
#include "minic/target/target.h"

#include <array>
#include <string>
#include <vector>

namespace minic::codegen {

struct LaunchNest {
  loop::Stmt body;                         // the launch's statement, from the host code
  std::array<int64_t, 3> grid = {1, 1, 1};   // blockIdx.x/y/z extents
  std::array<int64_t, 3> block = {1, 1, 1};  // threadIdx.x/y/z extents
  bool binds_threads = false;               // some loop is bound to threadIdx
  int64_t shared_bytes = 0;                 // every shared allocation, 16-byte aligned
  std::vector<int> args;                    // the function's arguments it uses
};

struct HostPlan {
  std::vector<loop::Buffer> scratch;  // global allocations of the host code, in order
  std::vector<LaunchNest> launches;   // in order
};

// Splits `func`. Error naming the function and the reason where its host code is not
// launches (a bound loop under a serial loop of the host code), an extent bound to a GPU
// axis is not a constant, a block has more than 1024 threads, or its shared memory is
// over `target`'s per-block limit.
HostPlan split_host_device(const loop::PrimFunc& func, const Target& target);

// A buffer's bytes in memory (its span times its element size); Error if it does not fit.
int64_t buffer_bytes(const loop::BufferNode& buffer, const std::string& func);

// The bytes a shared buffer takes of its launch's shared memory: buffer_bytes rounded up
// to 16, so that every buffer of a launch starts 16-byte aligned.
int64_t shared_slot_bytes(const loop::BufferNode& buffer, const std::string& func);

}  // namespace minic::codegen
