// The thread pool of parallel loops (include/minic/runtime/thread_pool.h). Course module 4.
//
// A Job is one parallel_for: its function, its range, a counter of chunks taken and one of
// chunks finished. Workers watch generation_ for kSpinMicroseconds (spinning: another
// kernel's loop usually follows at once), then sleep on work_ready_ until it changes, and
// take a shared_ptr to the current Job under the lock. Holding the Job itself (rather than
// reading fields of the pool) matters: a worker that wakes late may find its job already
// finished and the next one started; it then finds no chunk left in its own Job and goes
// back to sleep, never touching the new one with the old function.
//
// The pool compiled code uses is a thread_local pointer that ThreadPoolScope sets and
// restores: no pool is global, so each device's pool serves only the kernels it runs.
//
// Chapter: docs/module4-schedules.md#6-the-executor-and-threads
#include "minic/runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>

namespace minic::runtime {

namespace {

// True while this thread runs a chunk: a parallel_for called then runs serially.
thread_local bool t_inside_parallel_for = false;

// The pool installed on this thread by a ThreadPoolScope (null: none).
thread_local ThreadPool* t_current_pool = nullptr;

}  // namespace

struct ThreadPool::Job {
  const RangeFn* fn = nullptr;
  int64_t n = 0;
  int64_t chunks = 0;
  std::atomic<int64_t> next_chunk{0};
  std::atomic<int64_t> chunks_done{0};
  std::mutex done_mutex;
  std::condition_variable all_done;
  std::exception_ptr error;  // the first exception a chunk threw (under done_mutex)
};

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  if (threads <= 0) threads = 1;
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::run_chunks(Job& job) {
  bool was_inside = t_inside_parallel_for;
  t_inside_parallel_for = true;
  for (;;) {
    int64_t chunk = job.next_chunk.fetch_add(1);
    if (chunk >= job.chunks) break;
    // Chunk c covers [c * n / chunks, (c + 1) * n / chunks): sizes differ by at most one.
    int64_t begin = chunk * job.n / job.chunks;
    int64_t end = (chunk + 1) * job.n / job.chunks;
    try {
      (*job.fn)(begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> lock(job.done_mutex);
      if (!job.error) job.error = std::current_exception();
    }
    if (job.chunks_done.fetch_add(1) + 1 == job.chunks) {
      std::lock_guard<std::mutex> lock(job.done_mutex);
      job.all_done.notify_all();
    }
  }
  t_inside_parallel_for = was_inside;
}

namespace {

// Waits, spinning, for `done` to hold, at most kSpinMicroseconds; true if it held.
template <typename Condition>
bool spin_until(Condition done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicroseconds);
  for (int i = 0;; ++i) {
    if (done()) return true;
    if (i % 64 == 63 && std::chrono::steady_clock::now() > until) return false;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

}  // namespace

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    spin_until([&] { return stop_ || generation_ != seen; });
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_ready_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
    }
    if (job) run_chunks(*job);
  }
}

void ThreadPool::parallel_for(int64_t n, const RangeFn& fn) {
  if (n <= 0) return;
  std::unique_lock<std::mutex> submit(submit_mutex_, std::defer_lock);
  bool serial = workers_.empty() || n == 1 || t_inside_parallel_for || !submit.try_lock();
  if (serial) {
    fn(0, n);
    return;
  }
  auto job = std::make_shared<Job>();
  job->fn = &fn;
  job->n = n;
  job->chunks = std::min<int64_t>(n, num_threads());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = job;
    ++generation_;
  }
  work_ready_.notify_all();
  run_chunks(*job);
  if (!spin_until([&] { return job->chunks_done.load() == job->chunks; })) {
    std::unique_lock<std::mutex> lock(job->done_mutex);
    job->all_done.wait(lock, [&] { return job->chunks_done.load() == job->chunks; });
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_.reset();
  }
  if (job->error) std::rethrow_exception(job->error);
}

ThreadPoolScope::ThreadPoolScope(ThreadPool& pool) : previous_(t_current_pool) {
  t_current_pool = &pool;
}

ThreadPoolScope::~ThreadPoolScope() { t_current_pool = previous_; }

ThreadPool* current_thread_pool() { return t_current_pool; }

}  // namespace minic::runtime

extern "C" void minic_parallel_for(void (*fn)(void* closure, int64_t begin, int64_t end),
                                   void* closure, int64_t n) {
  minic::runtime::ThreadPool* pool = minic::runtime::current_thread_pool();
  if (!pool) {
    if (n > 0) fn(closure, 0, n);
    return;
  }
  pool->parallel_for(n, [&](int64_t begin, int64_t end) { fn(closure, begin, end); });
}
