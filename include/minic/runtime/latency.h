// Timing a model: repeated runs and the statistics of their latencies. Course module 1.
//
// `minic bench` (tools/minic/bench.cpp) and the Python API's `bench()` (python/) time a
// model the same way: `warmup` untimed runs, then `repeat` runs timed one by one with a
// monotonic clock, summarised as the median, mean, min, max, p90 and p99.
//
// Why these statistics: run times on a shared machine have a long upper tail (other
// processes, page faults, frequency changes), so the median and the min say more about
// the code than the mean does; p90/p99 show how long the tail is. Percentiles interpolate
// linearly between the sorted samples (numpy's default), so p50 equals the median.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#pragma once

#include <functional>
#include <vector>

namespace minic::runtime {

struct LatencyStats {
  double median = 0, mean = 0, min = 0, max = 0, p90 = 0, p99 = 0;  // milliseconds
};

// The p-th percentile (0..100) of sorted samples, interpolated linearly between ranks.
double percentile(const std::vector<double>& sorted, double p);

// The statistics of `samples` (milliseconds, in any order; at least one).
LatencyStats summarize_latencies(std::vector<double> samples);

// Calls `run` `warmup` times untimed, then `repeat` times, timing each call alone; returns
// the milliseconds of the timed calls.
std::vector<double> time_runs(const std::function<void()>& run, int warmup, int repeat);

// The most memory this process has held in RAM so far, in MiB.
double peak_rss_mb();

}  // namespace minic::runtime
