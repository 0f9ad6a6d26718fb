// The static memory plan: where each intermediate tensor of a compiled model lives.
//
// Course module 4 (memory planning). Every intermediate value of a model is written by
// one kernel and read by later ones; after its last reader it is dead, and its memory can
// hold a value computed later. Since minic compiles for static shapes, the whole plan is
// made before the model runs: one arena, and an offset into it for every value. Values
// whose lifetimes overlap never share bytes; the others may.
//
// The planner is the greedy-by-size heuristic used by TensorFlow Lite's arena planner:
// place the largest buffers first, each at the lowest offset where it does not overlap a
// placed buffer that is live at the same time. It is not optimal (the problem is
// NP-hard), but on CNNs it comes close to the lower bound: the largest total size live
// at any one step, which the plan reports beside the arena size.
//
//   step:      0    1    2    3
//   a (4 KiB)  [====]                  a and c never live together:
//   b (2 KiB)  [=========]             c reuses a's bytes
//   c (4 KiB)            [=========]
//   arena: 6 KiB (without reuse: 10 KiB)
//
// Chapter: docs/module4-schedules.md#5-memory-planning
#pragma once

#include <cstdint>
#include <vector>

namespace minic {

// One buffer to place: its size and the steps (kernel indices) from its first write to
// its last read, inclusive.
struct BufferLifetime {
  int64_t size_bytes = 0;
  int first_step = 0;
  int last_step = 0;
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // one per request, in request order, aligned
  int64_t arena_bytes = 0;       // the arena the offsets index into
  int64_t unshared_bytes = 0;    // the sum of all (aligned) sizes: memory without reuse
  int64_t lower_bound_bytes = 0; // the most bytes live at any one step
};

inline constexpr int64_t kBufferAlignment = 64;  // a cache line; enough for AVX-512 loads

// Places every buffer; the result satisfies: two buffers whose step ranges overlap
// occupy disjoint byte ranges, and each offset is a multiple of kBufferAlignment.
MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers);

}  // namespace minic
