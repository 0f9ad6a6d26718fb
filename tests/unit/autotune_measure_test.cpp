// Tests of measuring candidates in child processes: a GEMM is timed (positive times, the
// median among them) with its arguments evicted from the caches before every call, or not
// when asked for warm caches; the ways a candidate fails -- running too long, crashing,
// being refused by the back end -- come back as errors while the candidates around them
// are still measured, in order, whether or not they were compiled in parallel children
// first. Course module 5.
#include "minic/autotune/measure.h"

#include "minic/codegen/llvm.h"
#include "schedule_kernels.h"
#include "minic/ir/loop/parser.h"
#include "minic/runtime/thread_pool.h"
#include "minic/schedule/rules.h"
#include "minic/support/error.h"

#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cerrno>

namespace minic::autotune {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

const Target& host() {
  static const Target target = codegen::host_target();
  return target;
}

loop::PrimFunc parse_func(const std::string& text) {
  return loop::parse_loop_module(text, "<test>").functions.at(0);
}

// Runs far longer than any time limit of these tests (10^12 dependent float operations).
const char* const kSpinKernel = R"(func @spin(A: f32[1]) {
  for i in 0..1000000 {
    for j in 0..1000000 {
      A[0] = A[0] * 0.5 + 1.0
    }
  }
}
)";

// Reads 4 TiB past the start of a 4-element buffer.
const char* const kWildLoadKernel = R"(func @wild(A: f32[4], B: f32[2]) {
  for i in 0..2 {
    B[i] = A[i * 1099511627776]
  }
}
)";

// A GPU kernel: the CPU back end refuses thread-bound loops.
const char* const kGpuKernel = R"(func @on_gpu(A: f32[32]) {
  for tx in 0..32 bind(threadIdx.x) {
    A[tx] = 1.0
  }
}
)";

// The bytes of kGemmKernel's arguments A, B and C, which flush_cache evicts before every
// timed call (only x86-64 has the flush instruction).
#if defined(__x86_64__)
constexpr int64_t kGemmArgumentBytes = (64 * 32 + 32 * 48 + 64 * 48) * 4;
#else
constexpr int64_t kGemmArgumentBytes = 0;
#endif

MeasureOptions quick_options() {
  MeasureOptions options;
  options.warmup = 1;
  options.repeats = 3;
  options.min_repeat_ms = 1;
  options.timeout_s = 30;
  return options;
}

void check_timed(const MeasureResult& result, int repeats) {
  INFO(result.error);
  REQUIRE(result.ok);
  CHECK(result.error.empty());
  REQUIRE(static_cast<int>(result.times_us.size()) == repeats);
  for (double time_us : result.times_us) CHECK(time_us > 0);
  auto [fastest, slowest] = std::minmax_element(result.times_us.begin(), result.times_us.end());
  CHECK(result.median_us >= *fastest);
  CHECK(result.median_us <= *slowest);
}

TEST_CASE("measure times a GEMM, as lowered and as scheduled", "[autotune_measure]") {
  loop::PrimFunc gemm = parse_func(schedule::test::kGemmKernel);
  loop::PrimFunc scheduled = schedule::default_cpu_schedule(gemm, host());
  MeasureOptions options = quick_options();
  std::vector<MeasureResult> results = measure({gemm, scheduled}, host(), options);
  REQUIRE(results.size() == 2);
  check_timed(results[0], options.repeats);
  check_timed(results[1], options.repeats);
  // Cold caches (the default): every argument evicted before every call.
  CHECK(results[0].flushed_bytes == kGemmArgumentBytes);
  CHECK(results[1].flushed_bytes == kGemmArgumentBytes);
}

TEST_CASE("with warm caches measure evicts nothing before its calls", "[autotune_measure]") {
  loop::PrimFunc gemm = parse_func(schedule::test::kGemmKernel);
  MeasureOptions options = quick_options();
  options.flush_cache = false;
  std::vector<MeasureResult> results = measure({gemm}, host(), options);
  REQUIRE(results.size() == 1);
  check_timed(results[0], options.repeats);
  CHECK(results[0].flushed_bytes == 0);
}

TEST_CASE("a candidate slower than give_up_us is timed once", "[autotune_measure]") {
  loop::PrimFunc gemm = parse_func(schedule::test::kGemmKernel);
  MeasureOptions options = quick_options();
  options.give_up_us = 1e-3;  // every call of a 64x48x32 GEMM takes longer
  std::vector<MeasureResult> results = measure({gemm}, host(), options);
  REQUIRE(results.size() == 1);
  check_timed(results[0], 1);
  CHECK(results[0].flushed_bytes == kGemmArgumentBytes);  // before its one call too
}

TEST_CASE("measure runs a parallel kernel on its own pool, and the parent's pool still works",
          "[autotune_measure]") {
  // The parent's pool, installed on the measuring thread, has worker threads, which a
  // forked child does not have: the child must make its own pool (of another size here)
  // rather than join or wait on those.
  runtime::ThreadPool parent_pool(3);
  runtime::ThreadPoolScope use(parent_pool);
  loop::PrimFunc scheduled =
      schedule::default_cpu_schedule(parse_func(schedule::test::kGemmKernel), host());
  MeasureOptions options = quick_options();
  options.threads = 2;
  options.timeout_s = 20;
  std::vector<MeasureResult> results = measure({scheduled}, host(), options);
  REQUIRE(results.size() == 1);
  check_timed(results[0], options.repeats);

  std::atomic<int64_t> sum{0};
  std::atomic<int> chunks{0};
  runtime::current_thread_pool()->parallel_for(100, [&](int64_t begin, int64_t end) {
    ++chunks;
    for (int64_t i = begin; i < end; ++i) sum += i;
  });
  CHECK(sum == 4950);
  CHECK(chunks == 3);  // one chunk per thread of the parent's pool
  CHECK(runtime::current_thread_pool() == &parent_pool);
}

TEST_CASE("a candidate that runs too long is stopped and reported as timed out",
          "[autotune_measure]") {
  // The spin would run for hours: measure returns because it killed the child.
  MeasureOptions options = quick_options();
  options.timeout_s = 0.5;
  std::vector<MeasureResult> results = measure({parse_func(kSpinKernel)}, host(), options);
  REQUIRE(results.size() == 1);
  CHECK_FALSE(results[0].ok);
  CHECK(results[0].error == "timed out after 0.5 s");
  CHECK(results[0].times_us.empty());
  // The child is gone, reaped: this process has no child left, running or a zombie.
  errno = 0;
  pid_t child = ::waitpid(-1, nullptr, WNOHANG);
  int reason = errno;
  CHECK(child == -1);
  CHECK(reason == ECHILD);
}

TEST_CASE("a candidate that crashes is reported with its signal", "[autotune_measure]") {
  std::vector<MeasureResult> results =
      measure({parse_func(kWildLoadKernel)}, host(), quick_options());
  REQUIRE(results.size() == 1);
  CHECK_FALSE(results[0].ok);
  CHECK_THAT(results[0].error, StartsWith("crashed: signal "));
  CHECK_THAT(results[0].error, Contains("(SIG"));
  CHECK(results[0].times_us.empty());
}

TEST_CASE("a candidate the back end refuses reports the compile error", "[autotune_measure]") {
  std::vector<MeasureResult> results = measure({parse_func(kGpuKernel)}, host(), quick_options());
  REQUIRE(results.size() == 1);
  CHECK_FALSE(results[0].ok);
  CHECK_THAT(results[0].error, Contains("on_gpu"));
  CHECK_THAT(results[0].error, Contains("threadIdx.x"));
  CHECK(results[0].times_us.empty());
}

TEST_CASE("results come back in the order of the candidates", "[autotune_measure]") {
  loop::PrimFunc gemm = parse_func(schedule::test::kGemmKernel);
  MeasureOptions options = quick_options();
  std::vector<MeasureResult> results =
      measure({parse_func(kGpuKernel), gemm, parse_func(kWildLoadKernel), gemm}, host(),
              options);
  REQUIRE(results.size() == 4);
  CHECK_THAT(results[0].error, Contains("on_gpu"));
  check_timed(results[1], options.repeats);
  CHECK_THAT(results[2].error, StartsWith("crashed: signal "));
  check_timed(results[3], options.repeats);
}

TEST_CASE("compiling the candidates in parallel first changes no result and leaves no child",
          "[autotune_measure]") {
  loop::PrimFunc gemm = parse_func(schedule::test::kGemmKernel);
  for (int jobs : {1, 2, 3}) {
    INFO("compile_jobs " << jobs);
    MeasureOptions options = quick_options();
    options.compile_jobs = jobs;
    options.timeout_s = 3;
    std::vector<MeasureResult> results =
        measure({gemm, parse_func(kGpuKernel), parse_func(kWildLoadKernel), gemm,
                 parse_func(kSpinKernel)},
                host(), options);
    REQUIRE(results.size() == 5);
    check_timed(results[0], options.repeats);
    CHECK_THAT(results[1].error, Contains("on_gpu"));
    CHECK_THAT(results[2].error, StartsWith("crashed: signal "));
    check_timed(results[3], options.repeats);
    CHECK(results[4].error == "timed out after 3 s");
    errno = 0;
    pid_t child = ::waitpid(-1, nullptr, WNOHANG);
    int reason = errno;
    CHECK(child == -1);
    CHECK(reason == ECHILD);
  }
}

TEST_CASE("measure rejects options that cannot time anything", "[autotune_measure]") {
  loop::PrimFunc gemm = parse_func(schedule::test::kGemmKernel);
  MeasureOptions no_repeats = quick_options();
  no_repeats.repeats = 0;
  CHECK_THROWS_WITH(measure({gemm}, host(), no_repeats), Contains("repeats 0"));
  MeasureOptions no_time = quick_options();
  no_time.timeout_s = 0;
  CHECK_THROWS_WITH(measure({gemm}, host(), no_time), Contains("timeout_s 0"));
  MeasureOptions no_jobs = quick_options();
  no_jobs.compile_jobs = -1;
  CHECK_THROWS_WITH(measure({gemm}, host(), no_jobs), Contains("compile_jobs -1"));
}

TEST_CASE("measure refuses a target whose code cannot run here, before timing anything",
          "[autotune_measure]") {
  loop::PrimFunc gemm = parse_func(schedule::test::kGemmKernel);
  CHECK_THROWS_WITH(measure({gemm}, cuda_target("sm_90a"), quick_options()),
                    Contains("target cuda -arch=sm_90a: the CUDA back end is not built yet"));
  // The host with one of the features it reports absent turned on.
  CpuTarget other = host().cpu();
  auto absent = std::find_if(other.features.begin(), other.features.end(),
                             [](const std::string& feature) { return feature[0] == '-'; });
  REQUIRE(absent != other.features.end());
  std::string feature = absent->substr(1);
  *absent = "+" + feature;
  CHECK_THROWS_WITH(measure({gemm}, Target(other), quick_options()),
                    Contains("lacks CPU features its code needs: " + feature));
}

}  // namespace
}  // namespace minic::autotune
