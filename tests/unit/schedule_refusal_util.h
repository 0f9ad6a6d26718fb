// Helpers of the refusal tests (schedule_refusal_inline_test.cpp,
// schedule_refusal_move_test.cpp): one small kernel per named precondition of the block
// primitives (src/schedule/preconditions.h and the checks of each primitive's file), and
// the exact message the primitive gives when it refuses it. Course module 4.
#pragma once

#include "schedule_test_util.h"

#include "minic/schedule/primitives.h"

#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

namespace minic::schedule::test {

// One refusal: the check that refuses, the kernel, the block (and loop, by the name of
// its variable, or empty) the primitive is applied to, and the whole message.
struct RefusalCase {
  const char* check;
  std::string kernel;
  const char* block;
  const char* loop;
  const char* message;
};

using BlockPrimitive = std::function<void(loop::PrimFunc&, const std::string&, const loop::Expr&)>;

// Applies `primitive` to each case's kernel; it must refuse with exactly the case's
// message and leave the kernel unchanged.
inline void check_refusals(const std::vector<RefusalCase>& cases, const BlockPrimitive& primitive) {
  for (const RefusalCase& c : cases) {
    INFO("check " << c.check << " on\n" << c.kernel);
    loop::PrimFunc func = parse_func(c.kernel);
    loop::Expr loop = std::string(c.loop).empty() ? loop::Expr() : loop_named(func, c.loop);
    std::string message = refusal(func, [&](loop::PrimFunc& f) { primitive(f, c.block, loop); });
    CHECK(message == c.message);
  }
}

}  // namespace minic::schedule::test
