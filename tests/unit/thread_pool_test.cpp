// Unit tests for the runtime's thread pool: every index runs exactly once whatever the
// thread count, nested parallel_for runs serially, exceptions reach the caller, and the C
// entry point compiled code calls runs on the pool installed on its thread. Course
// module 4.
#include "minic/runtime/thread_pool.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <thread>
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

// The closure of count_chunks: how often it was called, and how often each index ran.
struct ChunkCounts {
  std::atomic<int> chunks{0};
  std::vector<std::atomic<int>> hits;
  explicit ChunkCounts(size_t n) : hits(n) {}
};

void count_chunks(void* closure, int64_t begin, int64_t end) {
  auto* counts = static_cast<ChunkCounts*>(closure);
  ++counts->chunks;
  for (int64_t i = begin; i < end; ++i) counts->hits[i]++;
}

TEST_CASE("minic_parallel_for runs a C callback on the pool installed on this thread",
          "[llvm][thread_pool]") {
  ThreadPool pool(3);
  {
    ThreadPoolScope use(pool);
    CHECK(current_thread_pool() == &pool);
    ChunkCounts counts(50);
    minic_parallel_for(count_chunks, &counts, 50);
    CHECK(counts.chunks == 3);  // one chunk per thread of the pool
    for (auto& hit : counts.hits) CHECK(hit == 1);
  }
  // The scope is left: no pool, and the whole range runs as one call on this thread.
  CHECK(current_thread_pool() == nullptr);
  ChunkCounts counts(50);
  minic_parallel_for(count_chunks, &counts, 50);
  CHECK(counts.chunks == 1);
  for (auto& hit : counts.hits) CHECK(hit == 1);
}

TEST_CASE("a ThreadPoolScope restores the pool installed before it, and is per thread",
          "[llvm][thread_pool]") {
  ThreadPool outer(2);
  ThreadPool inner(4);
  ThreadPoolScope use_outer(outer);
  {
    ThreadPoolScope use_inner(inner);
    CHECK(current_thread_pool() == &inner);
    ChunkCounts counts(40);
    minic_parallel_for(count_chunks, &counts, 40);
    CHECK(counts.chunks == 4);
  }
  CHECK(current_thread_pool() == &outer);
  ChunkCounts counts(40);
  minic_parallel_for(count_chunks, &counts, 40);
  CHECK(counts.chunks == 2);
  // Another thread has none of this thread's pools.
  ThreadPool* seen = &outer;
  std::thread other([&] { seen = current_thread_pool(); });
  other.join();
  CHECK(seen == nullptr);
}
