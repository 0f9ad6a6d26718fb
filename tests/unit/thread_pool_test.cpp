// Unit tests for the runtime's thread pool: every index runs exactly once whatever the
// thread count, nested parallel_for runs serially, exceptions reach the caller, and the C
// entry point compiled code calls. Course module 4.
#include "minic/runtime/thread_pool.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <vector>

using namespace minic::runtime;

TEST_CASE("parallel_for runs every index exactly once", "[llvm][thread_pool]") {
  for (int threads : {1, 2, 4, 7}) {
    ThreadPool pool(threads);
    CHECK(pool.num_threads() == threads);
    for (int64_t n : {0, 1, 3, 4, 100, 1001}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      for (int round = 0; round < 3; ++round) {
        pool.parallel_for(n, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) hits[i]++;
        });
      }
      for (int64_t i = 0; i < n; ++i) {
        INFO(threads << " threads, n = " << n << ", index " << i);
        CHECK(hits[i] == 3);
      }
    }
  }
}

TEST_CASE("a parallel_for inside a chunk runs serially in that thread", "[llvm][thread_pool]") {
  ThreadPool pool(4);
  std::atomic<int64_t> total{0};
  std::atomic<int> inner_calls{0};
  pool.parallel_for(8, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      pool.parallel_for(10, [&](int64_t inner_begin, int64_t inner_end) {
        ++inner_calls;
        total += inner_end - inner_begin;
      });
    }
  });
  CHECK(total == 80);
  CHECK(inner_calls == 8);  // one whole range a call: serial
}

TEST_CASE("an exception in a chunk reaches the caller of parallel_for", "[llvm][thread_pool]") {
  ThreadPool pool(3);
  CHECK_THROWS_WITH(pool.parallel_for(9,
                                      [](int64_t begin, int64_t) {
                                        if (begin == 0) throw std::runtime_error("chunk 0");
                                      }),
                    "chunk 0");
  std::atomic<int64_t> after{0};
  pool.parallel_for(9, [&](int64_t begin, int64_t end) { after += end - begin; });
  CHECK(after == 9);  // the pool still works
}

TEST_CASE("minic_parallel_for runs a C callback over the range on the global pool",
          "[llvm][thread_pool]") {
  set_global_thread_count(3);
  CHECK(global_thread_pool().num_threads() == 3);
  std::vector<std::atomic<int>> hits(50);
  auto callback = [](void* closure, int64_t begin, int64_t end) {
    auto* counts = static_cast<std::vector<std::atomic<int>>*>(closure);
    for (int64_t i = begin; i < end; ++i) (*counts)[i]++;
  };
  minic_parallel_for(callback, &hits, 50);
  for (auto& hit : hits) CHECK(hit == 1);
  set_global_thread_count(0);
}
