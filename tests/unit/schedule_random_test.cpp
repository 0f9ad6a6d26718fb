// The randomised differential test of the loop primitives: random sequences of split,
// reorder, fuse, vectorize, unroll and parallel on hand-written kernels (GEMM, conv2d,
// row sum, softmax, elementwise chain); every scheduled kernel must compute what the
// unscheduled one does. Course module 4.
//
// Arguments are drawn from what the kernel offers (a block's loops, runs of consecutive
// loops, factors that do or do not divide the extent), so most primitives apply and some
// are refused; a refused primitive must leave the kernel exactly as it was. Seeds are
// fixed: the same schedules run every time.
#include "minic/schedule/primitives.h"

#include "schedule_kernels.h"
#include "schedule_test_util.h"
#include "minic/ir/loop/analysis.h"

#include <algorithm>

using namespace minic;
using namespace minic::schedule;
using namespace minic::schedule::test;

namespace {

constexpr int kSchedulesPerKernel = 50;

struct Tally {
  int applied = 0;
  int refused = 0;
};

size_t pick(std::mt19937& rng, size_t count) {
  return std::uniform_int_distribution<size_t>(0, count - 1)(rng);
}

// Two or three factors from small sizes, usually one of them -1.
std::vector<int64_t> random_factors(std::mt19937& rng) {
  static const int64_t kSizes[] = {1, 2, 3, 4, 5, 8, 16};
  std::vector<int64_t> factors(pick(rng, 4) == 0 ? 3 : 2);
  for (int64_t& factor : factors) factor = kSizes[pick(rng, std::size(kSizes))];
  if (pick(rng, 5) != 0) factors[pick(rng, factors.size())] = -1;
  return factors;
}

// A run of 2 or 3 consecutive loops of `loops` (all of them if fewer).
std::vector<loop::Expr> random_run(std::mt19937& rng, const std::vector<loop::Expr>& loops) {
  size_t length = std::min(loops.size(), 2 + pick(rng, 2));
  size_t first = pick(rng, loops.size() - length + 1);
  return {loops.begin() + static_cast<long>(first),
          loops.begin() + static_cast<long>(first + length)};
}

// The loops that feed no reduction variable of the block: vectorize and parallel apply
// to them (when their iterations are independent).
std::vector<loop::Expr> spatial_loops(const loop::PrimFunc& func, const std::string& block) {
  std::vector<loop::Expr> loops;
  for (const loop::Expr& loop : get_loops(func, block)) {
    bool feeds_reduction = false;
    for (const loop::IterVar& iter : get_block(func, block).iter_vars) {
      bool uses = loop::uses_var(iter.binding, loop.as<loop::Var>());
      feeds_reduction = feeds_reduction || (uses && iter.kind == loop::IterKind::reduce);
    }
    if (!feeds_reduction) loops.push_back(loop);
  }
  return loops;
}

loop::MemoryScope random_scope(std::mt19937& rng) {
  return pick(rng, 2) == 0 ? loop::MemoryScope::local : loop::MemoryScope::global;
}

// Applies one random block primitive: computing a block inline or at a loop of another
// block, caching a buffer, splitting out an init.
void apply_block_primitive(loop::PrimFunc& func, std::mt19937& rng, const std::string& block) {
  std::vector<std::string> blocks = get_block_names(func);
  const std::string& other = blocks[pick(rng, blocks.size())];
  std::vector<loop::Expr> other_loops = get_loops(func, other);
  std::vector<loop::Expr> own_loops = get_loops(func, block);
  switch (pick(rng, 7)) {
    case 0:
      compute_inline(func, block);
      break;
    case 1:
      reverse_compute_inline(func, block);
      break;
    case 2:
      cache_read(func, block, 0, random_scope(rng));
      break;
    case 3:
      cache_write(func, block, 0, random_scope(rng));
      break;
    case 4:
      decompose_reduction(func, block, own_loops[pick(rng, own_loops.size())]);
      break;
    case 5:
      compute_at(func, block, other_loops[pick(rng, other_loops.size())]);
      break;
    default:
      reverse_compute_at(func, block, other_loops[pick(rng, other_loops.size())]);
      break;
  }
}

// Applies one random loop primitive to a random block's loops. A refusal must leave the
// function unchanged.
void apply_random_primitive(loop::PrimFunc& func, std::mt19937& rng, bool with_blocks,
                            Tally& tally) {
  std::vector<std::string> blocks = get_block_names(func);
  const std::string& block = blocks[pick(rng, blocks.size())];
  std::vector<loop::Expr> loops = get_loops(func, block);
  loop::Expr any_loop = loops[pick(rng, loops.size())];
  // Mostly a loop that feeds no reduction, for vectorize and parallel.
  std::vector<loop::Expr> spatial = spatial_loops(func, block);
  loop::Expr spatial_loop = spatial.empty() || pick(rng, 4) == 0
                                ? any_loop
                                : spatial[pick(rng, spatial.size())];
  std::string before = loop::print_func(func);
  try {
    switch (pick(rng, with_blocks ? 8 : 6)) {
      case 0:
        split(func, any_loop, random_factors(rng));
        break;
      case 1: {
        std::vector<loop::Expr> run = random_run(rng, loops);
        std::shuffle(run.begin(), run.end(), rng);
        reorder(func, run);
        break;
      }
      case 2:
        fuse(func, random_run(rng, loops));
        break;
      case 3:
        vectorize(func, spatial_loop);
        break;
      case 4:
        unroll(func, any_loop);
        break;
      case 5:
        parallel(func, spatial_loop);
        break;
      default:
        apply_block_primitive(func, rng, block);
        break;
    }
    ++tally.applied;
  } catch (const Error& error) {
    INFO(error.what());
    REQUIRE(loop::print_func(func) == before);
    ++tally.refused;
  }
}

// Runs kSchedulesPerKernel random schedules on every kernel of kScheduleKernels.
void check_random_schedules(bool with_blocks) {
  for (size_t kernel = 0; kernel < kScheduleKernels.size(); ++kernel) {
    const ScheduleKernel& spec = kScheduleKernels[kernel];
    INFO("kernel " << spec.name);
    loop::PrimFunc original = parse_func(spec.text);
    std::vector<Tensor> arguments = random_arguments(original, 11);
    std::vector<Tensor> expected = run_on(original, arguments);
    Tally tally;
    for (int schedule = 0; schedule < kSchedulesPerKernel; ++schedule) {
      std::mt19937 rng(static_cast<uint32_t>(1000 * kernel + schedule + (with_blocks ? 500 : 0)));
      loop::PrimFunc func = original;
      size_t steps = 2 + pick(rng, 5);
      for (size_t step = 0; step < steps; ++step) {
        apply_random_primitive(func, rng, with_blocks, tally);
      }
      std::string text = loop::print_func(func);
      INFO("schedule " << schedule << ":\n" << text);
      CHECK(loop::print_func(parse_func(text)) == text);
      CHECK(same_results(run_on(func, arguments), expected, spec.exact));
    }
    // Most primitives apply (the test exercises them) and some are refused.
    CHECK(tally.applied > tally.refused);
    CHECK(tally.refused > 0);
  }
}

}  // namespace

TEST_CASE("random loop schedules compute what the unscheduled kernels do", "[schedule]") {
  check_random_schedules(false);
}

TEST_CASE("random schedules with block primitives compute the same too", "[schedule]") {
  check_random_schedules(true);
}
