// The GPU reduction rule: a thread block per output, its threads sharing the reduction.
//
// Course module 6. One thread per output runs a whole reduction alone: for softmax's
// row maximum and sum, a LayerNorm's mean and variance, a ReduceMean over a long axis,
// that is a few outputs' worth of threads, each reading a long row serially. Here each
// output gets a thread block of T threads (256, or the largest power of two up to the
// reduction's length, at least 32):
//
//   1. the reduction loops fused into one and split by T (k = k.0 * T + k.1);
//   2. rfactor over k.1 into a shared buffer: block S_rf, where thread k.1 of the block
//      reduces every T-th element into its partial S_rf[k.1], and block S, which reduces
//      the T partials;
//   3. S_rf's spatial loops (the outputs) fused and bound to blockIdx.x, k.1 moved out of
//      k.0 and bound to threadIdx.x: neighbouring threads read neighbouring elements;
//   4. S moved under the output's thread block (reverse_compute_at), its loop over the
//      partials split by 1 and the loop of one iteration bound to threadIdx.x: thread 0
//      sums the partials, after the barrier that ends the partials' thread nest.
//
// The rule takes a reduction (not a multiply-accumulate: those have the GEMM and
// convolution rules) of at least 64 elements per output, whose loops are not mixed.
//
// Chapter: docs/module6-cuda.md#reductions-across-threads
#include "gpu_rules.h"

#include "minic/schedule/block_roles.h"
#include "minic/schedule/primitives.h"
#include "minic/support/error.h"

#include <algorithm>

namespace minic::schedule {
namespace {

constexpr int64_t kMaxThreads = 256;
constexpr int64_t kMinThreads = 32;     // a warp
constexpr int64_t kMinReduction = 64;  // shorter reductions stay in one thread

}  // namespace

void schedule_gpu_reduction(Schedule& sch, const BlockRef& block_ref, const LoopRoles& roles) {
  if (roles.spatial.empty() || roles.reduce.empty()) fail("not a reduction with outputs");
  int64_t length = product(sch, roles.reduce);
  if (length < kMinReduction) fail("a reduction of {} elements stays in one thread", length);
  int64_t threads = kMaxThreads;
  while (threads > kMinThreads && threads > length) threads /= 2;

  // 1. One reduction loop, split by the threads.
  std::vector<LoopRef> order = roles.spatial;
  order.insert(order.end(), roles.reduce.begin(), roles.reduce.end());
  sch.reorder(order);
  LoopRef k = roles.reduce.size() == 1 ? roles.reduce[0] : sch.fuse(roles.reduce);
  std::vector<LoopRef> k_parts = sch.split(k, {-1, threads});

  // 2. The threads' partials in shared memory.
  sch.rfactor(block_ref, k_parts[1], "shared");

  // 3. A thread block per output; neighbouring threads, neighbouring elements.
  std::vector<LoopRef> outputs_order = roles.spatial;
  outputs_order.push_back(k_parts[1]);
  outputs_order.push_back(k_parts[0]);
  sch.reorder(outputs_order);
  LoopRef outputs = roles.spatial.size() == 1 ? roles.spatial[0] : sch.fuse(roles.spatial);
  sch.bind(outputs, "blockIdx.x");
  sch.bind(k_parts[1], "threadIdx.x");

  // 4. Thread 0 sums the partials.
  sch.reverse_compute_at(block_ref, outputs);
  std::vector<LoopRef> sum = loops_below(sch, block_ref, outputs);
  if (sum.size() != 1) fail("the sum of the partials is not one loop");
  std::vector<LoopRef> one = sch.split(sum[0], {1, -1});
  sch.bind(one[0], "threadIdx.x");
}

}  // namespace minic::schedule
