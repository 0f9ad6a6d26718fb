// The greedy-by-size memory planner. Course module 4.
//
// Algorithm:
//   1. Round every size up to the alignment.
//   2. Visit the buffers from the largest to the smallest (ties: the earlier request
//      first, so the plan is deterministic).
//   3. For each, collect the byte ranges of the already placed buffers whose lifetimes
//      overlap its own, sorted by offset, and take the lowest gap that fits.
//   4. The arena is the highest end of any placed buffer.
//
// Chapter: docs/module4-schedules.md#5-memory-planning
#include "minic/runtime/memory_plan.h"

#include "minic/support/error.h"

#include <algorithm>
#include <numeric>

namespace minic {
namespace {

int64_t align_up(int64_t value) {
  return (value + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
}

bool lifetimes_overlap(const BufferLifetime& a, const BufferLifetime& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

struct Placed {
  int64_t offset;
  int64_t end;
};

}  // namespace

MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers) {
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<int64_t> sizes;
  for (const BufferLifetime& buffer : buffers) {
    MINIC_CHECK(buffer.size_bytes >= 0 && buffer.first_step <= buffer.last_step);
    sizes.push_back(align_up(buffer.size_bytes));
    plan.unshared_bytes += sizes.back();
  }

  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sizes[a] > sizes[b]; });

  std::vector<bool> placed(buffers.size(), false);
  for (size_t index : order) {
    std::vector<Placed> conflicts;
    for (size_t other = 0; other < buffers.size(); ++other) {
      if (placed[other] && lifetimes_overlap(buffers[index], buffers[other])) {
        conflicts.push_back({plan.offsets[other], plan.offsets[other] + sizes[other]});
      }
    }
    std::sort(conflicts.begin(), conflicts.end(),
              [](const Placed& a, const Placed& b) { return a.offset < b.offset; });
    int64_t offset = 0;
    for (const Placed& conflict : conflicts) {
      if (conflict.offset >= offset + sizes[index]) break;  // the gap before it fits
      offset = std::max(offset, conflict.end);
    }
    plan.offsets[index] = offset;
    placed[index] = true;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + sizes[index]);
  }

  // The lower bound: the most bytes live at one step.
  int last = 0;
  for (const BufferLifetime& buffer : buffers) last = std::max(last, buffer.last_step);
  for (int step = 0; step <= last && !buffers.empty(); ++step) {
    int64_t live = 0;
    for (size_t i = 0; i < buffers.size(); ++i) {
      if (buffers[i].first_step <= step && step <= buffers[i].last_step) live += sizes[i];
    }
    plan.lower_bound_bytes = std::max(plan.lower_bound_bytes, live);
  }
  return plan;
}

}  // namespace minic
