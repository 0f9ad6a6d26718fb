// Measuring candidate schedules, each in a child process (include/minic/autotune/measure.h).
// Course module 5.
//
// Why a child process: a candidate is code nobody has run yet. A schedule the search made
// may index past a buffer (a bug in a primitive) or take minutes, and the tuner must go on
// either way. So each candidate is compiled and timed in a process of its own:
//
//   1. the parent makes a pipe and forks;
//   2. the child silences its stdout and stderr, restores the default action of the crash
//      signals (a test framework's handlers would print in the child), starts a thread
//      pool of its own, runs the loop pipeline, compiles with LLVM, times the kernel (each
//      call after evicting its arguments from the caches, unless told otherwise) and
//      writes one report to the pipe: "ok FLUSHED T1 T2 ..." (the bytes flushed before
//      each call, then microseconds per call) or "error MESSAGE" (the compiler refused the
//      candidate), then _exit()s;
//   3. the parent reads the pipe with poll() until end of file or the time limit; past the
//      limit it kills the child (SIGKILL). It always reaps the child (waitpid), so no
//      zombie stays, and turns a death by signal into "crashed: signal 11 (SIGSEGV)".
//
// Before that, when compile_jobs allows more than one child at a time, every candidate of
// the call is compiled once in a child of its own, that many at a time (precompile): the
// child runs the loop pipeline and LLVM, which leaves the object code in the compiled-code
// cache on disk, and exits. The timing child's compile then reads the cache, so compiling
// runs on every core while the timing still has the machine to itself. A compiling
// child reports nothing: whatever went wrong, the timing child meets again and reports.
//
// The child leaves with _exit, not exit: exit would run the static destructors of a copy
// of the parent's state and flush stdio buffers the parent also holds, printing their
// contents twice.
//
// Chapter: docs/module5-autotuning.md#6-measurement
#include "minic/autotune/measure.h"

#include "minic/codegen/llvm.h"
#include "minic/tensor/tensor.h"
#include "minic/passes/pass_manager.h"
#include "minic/runtime/thread_pool.h"
#include "minic/support/error.h"

#include <fmt/format.h>

#include <fcntl.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <thread>

namespace minic::autotune {
namespace {

using Clock = std::chrono::steady_clock;

// Every candidate gets the same inputs: the seed of their random values.
constexpr uint64_t kInputSeed = 0;
constexpr size_t kAlignment = 64;
// With flushing, a run has at least this many calls (or as many as would last
// min_repeat_ms without flushing, when that is fewer).
constexpr int64_t kMinFlushedCalls = 4;

// --- the child ----------------------------------------------------------------------------

struct FreeDeleter {
  void operator()(void* pointer) const { std::free(pointer); }
};
using AlignedBytes = std::unique_ptr<std::byte, FreeDeleter>;

// The elements a buffer's storage spans: the farthest offset its strides reach, plus one.
int64_t storage_elements(const loop::BufferNode& buffer) {
  int64_t last = 0;
  for (size_t axis = 0; axis < buffer.shape.size(); ++axis) {
    if (buffer.shape[axis] == 0) return 0;
    last += (buffer.shape[axis] - 1) * buffer.strides[axis];
  }
  return last + 1;
}

// A parameter's memory, 64-byte aligned (so that timings do not depend on where malloc
// put it): floats uniform in [-1, 1], everything else zero. Zero keeps index buffers such
// as Gather's indices in range.
AlignedBytes make_argument(const loop::BufferNode& buffer, std::mt19937_64& random) {
  int64_t elements = storage_elements(buffer);
  size_t bytes = static_cast<size_t>(elements * dtype_size(buffer.dtype));
  size_t padded = std::max(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  AlignedBytes memory(static_cast<std::byte*>(std::aligned_alloc(kAlignment, padded)));
  if (!memory) fail("parameter {}: cannot allocate {} bytes", buffer.name, padded);
  std::memset(memory.get(), 0, padded);
  if (is_float(buffer.dtype) && elements > 0) {
    Tensor values(DType::f32, {elements});
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (float& value : values.values<float>()) value = uniform(random);
    Tensor converted = values.cast(buffer.dtype);
    std::memcpy(memory.get(), converted.bytes().data(), converted.bytes().size());
  }
  return memory;
}

double microseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// The bytes of a parameter's storage.
size_t storage_bytes(const loop::BufferNode& buffer) {
  return static_cast<size_t>(storage_elements(buffer) * dtype_size(buffer.dtype));
}

// Evicts every cache line of `memory` from every level of the CPU's caches, and waits
// until that is done: the next call of the kernel reads its arguments from memory.
// Returns the bytes flushed (on CPUs other than x86-64 nothing is flushed: 0).
int64_t flush_from_caches(const std::vector<std::pair<const std::byte*, size_t>>& memory) {
  int64_t flushed = 0;
#if defined(__x86_64__)
  constexpr size_t kCacheLine = 64;
  for (const auto& [data, bytes] : memory) {
    for (size_t offset = 0; offset < bytes; offset += kCacheLine) _mm_clflush(data + offset);
    flushed += static_cast<int64_t>(bytes);
  }
  _mm_mfence();
#endif
  return flushed;
}

// Steps 1-2 of measure.h for one candidate: the loop pipeline, then LLVM (through the
// compiled-code cache) with compile_model's options: O3, no fast-math, one element's
// alignment assumed.
std::unique_ptr<codegen::CompiledModule> compile_candidate(const loop::PrimFunc& candidate,
                                                           const Target& target) {
  loop::LoopModule module{{candidate}};
  run_passes(module, loop::default_loop_pipeline());
  codegen::LlvmOptions llvm_options;
  llvm_options.parallel_for = &minic_parallel_for;
  llvm_options.target = target;
  llvm_options.compile_threads = 1;  // one function
  return codegen::compile_llvm(module, llvm_options);
}

// Steps 1-3 of measure.h for one candidate; returns the report for the pipe.
std::string time_candidate(const loop::PrimFunc& candidate, const Target& target,
                           const MeasureOptions& options) {
  std::unique_ptr<codegen::CompiledModule> code = compile_candidate(candidate, target);
  codegen::CompiledModule::KernelFn kernel = code->find(candidate.name);

  std::mt19937_64 random(kInputSeed);
  std::vector<AlignedBytes> arguments;
  std::vector<void*> pointers;
  std::vector<std::pair<const std::byte*, size_t>> memory;
  for (const loop::Buffer& param : candidate.params) {
    arguments.push_back(make_argument(*param, random));
    pointers.push_back(arguments.back().get());
    memory.emplace_back(arguments.back().get(), storage_bytes(*param));
  }
  // One call, timed on its own, after the caches were emptied of the arguments when
  // flush_cache asks for it. `timed_calls` and `flushed_bytes` count every timed call
  // and every byte flushed before one; `flush_us` is the time the last flush took.
  int64_t timed_calls = 0;
  int64_t flushed_bytes = 0;
  double flush_us = 0;
  auto timed_call = [&] {
    if (options.flush_cache) {
      auto flush_start = Clock::now();
      flushed_bytes += flush_from_caches(memory);
      flush_us = microseconds_since(flush_start);
    }
    ++timed_calls;
    auto start = Clock::now();
    kernel(pointers.data());
    return microseconds_since(start);
  };

  for (int i = 0; i < options.warmup; ++i) kernel(pointers.data());
  // One call, timed, decides how many calls a run needs to last min_repeat_ms. The flush
  // before each call counts in that time: writing megabytes of arguments back to memory
  // can take far longer than a small kernel, and a run of such calls would spend its time
  // flushing. Each such call is timed alone, so fewer calls lose no timer precision; a few
  // per run (kMinFlushedCalls) keep one slow call from deciding the run.
  double call_us = std::max(timed_call(), 1e-3);
  if (options.give_up_us > 0 && call_us > options.give_up_us) {
    return fmt::format("ok {} {:.17g}", flushed_bytes, call_us);
  }
  auto calls_to_last = [&](double us_per_call) {
    return static_cast<int64_t>(std::ceil(options.min_repeat_ms * 1000.0 / us_per_call));
  };
  int64_t calls = std::max<int64_t>(1, calls_to_last(call_us));
  if (options.flush_cache) {
    calls = std::min(calls, std::max(calls_to_last(call_us + flush_us), kMinFlushedCalls));
  }

  std::string times;
  for (int repeat = 0; repeat < options.repeats; ++repeat) {
    double total_us = 0;
    if (options.flush_cache) {
      for (int64_t call = 0; call < calls; ++call) total_us += timed_call();
    } else {
      auto start = Clock::now();
      for (int64_t call = 0; call < calls; ++call) kernel(pointers.data());
      total_us = microseconds_since(start);
      timed_calls += calls;
    }
    times += fmt::format(" {:.17g}", total_us / static_cast<double>(calls));
  }
  return fmt::format("ok {}{}", flushed_bytes / timed_calls, times);
}

// Writes all of `text`, retrying short writes; false if the pipe is gone.
bool write_all(int fd, const std::string& text) {
  size_t written = 0;
  while (written < text.size()) {
    ssize_t count = ::write(fd, text.data() + written, text.size() - written);
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) return false;
    written += static_cast<size_t>(count);
  }
  return true;
}

// A child's first act: the crash signals' default actions back, stdout and stderr silenced.
void quiet_child() {
  for (int signal_number : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGPIPE}) {
    ::signal(signal_number, SIG_DFL);
  }
  int null_fd = ::open("/dev/null", O_WRONLY);
  if (null_fd >= 0) {
    ::dup2(null_fd, STDOUT_FILENO);
    ::dup2(null_fd, STDERR_FILENO);
    ::close(null_fd);
  }
}

// Step 2 of the file comment: everything the child does. Never returns.
[[noreturn]] void child_main(const loop::PrimFunc& candidate, const Target& target,
                             const MeasureOptions& options,
                             int report_fd) {
  quiet_child();
  int status = 0;
  std::string report;
  try {
    // A pool of the child's own: fork copies only the calling thread, so the pools of the
    // parent (their workers) do not exist here, and none of them is touched.
    runtime::ThreadPool pool(options.threads);
    runtime::ThreadPoolScope use(pool);
    report = time_candidate(candidate, target, options);
  } catch (const std::exception& error) {
    report = std::string("error ") + error.what();
    status = 1;
  }
  write_all(report_fd, report);
  ::close(report_fd);
  ::_exit(status);
}

// --- the parent ---------------------------------------------------------------------------

std::string signal_name(int signal_number) {
  switch (signal_number) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGPIPE: return "SIGPIPE";
    case SIGTRAP: return "SIGTRAP";
    default: return "";
  }
}

// The child's report, read back: "ok FLUSHED T1 T2 ..." or "error MESSAGE".
MeasureResult parse_report(const std::string& report, int repeats) {
  MeasureResult result;
  if (report.starts_with("error ")) {
    result.error = report.substr(6);
    return result;
  }
  std::istringstream words(report);
  std::string word;
  words >> word >> result.flushed_bytes;
  for (double time_us; words >> time_us;) result.times_us.push_back(time_us);
  // One time only: the child gave up on a slow candidate (MeasureOptions::give_up_us).
  int count = static_cast<int>(result.times_us.size());
  if (word != "ok" || (count != repeats && count != 1)) {
    result.times_us.clear();
    result.flushed_bytes = 0;
    result.error = "the measuring process sent no result";
    return result;
  }
  result.ok = true;
  result.median_us = median_of(result.times_us);
  return result;
}

// Waits for the child's report until `deadline`; false if the deadline passed first.
bool read_report(int fd, Clock::time_point deadline, std::string& report) {
  char chunk[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd request{fd, POLLIN, 0};
    int ready = ::poll(&request, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) fail("measure: poll failed: {}", std::strerror(errno));
    if (ready == 0) continue;  // the loop checks the deadline
    ssize_t count = ::read(fd, chunk, sizeof chunk);
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) return true;  // end of file: the child has finished or died
    report.append(chunk, static_cast<size_t>(count));
  }
}

int wait_for(pid_t child) {
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

Clock::time_point deadline_after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// A compiling child of precompile, and when it must be done.
struct Compiling {
  pid_t pid = 0;
  Clock::time_point deadline;
};

// Waits until one child of `running` has exited, or kills one that is past its deadline,
// and removes it.
void reap_one(std::vector<Compiling>& running) {
  for (;;) {
    for (auto it = running.begin(); it != running.end(); ++it) {
      int status = 0;
      pid_t done = ::waitpid(it->pid, &status, WNOHANG);
      if (done < 0 && errno == EINTR) continue;
      if (done == 0 && Clock::now() < it->deadline) continue;
      if (done == 0) {
        ::kill(it->pid, SIGKILL);
        wait_for(it->pid);
      }
      running.erase(it);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// The first phase of the file comment: every candidate compiled into the cache, `jobs`
// children at a time.
void precompile(const std::vector<loop::PrimFunc>& candidates, const Target& target,
                const MeasureOptions& options, int jobs) {
  std::vector<Compiling> running;
  for (const loop::PrimFunc& candidate : candidates) {
    while (static_cast<int>(running.size()) >= jobs) reap_one(running);
    pid_t child = ::fork();
    if (child < 0) break;  // no more processes: the timing children compile the rest
    if (child == 0) {
      quiet_child();
      try {
        compile_candidate(candidate, target);
      } catch (const std::exception&) {
        // The timing child meets the same error and reports it.
      }
      ::_exit(0);
    }
    running.push_back({child, deadline_after(options.timeout_s)});
  }
  while (!running.empty()) reap_one(running);
}

MeasureResult measure_one(const loop::PrimFunc& candidate, const Target& target,
                          const MeasureOptions& options) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) fail("measure: pipe failed: {}", std::strerror(errno));
  auto deadline = deadline_after(options.timeout_s);
  pid_t child = ::fork();
  if (child < 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    fail("measure: fork failed: {}", std::strerror(errno));
  }
  if (child == 0) {
    ::close(pipe_fds[0]);
    child_main(candidate, target, options, pipe_fds[1]);
  }
  ::close(pipe_fds[1]);
  std::string report;
  bool finished = read_report(pipe_fds[0], deadline, report);
  ::close(pipe_fds[0]);
  if (!finished) ::kill(child, SIGKILL);
  int status = wait_for(child);

  MeasureResult result;
  if (!finished) {
    result.error = fmt::format("timed out after {:g} s", options.timeout_s);
  } else if (WIFSIGNALED(status)) {
    int signal_number = WTERMSIG(status);
    std::string name = signal_name(signal_number);
    result.error = name.empty() ? fmt::format("crashed: signal {}", signal_number)
                                : fmt::format("crashed: signal {} ({})", signal_number, name);
  } else if (!report.empty()) {
    result = parse_report(report, options.repeats);
  } else {
    result.error = fmt::format("the measuring process exited with status {} and no result",
                               WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  return result;
}

void check_options(const MeasureOptions& options) {
  if (options.warmup < 0) fail("measure: warmup {} must be 0 or more", options.warmup);
  if (options.repeats < 1) fail("measure: repeats {} must be 1 or more", options.repeats);
  if (options.min_repeat_ms < 0) {
    fail("measure: min_repeat_ms {} must be 0 or more", options.min_repeat_ms);
  }
  if (!(options.timeout_s > 0)) fail("measure: timeout_s {} must be positive", options.timeout_s);
  if (options.threads < 0) {
    fail("measure: threads {} must be 0 (every core) or more", options.threads);
  }
  if (options.compile_jobs < 0) {
    fail("measure: compile_jobs {} must be 0 (one per core) or more", options.compile_jobs);
  }
}

}  // namespace

double median_of(std::vector<double> values) {
  MINIC_CHECK(!values.empty());
  std::sort(values.begin(), values.end());
  size_t middle = values.size() / 2;
  if (values.size() % 2 == 1) return values[middle];
  return (values[middle - 1] + values[middle]) / 2;
}

std::vector<MeasureResult> measure(const std::vector<loop::PrimFunc>& candidates,
                                   const Target& target, const MeasureOptions& options) {
  check_options(options);
  codegen::check_runs_here(target);
  int jobs = options.compile_jobs > 0 ? options.compile_jobs : host_resources().cores;
  if (jobs > 1 && candidates.size() > 1) precompile(candidates, target, options, jobs);
  std::vector<MeasureResult> results;
  for (const loop::PrimFunc& candidate : candidates) {
    results.push_back(measure_one(candidate, target, options));
  }
  return results;
}

}  // namespace minic::autotune
