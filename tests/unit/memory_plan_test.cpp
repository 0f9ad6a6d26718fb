// Tests of the static memory planner: no two live buffers share bytes, offsets are
// aligned, and reuse happens where lifetimes allow. Course module 4.
#include "minic/runtime/memory_plan.h"

#include <catch2/catch.hpp>

#include <random>

namespace minic {
namespace {

// Checks the plan's promise by brute force over every pair.
void check_valid(const std::vector<BufferLifetime>& buffers, const MemoryPlan& plan) {
  REQUIRE(plan.offsets.size() == buffers.size());
  for (size_t a = 0; a < buffers.size(); ++a) {
    CHECK(plan.offsets[a] % kBufferAlignment == 0);
    CHECK(plan.offsets[a] + buffers[a].size_bytes <= plan.arena_bytes);
    for (size_t b = a + 1; b < buffers.size(); ++b) {
      bool live_together = buffers[a].first_step <= buffers[b].last_step &&
                           buffers[b].first_step <= buffers[a].last_step;
      bool share_bytes = plan.offsets[a] < plan.offsets[b] + buffers[b].size_bytes &&
                         plan.offsets[b] < plan.offsets[a] + buffers[a].size_bytes;
      INFO("buffers " << a << " and " << b);
      CHECK_FALSE((live_together && share_bytes && buffers[a].size_bytes > 0 &&
                   buffers[b].size_bytes > 0));
    }
  }
  CHECK(plan.lower_bound_bytes <= plan.arena_bytes);
  CHECK(plan.arena_bytes <= plan.unshared_bytes);
}

}  // namespace

TEST_CASE("a chain of kernels reuses the memory of dead values", "[memory_plan]") {
  // a → b → c → d: each value lives from its writer to its reader.
  std::vector<BufferLifetime> chain = {
      {4096, 0, 1}, {4096, 1, 2}, {4096, 2, 3}, {4096, 3, 4}};
  MemoryPlan plan = plan_memory(chain);
  check_valid(chain, plan);
  CHECK(plan.arena_bytes == 2 * 4096);
  CHECK(plan.unshared_bytes == 4 * 4096);
  CHECK(plan.offsets[0] == plan.offsets[2]);
}

TEST_CASE("sizes are rounded up to the alignment", "[memory_plan]") {
  std::vector<BufferLifetime> buffers = {{1, 0, 0}, {65, 0, 0}, {0, 0, 0}};
  MemoryPlan plan = plan_memory(buffers);
  check_valid(buffers, plan);
  CHECK(plan.arena_bytes == 3 * kBufferAlignment);
}

TEST_CASE("random lifetimes give valid plans near the lower bound", "[memory_plan]") {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> step(0, 30);
  std::uniform_int_distribution<int> length(0, 6);
  std::uniform_int_distribution<int64_t> size(1, 100000);
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<BufferLifetime> buffers;
    for (int i = 0; i < 40; ++i) {
      int first = step(rng);
      buffers.push_back({size(rng), first, first + length(rng)});
    }
    MemoryPlan plan = plan_memory(buffers);
    check_valid(buffers, plan);
    // Greedy by size stays within twice the lower bound on such inputs.
    CHECK(plan.arena_bytes <= 2 * plan.lower_bound_bytes);
  }
}

}  // namespace minic
