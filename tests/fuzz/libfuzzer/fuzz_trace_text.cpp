// libFuzzer target: the schedule trace text parser (include/minic/schedule/trace.h), and
// the replay of what it parses. Course module 2 (the chapter of the fuzzers); traces are
// module 4.
//
// Parses the bytes as a trace. A trace that parses must round-trip: print it, parse the
// print (which must not fail), and get the same instructions and the same print. Then it
// is replayed on a fixed kernel (kKernel: a producer, a matmul with a reduction and a
// consumer, so that every primitive has something to apply to), as `minic schedule
// FILE.mloop --trace FILE.trace` does. A TraceError is the refusal trace.h names for a
// trace that does not parse or apply; any other exception, minic::Error included, is a
// finding (a primitive that fails otherwise has a bug). The scheduled function must then
// verify.
//
// Chapter: docs/module2-graph-ir.md#libfuzzer-targets-every-parser-under-the-sanitizers
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_target.h"
#include "minic/ir/loop/parser.h"
#include "minic/ir/loop/verifier.h"
#include "minic/schedule/schedule.h"
#include "minic/schedule/trace.h"

namespace {

constexpr const char* kTarget = "trace_text";

constexpr const char* kKernel = R"(
func @fuzz_kernel(A: f32[16,8], W: f32[8,12], D: f32[16,12]) {
  alloc T: f32[16,8] {
    alloc C: f32[16,12] {
      for i in 0..16 {
        for k in 0..8 {
          block T(vi = spatial(16) i, vk = spatial(8) k) {
            reads(A[vi, vk]) writes(T[vi, vk])
            T[vi, vk] = A[vi, vk] * 2.0
          }
        }
      }
      for i in 0..16 {
        for j in 0..12 {
          for k in 0..8 {
            block C(vi = spatial(16) i, vj = spatial(12) j, vk = reduce(8) k) {
              reads(T[vi, vk], W[vk, vj], C[vi, vj]) writes(C[vi, vj])
              init { C[vi, vj] = 0.0 }
              C[vi, vj] = C[vi, vj] + T[vi, vk] * W[vk, vj]
            }
          }
        }
      }
      for i in 0..16 {
        for j in 0..12 {
          block D(vi = spatial(16) i, vj = spatial(12) j) {
            reads(C[vi, vj]) writes(D[vi, vj])
            D[vi, vj] = C[vi, vj] + 1.0
          }
        }
      }
    }
  }
}
)";

const minic::loop::PrimFunc& kernel() {
  static const minic::loop::PrimFunc func =
      minic::loop::parse_loop_module(kKernel, "<fuzz kernel>").functions.at(0);
  return func;
}

void require_trace_round_trip(const minic::schedule::Trace& trace) {
  using namespace minic;
  const std::string printed = schedule::print_trace(trace);
  schedule::Trace again = fuzz::must_succeed(kTarget, "the printed trace does not parse back",
                                             [&] { return schedule::parse_trace(printed); });
  const std::string printed_again = schedule::print_trace(again);
  if (!(again == trace) || printed_again != printed) {
    fuzz::finding(kTarget, "parse(print(trace)) differs from trace",
                  "first print:\n" + printed + "\nsecond print:\n" + printed_again);
  }
}

void replay_on_kernel(const minic::schedule::Trace& trace) {
  using namespace minic;
  schedule::Schedule sched(kernel());
  try {
    sched.replay(trace);
  } catch (const schedule::TraceError&) {
    return;  // the trace does not apply to this kernel: a refusal
  } catch (const std::exception& error) {
    fuzz::finding(kTarget, "replay threw something other than TraceError", error.what());
  }
  fuzz::must_succeed(kTarget, "the scheduled function does not verify", [&] {
    loop::verify_func(sched.func());
    return 0;
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace minic;
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::run_guarded(kTarget, text, [&] {
    schedule::Trace trace = schedule::parse_trace(text, "<fuzz>");
    require_trace_round_trip(trace);
    replay_on_kernel(trace);
  });
  return 0;
}
