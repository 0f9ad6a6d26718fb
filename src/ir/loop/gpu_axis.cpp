// gpu_axis: what a thread-bound loop's axis names (see include/minic/ir/loop/gpu_axis.h).
// Course module 3.
//
// Chapter: docs/module3-loop-ir.md#1-expressions-and-statements
#include "minic/ir/loop/gpu_axis.h"

#include <array>
#include <string_view>

namespace minic::loop {

std::optional<GpuAxis> gpu_axis(std::string_view thread_axis) {
  static constexpr std::array<std::string_view, 6> kAxes = {
      "blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z"};
  for (size_t k = 0; k < kAxes.size(); ++k) {
    if (thread_axis == kAxes[k]) return GpuAxis{k < 3, static_cast<int>(k % 3)};
  }
  return std::nullopt;
}

}  // namespace minic::loop
