// The GPU axes a thread-bound loop can name: blockIdx.x/y/z and threadIdx.x/y/z.
//
// Course module 3. A For of kind thread_binding names its axis as text (stmt.h); the
// verifier, the interpreter, the bind primitive, the loop passes and the CUDA back end all
// read it through gpu_axis, so that one table says what an axis is.
//
// Chapter: docs/module3-loop-ir.md#1-expressions-and-statements
#pragma once

#include <optional>
#include <string_view>

namespace minic::loop {

struct GpuAxis {
  bool block = false;  // blockIdx (a thread block of the grid), else threadIdx
  int dim = 0;         // x: 0, y: 1, z: 2
};

// The axis `thread_axis` names ("blockIdx.y": {true, 1}), or nullopt if it names none.
std::optional<GpuAxis> gpu_axis(std::string_view thread_axis);

inline bool is_block_axis(std::string_view thread_axis) {
  std::optional<GpuAxis> axis = gpu_axis(thread_axis);
  return axis && axis->block;
}
inline bool is_thread_axis(std::string_view thread_axis) {
  std::optional<GpuAxis> axis = gpu_axis(thread_axis);
  return axis && !axis->block;
}

}  // namespace minic::loop
