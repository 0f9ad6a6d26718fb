// Repeated runs and their latency statistics (include/minic/runtime/latency.h).
// Course module 1.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#include "minic/runtime/latency.h"

#include "minic/support/error.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <numeric>
#include <string>

namespace minic::runtime {

double percentile(const std::vector<double>& sorted, double p) {
  MINIC_CHECK(!sorted.empty());
  double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  size_t below = static_cast<size_t>(std::floor(rank));
  size_t above = std::min(below + 1, sorted.size() - 1);
  double fraction = rank - static_cast<double>(below);
  return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

LatencyStats summarize_latencies(std::vector<double> samples) {
  MINIC_CHECK(!samples.empty());
  std::sort(samples.begin(), samples.end());
  LatencyStats stats;
  stats.median = percentile(samples, 50);
  stats.mean = std::accumulate(samples.begin(), samples.end(), 0.0) /
               static_cast<double>(samples.size());
  stats.min = samples.front();
  stats.max = samples.back();
  stats.p90 = percentile(samples, 90);
  stats.p99 = percentile(samples, 99);
  return stats;
}

std::vector<double> time_runs(const std::function<void()>& run, int warmup, int repeat) {
  for (int i = 0; i < warmup; ++i) run();
  std::vector<double> samples;
  for (int i = 0; i < repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    run();
    std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    samples.push_back(took.count());
  }
  return samples;
}

// Linux's VmHWM line of /proc/self/status is read first: getrusage's ru_maxrss carries
// over the peak of the process that started this one (exec keeps the larger of the two),
// so a minic started by a big Python harness would report the harness's memory.
// getrusage is the fallback where /proc is missing.
double peak_rss_mb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("VmHWM:")) return std::stod(line.substr(6)) / 1024.0;  // in kB
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

}  // namespace minic::runtime
