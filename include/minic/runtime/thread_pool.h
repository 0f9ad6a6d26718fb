// A thread pool for parallel loops: plain std::threads that split a range of iterations.
//
// Course module 4 (multi-threading). A parallel loop `parallel for i in 0..n { body }` is
// compiled into a function body(closure, begin, end) that runs the iterations [begin, end)
// (src/codegen/llvm); the pool runs it on all its threads:
//
//   1. the range [0, n) is cut into as many chunks as the pool has threads (at most n);
//   2. the waiting workers wake up, and they and the calling thread take chunks, one at a
//      time, from a shared counter until none is left;
//   3. the caller returns when every chunk has run.
//
// A model's kernels start one parallel loop after another, each a few hundred
// microseconds long; waking a sleeping thread takes tens of them. So a worker that has
// run a chunk keeps watching for the next loop for kSpinMicroseconds before it sleeps,
// and the caller watches its loop's last chunk end the same way: between kernels no one
// sleeps.
//
// A parallel_for inside a chunk (a nested parallel loop) runs serially in the thread that
// meets it, and so does one started while another thread's parallel_for is running: the
// pool never waits on itself.
//
//   ThreadPool pool(4);
//   pool.parallel_for(1000, [&](int64_t begin, int64_t end) {
//     for (int64_t i = begin; i < end; ++i) out[i] = f(i);
//   });
//
// Chapter: docs/module4-schedules.md#6-the-executor-and-threads
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace minic::runtime {

// How long a thread watches for work before it sleeps (see the top of this file).
inline constexpr int64_t kSpinMicroseconds = 200;

class ThreadPool {
 public:
  using RangeFn = std::function<void(int64_t begin, int64_t end)>;

  // A pool of `threads` threads in all, the caller of parallel_for being one of them (so
  // threads - 1 workers are started). 0 means std::thread::hardware_concurrency().
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs fn over [0, n) in chunks, on every thread of the pool, and returns when all have
  // run. An exception thrown by fn is rethrown here (the first one, after the others end).
  void parallel_for(int64_t n, const RangeFn& fn);

 private:
  struct Job;
  void worker_loop();
  static void run_chunks(Job& job);

  std::vector<std::thread> workers_;
  std::mutex submit_mutex_;  // held by the one parallel_for running on the pool
  std::mutex mutex_;         // guards job_; generation_ and stop_ change under it too
  std::condition_variable work_ready_;
  std::shared_ptr<Job> job_;
  std::atomic<uint64_t> generation_ = 0;  // a new job: workers watch it while they spin
  std::atomic<bool> stop_ = false;
};

// Compiled code reaches a pool through minic_parallel_for (below), a C function without a
// pool argument: it uses the pool installed on the calling thread. The device that runs a
// kernel installs its own pool for the duration of the call (HostDevice::launch,
// device.h), so two models with pools of different sizes run in one process, even at the
// same time on two threads, each on its own pool. With no pool installed (a worker thread
// of a pool, a program that calls a kernel directly) a parallel loop runs serially.
//
//   ThreadPool pool(4);
//   {
//     ThreadPoolScope use(pool);   // this thread's parallel loops run on `pool`
//     kernel(args);
//   }                              // and from here on, on the pool installed before
class ThreadPoolScope {
 public:
  explicit ThreadPoolScope(ThreadPool& pool);
  ~ThreadPoolScope();
  ThreadPoolScope(const ThreadPoolScope&) = delete;
  ThreadPoolScope& operator=(const ThreadPoolScope&) = delete;

 private:
  ThreadPool* previous_;
};

// The pool installed on the calling thread, or null where none is.
ThreadPool* current_thread_pool();

}  // namespace minic::runtime

// The entry point compiled code calls for a parallel loop: runs fn(closure, begin, end)
// over chunks of [0, n) on the calling thread's pool (current_thread_pool), or over the
// whole range on the calling thread where it has none. The LLVM JIT resolves this symbol
// to this function; a kernel library compiled ahead of time, loaded by the minic
// executable, finds it there (the executable exports it).
extern "C" void minic_parallel_for(void (*fn)(void* closure, int64_t begin, int64_t end),
                                   void* closure, int64_t n);
