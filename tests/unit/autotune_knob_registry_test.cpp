// A knob registered from outside the autotuner (MINIC_REGISTER_KNOB, knob_registry.h) joins
// the search space of the blocks it is offered, after their rule. Course module 5.
#include "minic/autotune/knob_registry.h"
#include "minic/autotune/search_space.h"

#include "schedule_kernels.h"
#include "schedule_test_util.h"
#include "target_test_util.h"
#include "minic/schedule/primitives.h"
#include "minic/schedule/rules.h"
#include "minic/schedule/schedule.h"
#include "minic/support/error.h"

#include <catch2/catch.hpp>

using namespace minic;
using namespace minic::autotune;
using schedule::test::parse_func;

namespace {

// A knob only for blocks named "probe" (so the other tests' spaces do not change): unroll
// the block's innermost loop (1) or not (0).
std::vector<std::vector<int64_t>> offer_probe(schedule::Schedule sch, const std::string& block,
                                              const Target&) {
  if (block != "probe") return {};
  return {{0}, {1}};
}
void apply_probe(schedule::Schedule& sch, const std::string& block,
                 const std::vector<int64_t>& value, const Target&) {
  if (value.at(0) == 1) sch.unroll(sch.get_loops(sch.get_block(block)).back());
}
MINIC_REGISTER_KNOB("probe_unroll", offer_probe, apply_probe, "a test's knob");

const char* const kProbe = R"(func @probe(A: f32[6,5], B: f32[6,5]) {
  for i in 0..6 {
    for j in 0..5 {
      block probe(vi = spatial(6) i, vj = spatial(5) j) {
        reads(A[vi, vj]) writes(B[vi, vj])
        B[vi, vj] = A[vi, vj] * 3.0
      }
    }
  }
}
)";

}  // namespace

TEST_CASE("a registered knob joins the space of the blocks it is offered", "[autotune_space]") {
  SearchSpace space(parse_func(kProbe), testing::avx512());
  std::vector<std::string> names;
  for (const Knob& knob : space.knobs()) names.push_back(knob.name);
  CHECK(names ==
        std::vector<std::string>{"probe.vector", "probe.parallel", "probe.probe_unroll"});
  // Its default changes nothing: the default point is still the default schedule.
  CHECK(space.default_point().at("probe.probe_unroll") == std::vector<int64_t>{0});
  CHECK(schedule::print_trace(space.trace_of(space.default_point())) ==
        schedule::print_trace(schedule::default_cpu_trace(space.func(), testing::avx512())));
  CHECK(loop::print_func(space.apply(space.default_point())) ==
        loop::print_func(schedule::default_cpu_schedule(space.func(), testing::avx512())));
  // Its other value is applied after the block's rule (its short rows fused first).
  Decisions point = space.default_point();
  point["probe.probe_unroll"] = {1};
  const std::string by_default = schedule::print_trace(space.trace_of(space.default_point()));
  const std::string trace = schedule::print_trace(space.trace_of(point));
  CHECK_THAT(trace, Catch::StartsWith(by_default) && Catch::EndsWith("unroll(i_j_fused_1_1)\n"));
  CHECK_THAT(by_default, !Catch::Contains("unroll("));
  // Blocks with another name have no such knob.
  SearchSpace other(parse_func(schedule::test::kElementwiseKernel), testing::avx512());
  for (const Knob& knob : other.knobs()) CHECK_FALSE(knob.name.ends_with(".probe_unroll"));
  // A name taken already is a bug of whoever registers it.
  CHECK_THROWS_AS(RegisterKnob({"probe_unroll", "", offer_probe, apply_probe}), InternalError);
}
