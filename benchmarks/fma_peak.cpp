// Measures this CPU's peak float32 throughput with fused multiply-adds: the roofline
// that `benchmarks/run` draws the GEMM results against. Course module 8.
//
//   g++ -O3 -march=native -pthread fma_peak.cpp -o fma_peak && ./fma_peak THREADS
//
// prints one line of JSON: {"isa": ..., "lanes": ..., "chains": ..., "threads": ...,
// "gflops": ...}.
//
// How: a GEMM's inner loop is a stream of FMAs, so the most it can do is the number of
// FMAs the core retires per second times 2 flops times the vector width. One FMA chain
// (acc = acc * a + b, over and over) is bound by the FMA's latency (about 4 cycles), not
// its throughput (1 or 2 a cycle), so each thread runs kChains independent chains, more
// than latency x throughput, on the widest vectors the compiler was told about
// (-march=native: 512-bit with AVX-512, 256-bit with AVX2+FMA, else scalar). The chains
// converge to b / (1 - a) = 0.1: no overflow and no denormals to slow them down. Each
// thread count runs kTrials short trials; the best is the peak (anything slower was
// interference from other processes, not the CPU's limit). The checksum is printed so the work cannot be
// optimised away.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace {

#if defined(__AVX512F__)
using Vec = __m512;
constexpr int kLanes = 16;
constexpr const char* kIsa = "avx512";
Vec splat(float x) { return _mm512_set1_ps(x); }
Vec fma(Vec acc, Vec a, Vec b) { return _mm512_fmadd_ps(acc, a, b); }
float first_lane(Vec v) { return _mm512_cvtss_f32(v); }
#elif defined(__AVX2__) && defined(__FMA__)
using Vec = __m256;
constexpr int kLanes = 8;
constexpr const char* kIsa = "avx2+fma";
Vec splat(float x) { return _mm256_set1_ps(x); }
Vec fma(Vec acc, Vec a, Vec b) { return _mm256_fmadd_ps(acc, a, b); }
float first_lane(Vec v) { return _mm256_cvtss_f32(v); }
#else
using Vec = float;
constexpr int kLanes = 1;
constexpr const char* kIsa = "scalar";
Vec splat(float x) { return x; }
Vec fma(Vec acc, Vec a, Vec b) { return __builtin_fmaf(acc, a, b); }
float first_lane(Vec v) { return v; }
#endif

constexpr int kChains = 12;
constexpr long kIterations = 20'000'000;
constexpr int kTrials = 20;

// Runs kChains independent FMA chains for kIterations steps; returns a checksum.
float run_chains() {
  Vec acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = splat(1.0f + 0.001f * static_cast<float>(c));
  const Vec a = splat(0.999999f);
  const Vec b = splat(1e-7f);
  for (long i = 0; i < kIterations; ++i) {
    for (int c = 0; c < kChains; ++c) acc[c] = fma(acc[c], a, b);
  }
  float sum = 0;
  for (int c = 0; c < kChains; ++c) sum += first_lane(acc[c]);
  return sum;
}

// One trial: `threads` threads run the chains at once; returns the wall time in seconds.
double time_trial(int threads, float& checksum) {
  std::vector<float> sums(threads);
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&sums, t] { sums[t] = run_chains(); });
  }
  for (std::thread& worker : workers) worker.join();
  auto stop = std::chrono::steady_clock::now();
  for (float s : sums) checksum += s;
  return std::chrono::duration<double>(stop - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  if (threads < 1) {
    std::fprintf(stderr, "usage: fma_peak THREADS (1 or more)\n");
    return 2;
  }
  float checksum = 0;
  double best = 1e30;
  for (int trial = 0; trial < kTrials; ++trial) {
    best = std::min(best, time_trial(threads, checksum));
  }
  double flops = 2.0 * kLanes * kChains * static_cast<double>(kIterations) * threads;
  std::printf(
      "{\"isa\": \"%s\", \"lanes\": %d, \"chains\": %d, \"threads\": %d, \"gflops\": %.2f, "
      "\"checksum\": %.3f}\n",
      kIsa, kLanes, kChains, threads, flops / best / 1e9, checksum);
  return 0;
}
