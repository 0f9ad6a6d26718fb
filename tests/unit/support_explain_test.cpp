// Tests of explain notes (include/minic/support/explain.h, course module 1): nothing is
// kept without a Recorder; a Recorder collects the notes of its thread in order; Recorders
// nest, the innermost collecting; take() empties it.
#include "minic/support/explain.h"

#include <catch2/catch.hpp>

#include <thread>

using namespace minic;

TEST_CASE("explain notes are kept only while a Recorder lives, by the innermost") {
  CHECK_FALSE(explain::recording());
  explain::note("lost {}", 1);  // no Recorder: dropped
  explain::Recorder outer;
  CHECK(explain::recording());
  explain::note("block {}: the {} rule", "C", "GEMM");
  {
    explain::Recorder inner;
    explain::note("inner");
    CHECK(inner.take() == std::vector<std::string>{"inner"});
    CHECK(inner.take().empty());
  }
  explain::note("after");
  // Another thread has no Recorder: its notes are not this thread's.
  std::thread([] { explain::note("elsewhere"); }).join();
  CHECK(outer.take() == std::vector<std::string>{"block C: the GEMM rule", "after"});
}
